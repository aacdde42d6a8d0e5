/** The conformance kit's context, fixed values and helpers (records, inserts, settling, times, ids). */

import type { BudgetRequest } from '../../journal/budget.js';
import type { NewPaymentRecord, PaymentJournal, PaymentRecord, PaymentState } from '../../journal/journal.js';

/** What each check is given. */
export interface CheckContext {
  /** The journal opened first. */
  readonly journal: PaymentJournal;
  /** Opens the storage again. */
  readonly reopen: () => Promise<PaymentJournal>;
}

/** One conformance check: resolves when the store behaved, throws what it did not. */
export type Check = (context: CheckContext) => Promise<void>;

/** The final states. */
export const FINAL_STATES: readonly PaymentState[] = ['rejected', 'not-sent', 'successful', 'failed'];
/** The open states. */
export const OPEN_STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown'];
/** Every state a payment record can be in. */
export const ALL_STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown', 'rejected', 'not-sent', 'successful', 'failed'];

/** Who the suite's writes are by, in the history. */
export const BY = 'checkPaymentJournal';
/** The grace `decidableAt` adds to the sender's window (the SDK's default `notFoundGraceMs`). */
export const GRACE_MS = 10_000;
/**
 * How far the journal's clock may be from this machine's. The kit cannot know a database server's true time;
 * the bound is wide enough for an honest server's skew and catches a clock in the wrong unit or time zone.
 */
export const CLOCK_BOUND_MS = 15 * 60_000;
/** The shape every time of the journal has (`Date.prototype.toISOString`): one shape, so times sort as text. */
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let counter = 0;

/** The store behind each tracking wrapper (closed once, whatever wraps it). */
export const untracked = new WeakMap<PaymentJournal, PaymentJournal>();

/** The store, noting in `written` every referenceId inserted through it. */
export function tracking(store: PaymentJournal, written: Set<string>): PaymentJournal {
  const journal: PaymentJournal = {
    insert: (record) => {
      written.add(record.referenceId);
      return store.insert(record);
    },
    transition: (referenceId, expectedVersion, change) => store.transition(referenceId, expectedVersion, change),
    now: () => store.now(),
    get: (referenceId) => store.get(referenceId),
    list: (filter) => store.list(filter),
    history: (referenceId) => store.history(referenceId),
    lease: (request) => store.lease(request),
    renew: (owner, referenceIds, leaseMs) => store.renew(owner, referenceIds, leaseMs),
    release: (owner, referenceIds) => store.release(owner, referenceIds),
    ...(typeof store.counts === 'function'
      ? { counts: () => (store.counts as () => Promise<Record<PaymentState, number>>).call(store) }
      : {}),
    ...(store.takeBudget === undefined
      ? {}
      : { takeBudget: (request: BudgetRequest) => (store.takeBudget as NonNullable<PaymentJournal['takeBudget']>).call(store, request) }),
  };
  untracked.set(journal, store);
  return journal;
}

/** A new record with fresh ids, `fields` over the defaults. */
export function newRecord(fields: Partial<Record<keyof NewPaymentRecord, unknown>> = {}): NewPaymentRecord {
  const base: Record<string, unknown> = {
    referenceId: uuid(),
    state: 'initiating',
    productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
    amount: 25.5,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: `fp-${++counter}`,
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) base[key] = value;
  }
  return base as unknown as NewPaymentRecord;
}

/** What a store must hold for `record` inserted at `at`. */
export function stamped(record: NewPaymentRecord, at: string, version: number): PaymentRecord {
  const decidable = record.state === 'initiating' || record.state === 'unknown';
  return {
    ...record,
    createdAt: at,
    updatedAt: at,
    version,
    ...(decidable && record.sendWindowMs !== undefined ? { decidableAt: plus(at, record.sendWindowMs + GRACE_MS) } : {}),
  };
}

/** Inserts `record`, failing when the store refuses it. */
export async function insert(journal: PaymentJournal, record: NewPaymentRecord): Promise<PaymentRecord> {
  const stored = await journal.insert(record);
  if (stored === undefined) throw new Error(`insert of a new record (${record.referenceId}) resolved with undefined`);
  return stored;
}

/** A new record brought to `state` the way the SDK brings it: inserted `initiating`, then one transition. */
export async function insertIn(journal: PaymentJournal, state: PaymentState): Promise<PaymentRecord> {
  const stored = await insert(journal, newRecord());
  if (state === 'initiating') return stored;
  const moved = await journal.transition(stored.referenceId, stored.version, { state, by: BY, statusText: state });
  if (!moved.applied) throw new Error(`a transition of a new record to ${state} was not applied`);
  return moved.record;
}

/** Moves the check's records to a final state so later checks (and later runs) never lease them. */
export async function settle(journal: PaymentJournal, records: readonly Pick<PaymentRecord, 'referenceId'>[]): Promise<void> {
  for (const item of records) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await journal.get(item.referenceId);
      if (current === undefined || !OPEN_STATES.includes(current.state)) break;
      if ((await journal.transition(item.referenceId, current.version, { state: 'failed', by: BY })).applied) break;
    }
  }
}

/** `time` moved by `ms`. */
export function plus(time: string, ms: number): string {
  return new Date(Date.parse(time) + ms).toISOString();
}

/** A fresh reference id. */
export function uuid(): string {
  return globalThis.crypto.randomUUID();
}

/** The reference ids of `records`, in order. */
export function ids(records: readonly Pick<PaymentRecord, 'referenceId'>[]): string[] {
  return records.map((item) => item.referenceId);
}

/** Resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Long values (a 2000-character narration) cut in a message. */
export function short(text: string | undefined): string | undefined {
  return text !== undefined && text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

/** An error as its message. */
export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
