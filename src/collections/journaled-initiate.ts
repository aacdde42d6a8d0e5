/**
 * `initiate` with a journal: the record is written before anything is sent, a `referenceId` already in the
 * journal reconciles instead of pushing again, and every outcome is written back.
 *
 * The rule that keeps a payment from being lost: a push is sent only while its record is open, and each attempt
 * first writes the record (`initiating`, fresh `updatedAt`). So a record that `recover()` (here or in another
 * process) may close as `not-sent` is one that no attempt touched for `notFoundGraceMs` and that the service
 * does not hold.
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
import { maskPhoneNumber } from '../core/redact.js';
import { isUnknownOutcome } from '../core/retry.js';
import { sleep } from '../core/sleep.js';
import { type FingerprintedPayment, paymentFingerprint } from '../journal/fingerprint.js';
import { isOpenPaymentState, type PaymentRecord, type PaymentState } from '../journal/journal.js';
import { type JournalBinding, now, paymentError, statusChange } from './journal-binding.js';
import type { CollectionStatus, InitiatedCollection } from './schemas.js';

/** How long a record must be untouched before a 404 proves its push never arrived (the contract's 10 s). */
export const NOT_FOUND_GRACE_MS = 10_000;

/** What the journaled flow needs from the client. */
export interface JournaledSend<Result extends InitiatedCollection> {
  /** The payment, `phoneNumber` in international form. */
  readonly payment: FingerprintedPayment;
  /** The create with its retries and reconciling; calls `beforeAttempt` before each attempt it sends. */
  readonly send: (beforeAttempt: () => Promise<void>) => Promise<Result>;
  /** One status check by reference (with retries): the status, or `undefined` on 404. */
  readonly check: () => Promise<CollectionStatus | undefined>;
  readonly signal: AbortSignal | undefined;
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
  const fingerprint = await paymentFingerprint(payment);
  const createdAt = now();
  const record: PaymentRecord = {
    referenceId: payment.referenceId,
    state: 'initiating',
    productId: payment.productId,
    amount: payment.amount,
    currency: payment.currency,
    phoneNumber: maskPhoneNumber(payment.phoneNumber),
    ...(payment.narration === undefined ? {} : { narration: payment.narration }),
    fingerprint,
    createdAt,
    updatedAt: createdAt,
  };
  const inserted = await binding.use('write the payment before sending it (nothing was sent)', payment.referenceId, (journal) =>
    journal.insert(record),
  );
  if (inserted) return sendAndRecord(binding, call);
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
function isSamePayment(existing: PaymentRecord, wanted: PaymentRecord): boolean {
  return (
    existing.productId.toLowerCase() === wanted.productId.toLowerCase() &&
    existing.amount === wanted.amount &&
    existing.currency === wanted.currency &&
    (existing.narration ?? undefined) === (wanted.narration ?? undefined) &&
    existing.phoneNumber === wanted.phoneNumber &&
    existing.fingerprint === wanted.fingerprint
  );
}

/** A payment already in the journal: resolve with what the service holds, or send only when it provably holds nothing. */
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
      return { referenceId, status: existing.statusText ?? existing.state };
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
  // initiating or unknown, and not being sent by this process: an earlier process (or call) may have sent it.
  let record = existing;
  for (;;) {
    let status: CollectionStatus | undefined;
    try {
      status = await call.check();
    } catch (error) {
      if (call.signal?.aborted) throw error;
      throw new UnknownOutcomeError(referenceId, error);
    }
    if (status !== undefined) {
      await binding.recordAfterSending(referenceId, statusChange(status));
      return { referenceId, status: status.statusText };
    }
    const waitMs = Date.parse(record.updatedAt) + NOT_FOUND_GRACE_MS - Date.now();
    if (waitMs <= 0) break;
    binding.logger.info(
      `referenceId ${referenceId} is in the journal but not at the service yet; checking again in ${waitMs} ms before sending`,
    );
    await sleep(waitMs, call.signal);
    const reread = await binding.use('read the payment (nothing was sent)', referenceId, (journal) => journal.get(referenceId));
    if (reread === undefined || !isOpenPaymentState(reread.state)) return reconcile(binding, call, reread ?? existing);
    record = reread;
  }
  // The service holds no collection for a record untouched for the grace period: the push never arrived. Send it.
  const touched = await binding.use('write the payment before sending it (nothing was sent)', referenceId, (journal) =>
    journal.update(referenceId, { state: 'initiating', updatedAt: now() }),
  );
  if (touched === undefined || !isOpenPaymentState(touched.state)) return reconcile(binding, call, touched ?? existing);
  return sendAndRecord(binding, call);
}

/** Sends (the record is `initiating` and provably not at the service) and records the outcome. */
async function sendAndRecord<Result extends InitiatedCollection>(binding: JournalBinding, call: JournaledSend<Result>): Promise<Result> {
  const { referenceId } = call.payment;
  let attempts = 0;
  const beforeAttempt = async () => {
    attempts++;
    if (attempts === 1) return;
    // A resend: write first, so the record is never both untouched and in flight; stop if it was closed meanwhile.
    const touched = await binding.use('write the payment before resending it', referenceId, (journal) =>
      journal.update(referenceId, { state: 'initiating', updatedAt: now() }),
    );
    if (touched !== undefined && !isOpenPaymentState(touched.state)) {
      throw new JournalError(
        `Payment journal: the payment was closed as ${touched.state} meanwhile; not resending`,
        referenceId,
        undefined,
      );
    }
  };
  let result: Result;
  try {
    result = await call.send(beforeAttempt);
  } catch (error) {
    const state = failedState(error, attempts);
    await binding.recordAfterSending(referenceId, { state, updatedAt: now(), error: paymentError(error) });
    // A journal failure after an attempt that may have created the collection: the honest answer is "unknown".
    if (error instanceof JournalError && attempts > 1) throw new UnknownOutcomeError(referenceId, error);
    throw error;
  }
  const change = statusChange({ referenceId, statusText: result.status });
  await binding.recordAfterSending(referenceId, change);
  return result;
}

/** The journal state after a create that failed. */
function failedState(error: unknown, attempts: number): PaymentState {
  if (error instanceof UnknownOutcomeError) return 'unknown';
  if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429)
    return 'rejected';
  // No attempt left, or only one and it provably created nothing: safe to start over. Several attempts: recover() decides.
  if (attempts === 0 || (attempts === 1 && provesNothingCreated(error))) return 'not-sent';
  return 'unknown';
}

function provesNothingCreated(error: unknown): boolean {
  if (error instanceof ConnectionError) return !error.requestMayHaveBeenSent;
  if (isUnknownOutcome(error)) return false;
  return error instanceof RateLimitError || error instanceof ConfigurationError;
}
