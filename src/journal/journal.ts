/**
 * The payment journal: what every store (memory, SQLite, PostgreSQL, a user's own) implements so that a
 * payment's state survives a crash and several settlement workers can share the open payments.
 *
 * The interface is deliberately small and made of operations any database does atomically: an insert that
 * refuses a duplicate key, a conditional update, ordered reads, and leases (an owner and an expiry per open
 * record). `checkPaymentJournal` in `tap-collections-sdk/testing` proves a store against it.
 *
 * @module
 */
import type { BudgetGrant, BudgetRequest } from './budget.js';

export type { BudgetGrant, BudgetRequest } from './budget.js';

/**
 * Where a payment stands in the journal. `initiating`, `pending` and `unknown` are open (the SDK still has
 * work to do); `rejected`, `not-sent`, `successful` and `failed` are final and never change again.
 *
 * - `initiating`: written before the push request left; whether it reached the service is not known yet.
 * - `pending`: the service accepted the push (202) or a status check answered `pending`.
 * - `unknown`: the create ended in `UnknownOutcomeError`; `recover()` or the settlement worker finds out.
 * - `rejected`: the service refused the push (a 4xx other than 408/429); `error` says why.
 * - `not-sent`: the service provably holds no collection for the reference: safe to start the sale over.
 * - `successful` / `failed`: the collection settled.
 */
export type PaymentState = 'initiating' | 'pending' | 'unknown' | 'rejected' | 'not-sent' | 'successful' | 'failed';

/** The open states, in which a payment still needs the SDK's attention. */
export const OPEN_PAYMENT_STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown'];

/** Every state, open ones first. */
export const PAYMENT_STATES: readonly PaymentState[] = [...OPEN_PAYMENT_STATES, 'rejected', 'not-sent', 'successful', 'failed'];

/** Counts by state from a store's rows (`[state, count]`): every state named, unknown states left out. */
export function stateCounts(rows: Iterable<readonly [string, number]>): Record<PaymentState, number> {
  const counts = Object.fromEntries(PAYMENT_STATES.map((state) => [state, 0])) as Record<PaymentState, number>;
  for (const [state, count] of rows) if (state in counts) counts[state as PaymentState] += count;
  return counts;
}

/** True for `initiating`, `pending` and `unknown`. */
export function isOpenPaymentState(state: PaymentState): boolean {
  return state === 'initiating' || state === 'pending' || state === 'unknown';
}

/** Why a payment was rejected, as plain data (never the response body, which may carry personal data). */
export interface PaymentError {
  /** The error class's name, e.g. `UnprocessableEntityError`. */
  readonly name: string;
  /** The HTTP status, when the service answered. */
  readonly status?: number;
  /** The service's machine-readable code, when it sent one. */
  readonly code?: string;
}

/** One payment as the journal keeps it. Timestamps are ISO 8601 strings (UTC), stamped by the journal's own clock. */
export interface PaymentRecord {
  /** The collection's `referenceId` (lower case): the journal's key. */
  readonly referenceId: string;
  /** Where the payment stands. */
  readonly state: PaymentState;
  /** The product receiving the funds. */
  readonly productId: string;
  /** The amount, as sent. */
  readonly amount: number;
  /** The currency, as sent (`ZMW`). */
  readonly currency: string;
  /** The customer's number, **masked** as the logs mask it (`260*******56`): the journal keeps no full number. */
  readonly phoneNumber: string;
  /** The narration, when one was sent, scrubbed as log lines are (phone numbers masked, the key removed). */
  readonly narration?: string;
  /**
   * An opaque digest of what identifies the payment (product, amount, currency, full number, narration),
   * computed by the SDK: it tells a retry of the same payment from a different payment that reuses the
   * `referenceId`. Stores keep it as they receive it.
   */
  readonly fingerprint: string;
  /** When the record was first written, by the journal's clock. */
  readonly createdAt: string;
  /** When the record last changed, by the journal's clock. */
  readonly updatedAt: string;
  /**
   * Counts the writes of this record (1 when inserted): the token of the journal's compare-and-set. A writer
   * changes the record only if it still has the version it read ({@link PaymentJournal.transition}).
   */
  readonly version: number;
  /**
   * How long after `updatedAt` a push sent by the client that last wrote an `initiating` record can still
   * reach the service (its attempts, time limits and backoff). With `notFoundGraceMs`, it decides when a 404
   * proves the push never arrived. Absent (a record of the first release, or of a store that does not keep it)
   * or `Infinity`: the window is not known, and is read as unbounded ({@link sendWindowOf}).
   */
  readonly sendWindowMs?: number;
  /**
   * For an `initiating` or `unknown` record: the earliest time a `not-sent` verdict is possible (`updatedAt`
   * plus `sendWindowMs` plus the default 10 s grace), so a till can show "checking, up to …". Derived, not stored.
   * Absent when the window is not known ({@link sendWindowOf} is `Infinity`): no age ever proves such a payment
   * unsent; it settles by the service's answer, or the settlement worker reports it (`onStale`) for a person.
   */
  readonly decidableAt?: string;
  /** The last status word the service answered, as it answered it. */
  readonly statusText?: string;
  /** The service's outcome code, once settled. */
  readonly transactionCode?: string;
  /** The service's explanatory text, once settled (scrubbed as log lines are). */
  readonly reason?: string;
  /** Why the payment was rejected (state `rejected`), or the last error that left it `unknown`. */
  readonly error?: PaymentError;
  /**
   * Set when the service answered something that contradicts this final record (it holds a collection the journal
   * calls `not-sent` or `rejected`; `successful` for a `failed` record or the reverse). The record keeps its state:
   * a person must look at it (`journal list --contradictions`). The last such answer is kept.
   */
  readonly contradiction?: PaymentContradiction;
  /**
   * The deployment the record's push went to: the Collections base URL (normalized) and an identity of the API
   * key's account that cannot reveal the key. An answer (a status, a 404, a duplicate answer) is evidence about this
   * record only when it comes from that deployment. Absent on records written by earlier releases.
   */
  readonly deployment?: PaymentDeployment;
  /**
   * The customer's full number, sealed (AES-GCM) under a key derived from the API key: kept only by clients whose
   * service refuses duplicate references (`duplicateReferences: 'refused'`), so that `recover()` and the settlement
   * worker can resend the very same create. Opaque to the journal and to anyone without the key; never logged.
   */
  readonly sealedPhoneNumber?: string;
}

/** Where a record's push went (see {@link PaymentRecord.deployment}). */
export interface PaymentDeployment {
  /** The Collections base URL, normalized (lower-case scheme and host, no default port, no trailing slash). */
  readonly baseUrl: string;
  /**
   * The API key's account, as an identity that cannot reveal the key (see docs/internals/assumptions-rationale.md, key
   * rotation). Empty when the key could not be read as the record was written: no push left from the record then, and
   * the attempt (or a later takeover) writes the account before one does (an empty account is not known).
   */
  readonly account: string;
}

/**
 * True when `deployment` says where a push goes: a base URL and an account. A record without one (an earlier
 * release's) or whose account was not read takes the deployment of the next `sending` change ({@link PaymentChange.deployment}).
 */
export function isDeploymentKnown(deployment: PaymentDeployment | undefined): deployment is PaymentDeployment {
  return deployment !== undefined && deployment.account !== '';
}

/** What the service answered against a final record (see {@link PaymentRecord.contradiction}). */
export interface PaymentContradiction {
  /** When it was recorded, by the journal's clock (ISO 8601). */
  readonly at: string;
  /** The service's status word, as it answered it (scrubbed as log text). */
  readonly statusText: string;
  /** The service's request id of that answer, when it carried one. */
  readonly requestId?: string;
  /** Who saw it (see {@link PaymentChange.by}). */
  readonly by: string;
}

/** What the SDK hands {@link PaymentJournal.insert}: the journal adds the times and the version. */
export type NewPaymentRecord = Omit<PaymentRecord, 'createdAt' | 'updatedAt' | 'version' | 'decidableAt' | 'contradiction'>;

/** A change to a record's state and what the service said; every field not given keeps its value. */
export interface PaymentChange {
  /** The new state. */
  readonly state: PaymentState;
  /** Who made the change, for the history: `initiate`, `checkStatus`, `poll`, `recover`, `worker:<id>`, … */
  readonly by: string;
  /** See {@link PaymentRecord.sendWindowMs}. */
  readonly sendWindowMs?: number;
  /** See {@link PaymentRecord.statusText}. */
  readonly statusText?: string;
  /** See {@link PaymentRecord.transactionCode}. */
  readonly transactionCode?: string;
  /** See {@link PaymentRecord.reason}. */
  readonly reason?: string;
  /** See {@link PaymentRecord.error}. */
  readonly error?: PaymentError;
  /** The service's request id of the answer that caused the change, when there was one (kept in the history). */
  readonly requestId?: string;
  /**
   * Where the push about to leave goes (a change to `initiating`, before an attempt): written only when the record does
   * not say it yet (no deployment: an earlier release's; or an empty account: the key could not be read as it was
   * written), so no push ever leaves from a record that does not say where it went. A store never replaces a
   * deployment whose account is known (an empty account is not known).
   */
  readonly deployment?: PaymentDeployment;
  /**
   * The one change a final record takes: with `state` equal to the record's, it marks the record as contradicted by
   * the service's answer (`statusText`, `requestId`) and changes nothing else. The store stamps `at` and keeps `by`.
   * A change with it is never applied to an open record.
   */
  readonly contradiction?: ContradictingAnswer;
}

/** The service's answer that contradicts a final record, as a writer hands it over (see {@link PaymentChange.contradiction}). */
export interface ContradictingAnswer {
  /** The service's status word, as it answered it. */
  readonly statusText: string;
  /** The service's request id of that answer, when it carried one. */
  readonly requestId?: string | undefined;
}

/** One change of a payment, as {@link PaymentJournal.history} keeps it. */
export interface PaymentEvent {
  /** When it happened, by the journal's clock (ISO 8601). */
  readonly at: string;
  /** The state before (`null` for the first write). */
  readonly from: PaymentState | null;
  /** The state after (the same as `from` for a write that changed only what the service said, or a resend). */
  readonly to: PaymentState;
  /** The status word the service answered, when the change came from one. */
  readonly statusText?: string;
  /** The service's outcome code, when the change recorded one. */
  readonly transactionCode?: string;
  /** The service's request id, when the change came from an answer that carried one. */
  readonly requestId?: string;
  /** Who made the change (see {@link PaymentChange.by}). */
  readonly by: string;
}

/** What {@link PaymentJournal.transition} did. */
export type PaymentTransition =
  | {
      /** Applied: the change was written. */
      readonly applied: true;
      /** The record as stored after the change. */
      readonly record: PaymentRecord;
    }
  | {
      /** Not applied: the record had another version, or was final, or is absent. */
      readonly applied: false;
      /** The record as it is now; `undefined` when there is none. */
      readonly record: PaymentRecord | undefined;
    };

/** Which records {@link PaymentJournal.list} returns. */
export interface PaymentFilter {
  /** Only records in these states. Default: every state. */
  readonly states?: readonly PaymentState[] | undefined;
  /** At most this many records. Default: no limit. */
  readonly limit?: number | undefined;
  /** Only records marked {@link PaymentRecord.contradiction} (filtered by the store, not after reading). Default: every record. */
  readonly contradictions?: boolean | undefined;
}

/** What {@link PaymentJournal.lease} is asked for. */
export interface LeaseRequest {
  /** Who takes the leases: one id per worker, unique across processes and machines. */
  readonly owner: string;
  /** How long the leases last from now, in milliseconds, unless renewed. */
  readonly leaseMs: number;
  /** At most this many records. */
  readonly limit: number;
}

/**
 * A store of payment records. Every method is atomic on its own; a method that resolves has made its
 * write durable (a crash right after loses nothing). Methods reject on storage failures; the SDK turns
 * that into `JournalError`.
 *
 * Every change is a compare-and-set ({@link PaymentJournal.transition}): applied only if the record still has
 * the version the writer read, checked in the same atomic step as the write, and written together with its
 * {@link PaymentEvent}. Times are the journal's own clock (the database server's, or the machine's for a file
 * or memory), never a time a client sends, so machines whose clocks disagree still agree on a record's age.
 *
 * Leases let several settlement workers share the open records: a record leased to one owner is not
 * leased to another until the lease expires or is released. Leasing never changes a record's version.
 */
export interface PaymentJournal {
  /**
   * Writes a new record (version 1, `createdAt` and `updatedAt` the journal's now) with its first event.
   * Resolves with the stored record, or `undefined` (writing nothing) when the `referenceId` exists already.
   */
  insert(record: NewPaymentRecord): Promise<PaymentRecord | undefined>;
  /**
   * Applies `change` only if the record's version is `expectedVersion` and its state is open (final states
   * never change), in one atomic step that also bumps the version, stamps `updatedAt` and appends the event.
   * One write is allowed on a final record: a change with `contradiction` and the record's own state sets
   * {@link PaymentRecord.contradiction} (and nothing else), with the same version check, bump, stamp and event
   * (`from` and `to` the record's state, the service's word and request id).
   */
  transition(referenceId: string, expectedVersion: number, change: PaymentChange): Promise<PaymentTransition>;
  /** The journal's clock now (ISO 8601): what record ages are measured by. */
  now(): Promise<string>;
  /** The record for `referenceId`, or `undefined`. */
  get(referenceId: string): Promise<PaymentRecord | undefined>;
  /** Records matching `filter`, oldest first (by `createdAt`, then `referenceId`). */
  list(filter?: PaymentFilter): Promise<PaymentRecord[]>;
  /** Every change of the payment, oldest first (`[]` when there is no such record). */
  history(referenceId: string): Promise<PaymentEvent[]>;
  /**
   * Leases up to `limit` open records that have no live lease (none, or expired, or released) to `owner`,
   * and resolves with them. Which ones first: the shipped stores take records never leased (or released) first,
   * newest first, then those whose lease ran out longest ago; a worker parks a payment until its next check
   * by renewing its lease to that time, so this order serves new payments first and the others when due. Records already leased to `owner` are not returned again.
   */
  lease(request: LeaseRequest): Promise<PaymentRecord[]>;
  /**
   * Extends `owner`'s leases on `referenceIds` by `leaseMs` from now. Resolves with the ids whose lease
   * `owner` still held (a lease that expired and was taken by another owner is lost: stop working on it).
   */
  renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]>;
  /** Ends `owner`'s leases on `referenceIds` (ids it does not hold are ignored). */
  release(owner: string, referenceIds: readonly string[]): Promise<void>;
  /**
   * Optional: calls `onChange` when the payment may have changed (at least whenever it reaches a final
   * state, and whenever a change may have been missed), until the returned function is called. With it,
   * `waitForSettlement` waits for the journal to say so; without it (or if it rejects), it reads the journal
   * on a schedule. `PostgresJournal` implements it with one `LISTEN` connection per journal.
   */
  watch?(referenceId: string, onChange: () => void): Promise<() => void>;
  /**
   * Optional: how many records are in each state (every state named, 0 when none), at a cost that does not grow
   * with the journal. The settlement worker's open-payments gauge (`/metrics`) reads it; a journal without it is
   * counted by {@link PaymentJournal.list} (every open record read: logged once as a warning). The shipped stores
   * keep counters: in memory, and in PostgreSQL and SQLite a table a trigger updates in each write's transaction.
   */
  counts?(): Promise<Record<PaymentState, number>>;
  /**
   * Optional: the shared rate budget of an API key. Renews `request.holder`'s share of the key's budget
   * and resolves with what it may spend now; the arithmetic is `allocateBudget`'s, run on the key's state
   * loaded and saved in one atomic step (a transaction, or a compare-and-set on a version). Leases run on the time the
   * holders measured (`request.since`); the journal's clock paces only `'adaptive'`.
   * Without it, a client given `requestsPerSecond` on this journal is refused with `ConfigurationError`: a shared
   * limit that would silently be per process is not offered. `checkPaymentJournal` checks it when present.
   */
  takeBudget?(request: BudgetRequest): Promise<BudgetGrant>;
  /** Frees the store's resources (connections, file handles). Optional; the SDK never calls it. */
  close?(): Promise<void>;
}

/** The grace a reader adds to the sender's window by default before a 404 proves a push never arrived: 10 s. */
export const DEFAULT_NOT_FOUND_GRACE_MS = 10_000;

/**
 * The window of a record whose writer's window is not known: unbounded. The first release of the journal kept
 * no window, and allowed none to be bounded: its `initiate` wrote the record, then waited in the client's
 * concurrency queue with no time limit before the push left (and its `timeoutMs` and `maxRetryAfterMs` went up
 * to 24.8 days each, for up to 11 attempts). Its records also carry the writer's own clock, not the journal's.
 * So no age proves that such a push can no longer arrive.
 */
export const UNKNOWN_SEND_WINDOW_MS = Number.POSITIVE_INFINITY;

/**
 * The attempt window a record is judged by: its `sendWindowMs`, or {@link UNKNOWN_SEND_WINDOW_MS} (`Infinity`)
 * when it has none (a record of the first release, or read from a store that did not keep it) or an unusable one.
 * The one place every reader of a window goes through.
 */
export function sendWindowOf(record: Pick<PaymentRecord, 'sendWindowMs'>): number {
  const window = record.sendWindowMs;
  return typeof window === 'number' && window >= 0 ? window : UNKNOWN_SEND_WINDOW_MS;
}

/**
 * The record with {@link PaymentRecord.decidableAt} derived (for `initiating` and `unknown` records; absent
 * when the window is not known). Every shipped store returns records through it; a store of your own may too.
 */
export function withDecidableAt(record: PaymentRecord): PaymentRecord {
  const { decidableAt: _derived, ...stored } = record;
  if (record.state !== 'initiating' && record.state !== 'unknown') return _derived === undefined ? record : stored;
  const at = Date.parse(record.updatedAt) + sendWindowOf(record) + DEFAULT_NOT_FOUND_GRACE_MS;
  return Number.isFinite(at) ? { ...stored, decidableAt: new Date(at).toISOString() } : stored;
}

/** The event a change writes: from the record before, to the change's state (a contradiction: the service's word). */
export function eventOf(
  before: PaymentState | null,
  change: Pick<PaymentChange, 'state' | 'by' | 'statusText' | 'transactionCode' | 'requestId' | 'contradiction'>,
  at: string,
): PaymentEvent {
  const statusText = change.contradiction?.statusText ?? change.statusText;
  const requestId = change.contradiction === undefined ? change.requestId : change.contradiction.requestId;
  return {
    at,
    from: before,
    to: change.state,
    by: change.by,
    ...(statusText === undefined ? {} : { statusText }),
    ...(change.transactionCode === undefined || change.contradiction !== undefined ? {} : { transactionCode: change.transactionCode }),
    ...(requestId === undefined ? {} : { requestId }),
  };
}

/** The change that marks final `record` as contradicted by the service's answer (see {@link PaymentChange.contradiction}). */
export function markContradiction(
  record: Pick<PaymentRecord, 'state'>,
  answer: { readonly statusText: string; readonly requestId?: string | undefined },
  by: string,
): PaymentChange {
  const contradiction = answer.requestId === undefined ? { statusText: answer.statusText } : { ...answer };
  return { state: record.state, by, contradiction };
}

/** The contradiction a store keeps for `change` applied at `at`. */
export function contradictionOf(change: PaymentChange, at: string): PaymentContradiction | undefined {
  const answer = change.contradiction;
  if (answer === undefined) return undefined;
  return { at, statusText: answer.statusText, ...(answer.requestId === undefined ? {} : { requestId: answer.requestId }), by: change.by };
}

/** True when `change` is the one write a final record takes: a contradiction mark in the record's own state. */
export function isContradictionMark(current: Pick<PaymentRecord, 'state'>, change: PaymentChange): boolean {
  return !isOpenPaymentState(current.state) && change.contradiction !== undefined && change.state === current.state;
}
