/**
 * `initiate` with a journal: the record is written before anything is sent, a `referenceId` already in the
 * journal reconciles instead of pushing again, and every outcome is written back, each change through the
 * payment state machine (`src/journal/state-machine.ts`).
 *
 * The rule that keeps a payment from being sent twice: every attempt first writes the record (`initiating`,
 * with the window in which it can still reach the service) as a compare-and-set on the version this call
 * last wrote, and the attempt never leaves, nor lasts, past that window. So a record can be closed as
 * `not-sent`, or sent again by another call, only once the journal's clock says every attempt's window has
 * passed and the record is unchanged since.
 *
 * @module
 */
import {
  ApiError,
  ConfigurationError,
  ConnectionError,
  JournalError,
  RateLimitError,
  RequestValidationError,
  UnknownOutcomeError,
} from '../core/errors.js';
import { monotonicNow } from '../core/monotonic.js';
import { maskPhoneNumber } from '../core/redact.js';
import { isUnknownOutcome } from '../core/retry.js';
import { type FingerprintedPayment, paymentFingerprint } from '../journal/fingerprint.js';
import {
  DEFAULT_NOT_FOUND_GRACE_MS,
  isDeploymentKnown,
  isOpenPaymentState,
  type NewPaymentRecord,
  type PaymentDeployment,
  type PaymentRecord,
  sendWindowOf,
} from '../journal/journal.js';
import type { PaymentObservation } from '../journal/state-machine.js';
import { type JournalBinding, paymentError } from './journal-binding.js';
import { requestIdOf, withRequestId } from './request-id.js';
import { type RebuiltCreate, type ResendRule, rebuildCreate, rememberedUntil } from './resend.js';
import type { CollectionStatus, InitiatedCollection } from './schemas.js';

/** The reconcile inside `initiate` waits the default grace beyond the last sender's window before sending again. */
export const NOT_FOUND_GRACE_MS = DEFAULT_NOT_FOUND_GRACE_MS;

/** Who the history names for writes of `initiate`. */
const BY = 'initiate';

/** What the journaled flow needs from the client. */
export interface JournaledSend<Result extends InitiatedCollection> {
  /** The payment, `phoneNumber` in international form, `referenceId` lower case. */
  readonly payment: FingerprintedPayment;
  /**
   * How long after an attempt's journal write it (and the attempts after it) can still reach the service:
   * every attempt's time limit plus the backoff between them.
   */
  readonly sendWindowMs: number;
  /**
   * The create with its retries and reconciling. Calls `beforeAttempt` before each attempt it sends; the
   * attempt must not leave, nor last, past the deadline it resolves with (this process's monotonic clock,
   * `monotonicNow()`: a step of the wall clock never carries an attempt past its window).
   */
  readonly send: (beforeAttempt: () => Promise<number>) => Promise<Result>;
  /** One status check by reference (with retries): the status, or `undefined` on 404. */
  readonly check: () => Promise<CollectionStatus | undefined>;
  /** The client's per-attempt time limit: an attempt's deadline is this long after its journal write. */
  readonly attemptTimeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** The customer's number as sent, sealed for a resend (`duplicateReferences: 'refused'`); absent otherwise. */
  readonly sealedPhoneNumber?: string | undefined;
  /** Set when the service refuses duplicate references: an open record is resent rather than waited out. */
  readonly resend?: RecordResender | undefined;
}

/** What resending a record's create needs from the client (`duplicateReferences: 'refused'`). */
export interface RecordResender {
  /** When a record may be resent here, and how its create is rebuilt. */
  readonly rule: ResendRule;
  /** See {@link JournaledSend.sendWindowMs}. */
  readonly sendWindowMs: number;
  /** See {@link JournaledSend.attemptTimeoutMs}. */
  readonly attemptTimeoutMs: number;
  /**
   * The rebuilt create, sent as a resend (its first attempt already follows one whose outcome is unknown); none of its
   * attempts leaves past `rememberedUntil` (this process's monotonic clock: see `rememberedUntil` in resend.ts).
   */
  readonly send: (body: RebuiltCreate, beforeAttempt: () => Promise<number>, rememberedUntil: number) => Promise<InitiatedCollection>;
}

/** What {@link resendRecord} did, when it sent. */
export interface Resent {
  /** The service's answer read as `initiate` resolves (absent when this writer lost the race to another). */
  readonly result?: InitiatedCollection;
  /** The record afterwards. */
  readonly record: PaymentRecord | undefined;
}

/**
 * Sends an open record's create again, for a service that refuses duplicate references: takes the record over (a
 * compare-and-set on the version read, `initiating` with this client's window), sends the create rebuilt from the
 * record (see `rebuildCreate`), and records the answer: 202 or a duplicate answer → `pending`; a definite refusal →
 * `rejected`; unknown again → `unknown`. `undefined` when the record may not be resent here (it is then judged by the
 * `'unknown'` rule). Rejects as `initiate` does when the answer is not `pending` (the record written first).
 * `onTaken` is called once this writer has taken the record over (whatever the answer then).
 */
export async function resendRecord(
  binding: JournalBinding,
  resender: RecordResender,
  record: PaymentRecord,
  by: string,
  onTaken?: () => void,
): Promise<Resent | undefined> {
  const { referenceId } = record;
  const readAt = monotonicNow();
  const now = await binding.use('read the clock', referenceId, (journal) => journal.now());
  const body = await rebuildCreate(record, resender.rule, now);
  if (body === undefined) return undefined;
  const until = rememberedUntil(record, resender.rule, now, readAt);
  // Earlier writers' pushes may still be on their way (a resend does not wait for their window to pass): the window
  // this write states must still cover theirs, so the `'unknown'` rule stays true for every reader after it.
  const sendWindowMs = Math.max(resender.sendWindowMs, sendWindowOf(record));
  const issuedAt = monotonicNow();
  const taken = await binding.observe(referenceId, await sending(binding, record, sendWindowMs), by, record);
  // Another writer moved it first: the caller decides again from what it did.
  if (!taken.applied || taken.record === undefined) return { record: taken.record };
  onTaken?.();
  binding.logger.info(`resending the create of referenceId ${referenceId}: the service refuses duplicates, so its answer decides`);
  const result = await sendAndRecord(
    binding,
    { ...resender, sendWindowMs, send: (beforeAttempt) => resender.send(body, beforeAttempt, until) },
    taken.record,
    issuedAt,
    by,
    true,
  );
  return { result, record: await binding.use('read the payment', referenceId, (journal) => journal.get(referenceId)) };
}

/** Runs `initiate` for a client with a journal. */
export async function initiateWithJournal<Result extends InitiatedCollection>(
  binding: JournalBinding,
  call: JournaledSend<Result>,
): Promise<Result | InitiatedCollection> {
  const { referenceId } = call.payment;
  // A second call for the same reference in this process waits for the first, then reconciles with its record.
  const earlier = binding.inFlight.get(referenceId);
  const run = (async () => {
    if (earlier !== undefined) await earlier.catch(() => undefined);
    return initiateOnce(binding, call);
  })();
  binding.inFlight.set(referenceId, run);
  try {
    return await run;
  } finally {
    if (binding.inFlight.get(referenceId) === run) binding.inFlight.delete(referenceId);
  }
}

async function initiateOnce<Result extends InitiatedCollection>(
  binding: JournalBinding,
  call: JournaledSend<Result>,
): Promise<Result | InitiatedCollection> {
  const { payment } = call;
  // Where the push goes, written before anything is sent. The account is the key's identity unless named: a key that
  // cannot be read now (a slow vault) leaves the account unread, and the attempt reads it and writes it before it
  // leaves, or fails, sending nothing (see sendAndRecord). The record always names its base URL.
  const deployment = await binding.deployment.current().catch(() => binding.deployment.unread());
  const record: NewPaymentRecord = {
    referenceId: payment.referenceId,
    state: 'initiating',
    productId: payment.productId,
    amount: payment.amount,
    currency: payment.currency,
    phoneNumber: maskPhoneNumber(payment.phoneNumber),
    ...(payment.narration === undefined ? {} : { narration: binding.scrubText(payment.narration) }),
    fingerprint: await paymentFingerprint(payment),
    sendWindowMs: call.sendWindowMs,
    deployment,
    ...(call.sealedPhoneNumber === undefined ? {} : { sealedPhoneNumber: call.sealedPhoneNumber }),
  };
  // Read before the write is issued: the attempt's deadline counts from here, never from the acknowledgement, so a
  // pause between the write landing and this process hearing of it (GC, a suspended VM, a slow journal) can only
  // shorten the attempt, never carry it past the window readers measure from `updatedAt` (the write landing).
  const writeIssuedAt = monotonicNow();
  const inserted = await binding.use('write the payment before sending it (nothing was sent)', payment.referenceId, (journal) =>
    journal.insert(record),
  );
  if (inserted !== undefined) {
    binding.wrote(inserted);
    return sendAndRecord(binding, call, inserted, writeIssuedAt, BY);
  }
  const existing = await binding.use('read the payment (nothing was sent)', payment.referenceId, (journal) =>
    journal.get(payment.referenceId),
  );
  if (existing === undefined) {
    throw new JournalError(
      'Payment journal: refused the record as a duplicate, then did not find it (nothing was sent)',
      payment.referenceId,
      undefined,
    );
  }
  if (!isSamePayment(existing, record)) {
    throw new RequestValidationError([
      {
        path: 'referenceId',
        message: 'is already in the payment journal for a different payment (product, amount, number or narration differ)',
      },
    ]);
  }
  return reconcile(binding, call, existing);
}

/** The same payment: same product, amount, currency, narration, and number (its mask and the fingerprint). */
function isSamePayment(existing: PaymentRecord, wanted: NewPaymentRecord): boolean {
  return (
    existing.productId.toLowerCase() === wanted.productId.toLowerCase() &&
    existing.amount === wanted.amount &&
    existing.currency === wanted.currency &&
    (existing.narration ?? undefined) === (wanted.narration ?? undefined) &&
    existing.phoneNumber === wanted.phoneNumber &&
    existing.fingerprint === wanted.fingerprint
  );
}

/** What a record that the service holds (or held) resolves with. */
function accepted(record: PaymentRecord): InitiatedCollection {
  return { referenceId: record.referenceId, status: record.statusText ?? record.state };
}

/**
 * A payment already in the journal: resolve with what the service holds, or send only when the journal's
 * clock proves nothing of an earlier attempt can still arrive and the service does not hold it.
 */
async function reconcile<Result extends InitiatedCollection>(
  binding: JournalBinding,
  call: JournaledSend<Result>,
  existing: PaymentRecord,
): Promise<Result | InitiatedCollection> {
  const { referenceId } = existing;
  switch (existing.state) {
    case 'pending':
    case 'successful':
    case 'failed':
      return accepted(existing);
    case 'rejected':
    case 'not-sent':
      // Final states never reopen: the sale starts over under a new reference.
      throw new RequestValidationError([
        {
          path: 'referenceId',
          message: `is in the payment journal as ${existing.state}${existing.error ? ` (${existing.error.name})` : ''}: start the sale over with a new referenceId`,
        },
      ]);
  }
  // initiating or unknown, and not being sent by this process: an earlier process (or call) may have sent it. Only
  // the deployment it was pushed to can say whether it holds it; nothing is asked or sent elsewhere.
  let mismatch: Error | undefined;
  try {
    mismatch = await binding.deploymentMismatch(existing);
  } catch (error) {
    // The key could not be read to tell: the payment may be at the service, so its outcome is unknown to this call.
    if (call.signal?.aborted) throw error;
    throw new UnknownOutcomeError(referenceId, error, await latestDecidableAt(binding, [existing]), 'unreachable');
  }
  if (mismatch !== undefined) throw mismatch;
  const found = await checkOrUnknown(binding, call, existing);
  if (found !== undefined) {
    await binding.observeAfterSending(referenceId, binding.statusObservation(found), BY);
    return withRequestId({ referenceId, status: found.statusText }, requestIdOf(found));
  }
  // A service that refuses duplicates answers the same create at once: no wait for the window to pass.
  const resent = call.resend === undefined ? undefined : await resendRecord(binding, call.resend, existing, BY);
  if (resent?.result !== undefined) return resent.result;
  if (resent !== undefined) {
    if (resent.record === undefined) throw new UnknownOutcomeError(referenceId, undefined);
    return reconcile(binding, call, resent.record);
  }
  // Not at the service. Once the journal's clock proves no earlier attempt can still arrive, this call takes the
  // record over (a compare-and-set on the version it judged) and sends it; until then, sending could push twice.
  // The takeover's write happens inside the verdict: its attempt's deadline counts from before it (see initiateOnce).
  const takeoverIssuedAt = monotonicNow();
  const verdict = await binding.settleNotFound(
    referenceId,
    NOT_FOUND_GRACE_MS,
    async () => {
      const again = await checkOrUnknown(binding, call, existing);
      return again === undefined ? 'not-found' : binding.statusObservation(again);
    },
    BY,
    await sending(binding, existing, call.sendWindowMs),
  );
  if (verdict.applied && verdict.record?.state === 'initiating') {
    return sendAndRecord(binding, call, verdict.record, takeoverIssuedAt, BY);
  }
  const record = verdict.record ?? existing;
  if (!verdict.decidable || record.state === 'initiating' || record.state === 'unknown') {
    throw new UnknownOutcomeError(referenceId, undefined, verdict.decidableAt ?? record.decidableAt, 'not-found');
  }
  return reconcile(binding, call, record);
}

/**
 * The takeover of `record` to send it: with this client's deployment when the record does not say where its push
 * goes (its account was not read, or it is an earlier release's), so the takeover itself says it. A key that cannot be
 * read now leaves it out; the attempt then writes it or fails before anything leaves (see `sendAndRecord`).
 */
async function sending(
  binding: JournalBinding,
  record: PaymentRecord,
  sendWindowMs: number,
): Promise<Extract<PaymentObservation, { kind: 'sending' }>> {
  if (isDeploymentKnown(record.deployment)) return { kind: 'sending', sendWindowMs };
  return { kind: 'sending', sendWindowMs, deployment: await binding.deployment.current().catch(() => undefined) };
}

/**
 * Reads this client's deployment before an attempt leaves a record that does not say where its push goes. A key
 * that still cannot be read ends the attempt before anything is sent, with an error that proves it.
 */
async function deploymentBeforeSending(binding: JournalBinding): Promise<PaymentDeployment> {
  try {
    return await binding.deployment.current();
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError('The API key could not be read before the attempt; nothing was sent', { cause: error });
  }
}

/** The reconcile's status check; when it fails, the outcome is unknown from the record this call judged. */
async function checkOrUnknown(
  binding: JournalBinding,
  call: JournaledSend<InitiatedCollection>,
  judged: PaymentRecord,
): Promise<CollectionStatus | undefined> {
  try {
    return await call.check();
  } catch (error) {
    if (call.signal?.aborted) throw error;
    throw new UnknownOutcomeError(judged.referenceId, error, await latestDecidableAt(binding, [judged]), 'unreachable');
  }
}

/**
 * When a `not-sent` verdict becomes possible for the records this call last read or wrote: the latest of their
 * bounds (each the later of the journal's clock and this process's own watch, see `JournalBinding.decidableAt`), so
 * a till told to come back then is never told too early. Undefined only when no window is known (a record of the
 * previous release: no age proves it unsent) or every record is final.
 */
async function latestDecidableAt(binding: JournalBinding, records: readonly (PaymentRecord | undefined)[]): Promise<string | undefined> {
  let latest: string | undefined;
  for (const record of records) {
    if (record === undefined) continue;
    const at = await binding.decidableAt(record, NOT_FOUND_GRACE_MS);
    if (at !== undefined && (latest === undefined || Date.parse(at) > Date.parse(latest))) latest = at;
  }
  return latest;
}

/**
 * Sends (the record is `initiating`, written by this call) and records the outcome, as `by`. `earlierMayArrive`: the
 * record was taken over without waiting for its earlier writers' windows (a resend for a service that refuses
 * duplicates), so their pushes may still arrive: this call's own failure to send proves nothing of them.
 */
async function sendAndRecord<Result extends InitiatedCollection>(
  binding: JournalBinding,
  call: Pick<JournaledSend<Result>, 'send' | 'sendWindowMs' | 'attemptTimeoutMs'>,
  written: PaymentRecord,
  writeIssuedAt: number,
  by: string,
  earlierMayArrive = false,
): Promise<Result | InitiatedCollection> {
  const { referenceId } = written;
  /** The version this call wrote last: its conclusions apply to it only. */
  let own = written;
  let fresh = true;
  let attempts = 0;
  /** When the write of this call's last `initiating` version was issued (this process's monotonic clock). */
  let issuedAt = writeIssuedAt;
  const beforeAttempt = async (): Promise<number> => {
    attempts++;
    // No push leaves from a record that does not say where it went (its account not read, or an earlier release's):
    // answers from other deployments would move it. A key that still cannot be read fails here, sending nothing.
    const deployment = isDeploymentKnown(own.deployment) ? undefined : await deploymentBeforeSending(binding);
    if (!fresh || deployment !== undefined) {
      // A resend: write first (compare-and-set on this call's last write), so an attempt is never in flight
      // while the record looks untouched; stop if anyone wrote meanwhile.
      issuedAt = monotonicNow();
      const touched = await binding.observe(referenceId, { kind: 'sending', sendWindowMs: call.sendWindowMs, deployment }, by, own);
      if (!touched.applied || touched.record === undefined) throw new OvertakenError(referenceId, touched.record);
      own = touched.record;
    }
    fresh = false;
    // From the write's issue, not its acknowledgement: the attempt ends within the window its record states.
    return issuedAt + call.attemptTimeoutMs;
  };
  let result: Result;
  try {
    result = await call.send(beforeAttempt);
  } catch (error) {
    const overtaken = error instanceof OvertakenError ? error : undefined;
    if (overtaken !== undefined) {
      const record = overtaken.record;
      if (record !== undefined && (record.state === 'pending' || record.state === 'successful' || record.state === 'failed')) {
        return accepted(record);
      }
      throw new UnknownOutcomeError(
        referenceId,
        overtaken.cause ?? new JournalError(overtaken.message, referenceId, undefined),
        await latestDecidableAt(binding, [record, own]),
      );
    }
    const observed = failure(error, attempts);
    const earlierUnknown = earlierMayArrive && observed.kind === 'create-not-sent';
    const recorded = await binding.observeAfterSending(
      referenceId,
      earlierUnknown ? { kind: 'create-unknown', error: observed.error } : observed,
      by,
      own,
    );
    // "Nothing was created" speaks for this call's attempts only. When another writer took the record over meanwhile (a
    // resend for a service that refuses duplicates does not wait for this call's window), its push may be at the
    // service: answer from the record it left, as for an overtaken attempt.
    const theirs = recorded?.applied === false ? recorded.record : undefined;
    if (
      theirs !== undefined &&
      theirs.version !== own.version &&
      (observed.kind === 'create-not-sent' || observed.kind === 'create-refused')
    ) {
      if (theirs.state === 'pending' || theirs.state === 'successful' || theirs.state === 'failed') return accepted(theirs);
      if (isOpenPaymentState(theirs.state)) throw new UnknownOutcomeError(referenceId, error, await latestDecidableAt(binding, [theirs]));
    }
    // A journal failure after an attempt that may have created the collection: the honest answer is "unknown".
    // Unknown: the till learns from when a verdict is possible, from the records this call last wrote or read (the
    // record written now, or, when that write failed, this call's last write: an attempt left under it).
    if (
      earlierUnknown ||
      (error instanceof JournalError && attempts > 1) ||
      (error instanceof UnknownOutcomeError && error.decidableAt === undefined)
    ) {
      const cause = error instanceof UnknownOutcomeError ? error.cause : error;
      const seen = error instanceof UnknownOutcomeError ? error.seen : undefined;
      throw new UnknownOutcomeError(referenceId, cause, await latestDecidableAt(binding, [recorded?.record, own]), seen);
    }
    throw error;
  }
  // A 202 says pending; a create reconciled by a status check may already have found it settled.
  await binding.observeAfterSending(
    referenceId,
    binding.statusObservation({ referenceId, statusText: result.status }, requestIdOf(result)),
    by,
  );
  return result;
}

/** Another writer changed the record between this call's attempts: this call stops sending. */
class OvertakenError extends JournalError {
  readonly record: PaymentRecord | undefined;
  constructor(referenceId: string, record: PaymentRecord | undefined) {
    super(
      `Payment journal: the payment was written by another process meanwhile (now ${record?.state ?? 'absent'}); not resending`,
      referenceId,
      undefined,
    );
    this.record = record;
  }
}

/** The observation a failed create makes. */
function failure(error: unknown, attempts: number): PaymentObservation {
  const cause = paymentError(error);
  if (error instanceof UnknownOutcomeError) return { kind: 'create-unknown', error: cause };
  if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429)
    return { kind: 'create-refused', error: cause };
  // createOnce ends with such an error only when no attempt's outcome was ever unknown (otherwise it ends with the
  // record or UnknownOutcomeError), so an error that proves the last attempt created nothing proves it for all.
  if (attempts === 0 || provesNothingCreated(error)) return { kind: 'create-not-sent', error: cause };
  return { kind: 'create-unknown', error: cause };
}

function provesNothingCreated(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.requestMayHaveBeenSent;
  if (isUnknownOutcome(error)) return false;
  return error instanceof RateLimitError || error instanceof ConfigurationError;
}
