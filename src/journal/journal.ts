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

/** One payment as the journal keeps it. Timestamps are ISO 8601 strings (UTC). */
export interface PaymentRecord {
  /** The collection's `referenceId`: the journal's key. */
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
  /** The narration, when one was sent. */
  readonly narration?: string;
  /**
   * An opaque digest of what identifies the payment (product, amount, currency, full number, narration),
   * computed by the SDK: it tells a retry of the same payment from a different payment that reuses the
   * `referenceId`. Stores keep it as they receive it.
   */
  readonly fingerprint: string;
  /** When the record was first written. */
  readonly createdAt: string;
  /** When the record last changed. */
  readonly updatedAt: string;
  /** The last `statusText` the service answered. */
  readonly statusText?: string;
  /** The service's outcome code, once settled. */
  readonly transactionCode?: string;
  /** The service's explanatory text, once settled. */
  readonly reason?: string;
  /** Why the payment was rejected (state `rejected`), or the last error that left it `unknown`. */
  readonly error?: PaymentError;
}

/** A change to a record's state and what the service said; every field not given keeps its value. */
export interface PaymentChange {
  /** The new state. */
  readonly state: PaymentState;
  /** When the change happened (becomes `updatedAt`). */
  readonly updatedAt: string;
  /** See {@link PaymentRecord.statusText}. */
  readonly statusText?: string;
  /** See {@link PaymentRecord.transactionCode}. */
  readonly transactionCode?: string;
  /** See {@link PaymentRecord.reason}. */
  readonly reason?: string;
  /** See {@link PaymentRecord.error}. */
  readonly error?: PaymentError;
}

/** Which records {@link PaymentJournal.list} returns. */
export interface PaymentFilter {
  /** Only records in these states. Default: every state. */
  readonly states?: readonly PaymentState[];
  /** At most this many records. Default: no limit. */
  readonly limit?: number;
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
 * Leases let several settlement workers share the open records: a record leased to one owner is not
 * leased to another until the lease expires or is released. Stores whose writers share a clock they
 * trust (a database server's) should measure leases by that clock.
 */
export interface PaymentJournal {
  /**
   * Writes a new record. Resolves `true` when written, `false` (writing nothing) when a record with the
   * same `referenceId` exists already.
   */
  insert(record: PaymentRecord): Promise<boolean>;
  /**
   * Applies `change` to the record unless its state is final: final states never change. Resolves with the
   * record as stored afterwards (unchanged when it was final), or `undefined` when there is no such record.
   */
  update(referenceId: string, change: PaymentChange): Promise<PaymentRecord | undefined>;
  /** The record for `referenceId`, or `undefined`. */
  get(referenceId: string): Promise<PaymentRecord | undefined>;
  /** Records matching `filter`, oldest first (by `createdAt`, then `referenceId`). */
  list(filter?: PaymentFilter): Promise<PaymentRecord[]>;
  /**
   * Leases up to `limit` open records that have no live lease (none, or expired, or released) to `owner`,
   * oldest first, and resolves with them. Records already leased to `owner` are not returned again.
   */
  lease(request: LeaseRequest): Promise<PaymentRecord[]>;
  /**
   * Extends `owner`'s leases on `referenceIds` by `leaseMs` from now. Resolves with the ids whose lease
   * `owner` still held (a lease that expired and was taken by another owner is lost: stop working on it).
   */
  renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]>;
  /** Ends `owner`'s leases on `referenceIds` (ids it does not hold are ignored). */
  release(owner: string, referenceIds: readonly string[]): Promise<void>;
  /** Frees the store's resources (connections, file handles). Optional; the SDK never calls it. */
  close?(): Promise<void>;
}
