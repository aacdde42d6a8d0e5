/**
 * The payment state machine: the one place that decides how a journal record moves, used by every writer
 * (`initiate`, `checkStatus`, `pollUntilSettled`, `recover()`, the settlement worker).
 *
 * Two kinds of knowledge move a record:
 * - **facts about the service** (a 202, a status answer): true whatever else happened, so they apply to the
 *   record as it is now; a writer that loses the compare-and-set reads again and decides again;
 * - **conclusions from one writer's own view** (this call is about to send; this call's create ended so;
 *   the service does not hold the payment): true only of the record as that writer read it, so they apply
 *   only to that version. A lost compare-and-set means someone acted since: the conclusion is dropped.
 *
 * `not-sent` needs proof that nothing can still arrive: a 404 asked for only once the record's age, measured
 * twice, passes the last sender's window plus the reader's grace: by the journal's own clock, and by the deciding
 * process's monotonic clock, which must itself have watched the unchanged version that long ({@link settleNotFound}).
 * No machine's clock is ever compared with a time another machine wrote, and no clock's step shortens the wait.
 *
 * @module
 */
import {
  DEFAULT_NOT_FOUND_GRACE_MS,
  isDeploymentKnown,
  isOpenPaymentState,
  markContradiction,
  type PaymentChange,
  type PaymentDeployment,
  type PaymentError,
  type PaymentJournal,
  type PaymentRecord,
  sendWindowOf,
} from './journal.js';
import type { RecordWatch } from './record-watch.js';

/** What a writer learnt about a payment. */
export type PaymentObservation =
  /**
   * An attempt of `initiate` is about to leave; `sendWindowMs` bounds how long it can still reach the service, and
   * `deployment` says where it goes (written only into a record that has none: see `PaymentChange.deployment`).
   */
  | { readonly kind: 'sending'; readonly sendWindowMs: number; readonly deployment?: PaymentDeployment | undefined }
  /** The service accepted the push (202). */
  | { readonly kind: 'accepted'; readonly statusText: string; readonly requestId?: string | undefined }
  /** A status answer, its word already mapped to a state. */
  | {
      readonly kind: 'status';
      readonly state: 'successful' | 'failed' | 'pending';
      readonly statusText: string;
      readonly transactionCode?: string | undefined;
      readonly reason?: string | undefined;
      readonly requestId?: string | undefined;
    }
  /**
   * The service holds no collection, asked after the record was old enough (see {@link settleNotFound}); `requestId`
   * is the deciding 404's, kept in the `not-sent` event.
   */
  | { readonly kind: 'not-found'; readonly requestId?: string | undefined }
  /** This call's create ended without knowing whether the service holds the payment. */
  | { readonly kind: 'create-unknown'; readonly error: PaymentError }
  /** The service refused this call's create (a 4xx that proves nothing was created). */
  | { readonly kind: 'create-refused'; readonly error: PaymentError }
  /** Every attempt of this call provably created nothing (refused connections, 429s). */
  | { readonly kind: 'create-not-sent'; readonly error: PaymentError };

/** The decision for one record and one observation. */
export type PaymentDecision =
  | { readonly kind: 'change'; readonly change: PaymentChange }
  | { readonly kind: 'keep' }
  /** `sending` on a record that must not be sent again (the service holds it, or it is closed). */
  | { readonly kind: 'refuse' }
  /**
   * The service's answer contradicts the final record: it keeps its state and is marked (`change`, the one write a
   * final record takes), or was marked with this word already (`change` undefined). The caller must say so loudly.
   */
  | { readonly kind: 'contradiction'; readonly change: PaymentChange | undefined; readonly statusText: string };

const KEEP: PaymentDecision = { kind: 'keep' };

/**
 * True when the service's `answer` contradicts a record in final `state`: it holds a collection the journal calls
 * `not-sent` or `rejected`, or it settled the other way. `pending` against a settled record is no contradiction
 * (a status read that lags behind), nor is the same outcome again.
 */
function contradicts(state: PaymentRecord['state'], answer: 'successful' | 'failed' | 'pending'): boolean {
  if (state === 'not-sent' || state === 'rejected') return true;
  return (state === 'successful' && answer === 'failed') || (state === 'failed' && answer === 'successful');
}

function contradiction(
  record: PaymentRecord,
  answer: { readonly statusText: string; readonly requestId?: string | undefined },
  by: string,
): PaymentDecision {
  const marked = record.contradiction?.statusText === answer.statusText;
  return { kind: 'contradiction', change: marked ? undefined : markContradiction(record, answer, by), statusText: answer.statusText };
}

/** The rules, as a pure function: what `observation` does to `record`. */
export function decide(record: PaymentRecord, observation: PaymentObservation, by: string): PaymentDecision {
  const { state } = record;
  const open = isOpenPaymentState(state);
  const change = (next: Omit<PaymentChange, 'by'>): PaymentDecision => ({ kind: 'change', change: { ...next, by } });
  switch (observation.kind) {
    case 'sending':
      // A pending record is at the service, a final one is closed: sending again could push twice.
      if (state !== 'initiating' && state !== 'unknown') return { kind: 'refuse' };
      return change({
        state: 'initiating',
        sendWindowMs: observation.sendWindowMs,
        ...(!isDeploymentKnown(record.deployment) && observation.deployment !== undefined ? { deployment: observation.deployment } : {}),
      });
    case 'accepted':
      // A 202 for a reference the journal closed as never sent or refused: the service holds it after all.
      if (state === 'not-sent' || state === 'rejected') return contradiction(record, observation, by);
      if (!open || (state === 'pending' && record.statusText === observation.statusText)) return KEEP;
      return change({ state: 'pending', statusText: observation.statusText, requestId: observation.requestId });
    case 'status': {
      if (!open) return contradicts(state, observation.state) ? contradiction(record, observation, by) : KEEP;
      if (observation.state === 'pending' && state === 'pending' && record.statusText === observation.statusText) return KEEP;
      return change({
        state: observation.state,
        statusText: observation.statusText,
        transactionCode: observation.transactionCode,
        reason: observation.reason,
        requestId: observation.requestId,
      });
    }
    case 'not-found':
      return state === 'initiating' || state === 'unknown' ? change({ state: 'not-sent', requestId: observation.requestId }) : KEEP;
    case 'create-unknown':
      return state === 'initiating' ? change({ state: 'unknown', error: observation.error }) : KEEP;
    case 'create-refused':
      return state === 'initiating' ? change({ state: 'rejected', error: observation.error }) : KEEP;
    case 'create-not-sent':
      return state === 'initiating' ? change({ state: 'not-sent', error: observation.error }) : KEEP;
  }
}

/** What {@link advance} did. */
export interface Advanced {
  /** The record as the journal holds it afterwards (`undefined` when there is none). */
  readonly record: PaymentRecord | undefined;
  /** True when this observation changed the record. */
  readonly applied: boolean;
  /** True when a `sending` observation was refused: do not send. */
  readonly refused: boolean;
  /**
   * Set when the observation contradicts the final record (see {@link PaymentDecision}): the record (marked) keeps its
   * state; the caller rejects with `PaymentContradictionError` or reports it.
   */
  readonly contradiction?: { readonly statusText: string };
}

/** How many times a fact is re-decided after losing the compare-and-set before giving up (the record keeps moving). */
const MAX_RACES = 16;

/**
 * Applies an observation through the journal's compare-and-set.
 *
 * @param basedOn - The record the observation's writer read, for conclusions (everything but `accepted` and
 *   `status`): applied to that version only. Facts pass `undefined`: they apply to the record as it is now.
 */
export async function advance(
  journal: PaymentJournal,
  referenceId: string,
  observation: PaymentObservation,
  by: string,
  basedOn?: PaymentRecord,
): Promise<Advanced> {
  let record = basedOn ?? (await journal.get(referenceId));
  for (let race = 0; record !== undefined && race < MAX_RACES; race++) {
    const decision = decide(record, observation, by);
    if (decision.kind === 'contradiction') {
      const contradiction = { statusText: decision.statusText };
      if (decision.change === undefined) return { record, applied: false, refused: false, contradiction };
      const marked = await journal.transition(referenceId, record.version, decision.change);
      if (marked.applied) return { record: marked.record, applied: true, refused: false, contradiction };
      record = marked.record;
      continue;
    }
    if (decision.kind !== 'change') return { record, applied: false, refused: decision.kind === 'refuse' };
    const result = await journal.transition(referenceId, record.version, decision.change);
    if (result.applied) return { record: result.record, applied: true, refused: false };
    // A conclusion holds only for the record its writer read; someone acted since.
    if (basedOn !== undefined) {
      const refused = observation.kind === 'sending';
      return { record: result.record, applied: false, refused };
    }
    record = result.record;
  }
  return { record, applied: false, refused: observation.kind === 'sending' };
}

/**
 * The status check {@link settleNotFound} makes once the record is old enough: a status, or on the service's own
 * 404 a `not-found` observation carrying its request id (`'not-found'` when there is none to keep).
 */
export type RecheckStatus = () => Promise<Extract<PaymentObservation, { kind: 'status' | 'not-found' }> | 'not-found'>;

/** What {@link settleNotFound} concluded. */
export interface NotFoundVerdict extends Advanced {
  /** False while a `not-sent` verdict is not yet possible (the record is too young by either clock). */
  readonly decidable: boolean;
  /**
   * While not decidable: the earliest time (ISO 8601, the journal's clock) a verdict is possible, the later of the
   * two bounds (the journal's clock, and this process's own watch of the record). Also the returned record's
   * `decidableAt`.
   */
  readonly decidableAt?: string;
}

/**
 * After a 404: closes an `initiating` or `unknown` record as `not-sent` (or, for `initiate` retrying the same
 * payment, takes it over to send it: `conclusion` `sending`) when, and only when, nothing can still arrive.
 * The record's age is measured twice, and both must pass its last sender's window plus `graceMs` (the reader's
 * `notFoundGraceMs`):
 * - by the journal's clock (`now()` against the record's `updatedAt`), as every process sees it;
 * - by this process's monotonic clock: `watch` must have seen this very version unchanged that long (a record
 *   read for the first time starts the watch), so a step of the journal's clock (or of this machine's wall clock)
 *   forward can never make a record in flight look old, and a step back only makes the wait longer.
 * Only then is the service asked again (`recheck`), so the 404 that decides was asked for after every attempt's
 * window had passed; and the conclusion applies only if the record is unchanged since (no attempt began meanwhile).
 * A status found on the recheck is recorded instead.
 */
export async function settleNotFound(
  journal: PaymentJournal,
  watch: RecordWatch,
  referenceId: string,
  graceMs: number,
  recheck: RecheckStatus,
  by: string,
  conclusion: Extract<PaymentObservation, { kind: 'not-found' | 'sending' }> = { kind: 'not-found' },
): Promise<NotFoundVerdict> {
  for (let race = 0; race < MAX_RACES; race++) {
    const record = await journal.get(referenceId);
    if (record === undefined || (record.state !== 'initiating' && record.state !== 'unknown')) {
      watch.forget(referenceId);
      return { record, applied: false, refused: false, decidable: record !== undefined };
    }
    const watchedMs = watch.watched(record);
    const bound = verdictBound(record, watchedMs, Date.parse(await journal.now()), graceMs);
    if (bound !== 'now') {
      const held = bound === undefined ? record : { ...record, decidableAt: bound };
      return { record: held, applied: false, refused: false, decidable: false, ...(bound === undefined ? {} : { decidableAt: bound }) };
    }
    const seen = await recheck();
    if (seen !== 'not-found' && seen.kind === 'status') return { ...(await advance(journal, referenceId, seen, by)), decidable: true };
    // The `not-sent` event names the 404 that decided it; a takeover (`sending`) is this writer's own conclusion.
    const decided = conclusion.kind === 'not-found' && seen !== 'not-found' ? seen : conclusion;
    const closed = await advance(journal, referenceId, decided, by, record);
    if (closed.applied || closed.record === undefined || !isOpenPaymentState(closed.record.state)) {
      if (closed.record?.state === 'initiating') watch.watched(closed.record);
      else watch.forget(referenceId);
      return { ...closed, decidable: true };
    }
    // Written meanwhile (an attempt began, or a status was recorded): decide again from the new record.
  }
  const record = await journal.get(referenceId);
  return { record, applied: false, refused: false, decidable: false };
}

/**
 * When an open record's 404 can become a verdict: `'now'`, or the earliest time (ISO 8601, the journal's clock)
 * by the later of the two measures of its age: the journal's clock (`journalNow` against `updatedAt`) and this
 * process's watch of the version (`watchedMs`), each against the sender's window plus `graceMs`. `undefined` when a
 * time cannot be read (nothing is decided then).
 */
export function verdictBound(
  record: Pick<PaymentRecord, 'updatedAt' | 'sendWindowMs'>,
  watchedMs: number,
  journalNow: number,
  graceMs: number,
): 'now' | string | undefined {
  // A window not known is unbounded (sendWindowOf): such a record is never old enough, and no time is given.
  const waitMs = sendWindowOf(record) + Math.max(graceMs, 0);
  const byJournal = Date.parse(record.updatedAt) + waitMs;
  if (journalNow >= byJournal && watchedMs >= waitMs) return 'now';
  const at = Math.max(byJournal, journalNow + Math.max(0, waitMs - watchedMs));
  return Number.isFinite(at) ? new Date(at).toISOString() : undefined;
}

export { DEFAULT_NOT_FOUND_GRACE_MS };
