/**
 * `MemoryJournal`: a payment journal held in this process's memory. It survives nothing (a crash loses it);
 * use it in tests, and to share open payments between settlement workers of one process. For a till that
 * must survive a restart, use `SqliteJournal` (`tap-collections-sdk/sqlite`) or `PostgresJournal`.
 *
 * @module
 */
import {
  isOpenPaymentState,
  type LeaseRequest,
  type PaymentChange,
  type PaymentFilter,
  type PaymentJournal,
  type PaymentRecord,
} from './journal.js';

/** Options of {@link MemoryJournal}. */
export interface MemoryJournalOptions {
  /**
   * The clock leases are measured by, in milliseconds.
   * @defaultValue `Date.now`
   */
  readonly now?: () => number;
}

interface Entry {
  record: PaymentRecord;
  leaseOwner: string | undefined;
  leaseExpiresAt: number;
}

/**
 * A {@link PaymentJournal} in memory: one process, nothing durable. Every method completes synchronously
 * inside its promise, so concurrent callers of one process see each write whole (no interleaving).
 *
 * ```ts
 * const collections = new CollectionsClient({ apiKey, baseUrl, journal: new MemoryJournal() });
 * ```
 */
export class MemoryJournal implements PaymentJournal {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  /** @param options - see {@link MemoryJournalOptions}. */
  constructor(options: MemoryJournalOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** {@inheritDoc PaymentJournal.insert} */
  async insert(record: PaymentRecord): Promise<boolean> {
    if (this.#entries.has(record.referenceId)) return false;
    this.#entries.set(record.referenceId, { record: freeze(record), leaseOwner: undefined, leaseExpiresAt: 0 });
    return true;
  }

  /** {@inheritDoc PaymentJournal.update} */
  async update(referenceId: string, change: PaymentChange): Promise<PaymentRecord | undefined> {
    const entry = this.#entries.get(referenceId);
    if (entry === undefined) return undefined;
    if (!isOpenPaymentState(entry.record.state)) return entry.record;
    const next: Record<string, unknown> = { ...entry.record };
    for (const [key, value] of Object.entries(change)) {
      if (value !== undefined) next[key] = value;
    }
    entry.record = freeze(next as unknown as PaymentRecord);
    return entry.record;
  }

  /** {@inheritDoc PaymentJournal.get} */
  async get(referenceId: string): Promise<PaymentRecord | undefined> {
    return this.#entries.get(referenceId)?.record;
  }

  /** {@inheritDoc PaymentJournal.list} */
  async list(filter: PaymentFilter = {}): Promise<PaymentRecord[]> {
    const states = filter.states === undefined ? undefined : new Set(filter.states);
    const records = [...this.#entries.values()]
      .map((entry) => entry.record)
      .filter((record) => states === undefined || states.has(record.state))
      .sort(oldestFirst);
    return filter.limit === undefined ? records : records.slice(0, Math.max(0, filter.limit));
  }

  /** {@inheritDoc PaymentJournal.lease} */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    const now = this.#now();
    const free = [...this.#entries.values()]
      .filter((entry) => isOpenPaymentState(entry.record.state) && (entry.leaseOwner === undefined || entry.leaseExpiresAt <= now))
      .sort((a, b) => oldestFirst(a.record, b.record))
      .slice(0, Math.max(0, request.limit));
    for (const entry of free) {
      entry.leaseOwner = request.owner;
      entry.leaseExpiresAt = now + request.leaseMs;
    }
    return free.map((entry) => entry.record);
  }

  /** {@inheritDoc PaymentJournal.renew} */
  async renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]> {
    const now = this.#now();
    const held: string[] = [];
    for (const referenceId of referenceIds) {
      const entry = this.#entries.get(referenceId);
      if (entry === undefined || entry.leaseOwner !== owner || entry.leaseExpiresAt <= now) continue;
      entry.leaseExpiresAt = now + leaseMs;
      held.push(referenceId);
    }
    return held;
  }

  /** {@inheritDoc PaymentJournal.release} */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    for (const referenceId of referenceIds) {
      const entry = this.#entries.get(referenceId);
      if (entry === undefined || entry.leaseOwner !== owner) continue;
      entry.leaseOwner = undefined;
      entry.leaseExpiresAt = 0;
    }
  }

  /** Nothing to free; present so code that closes any journal can close this one. */
  async close(): Promise<void> {}
}

/** The journal's order: `createdAt`, then `referenceId`. ISO 8601 UTC strings of one shape sort as text. */
export function oldestFirst(a: PaymentRecord, b: PaymentRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  if (a.referenceId === b.referenceId) return 0;
  return a.referenceId < b.referenceId ? -1 : 1;
}

function freeze(record: PaymentRecord): PaymentRecord {
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (value !== undefined) copy[key] = value;
  }
  if (record.error !== undefined) copy.error = Object.freeze({ ...record.error });
  return Object.freeze(copy) as unknown as PaymentRecord;
}
