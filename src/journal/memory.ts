/**
 * `MemoryJournal`: a payment journal held in this process's memory. It survives nothing (a crash loses it);
 * use it in tests, and to share open payments between settlement workers of one process. For a till that
 * must survive a restart, use `SqliteJournal` (`tap-collections-sdk/sqlite`) or `PostgresJournal`.
 *
 * @module
 */
import { allocateBudget, type BudgetGrant, type BudgetRequest, type BudgetState, budgetRequestProblem } from './budget.js';
import {
  contradictionOf,
  eventOf,
  isContradictionMark,
  isDeploymentKnown,
  isOpenPaymentState,
  type LeaseRequest,
  type NewPaymentRecord,
  type PaymentChange,
  type PaymentEvent,
  type PaymentFilter,
  type PaymentJournal,
  type PaymentRecord,
  type PaymentState,
  type PaymentTransition,
  stateCounts,
  withDecidableAt,
} from './journal.js';

/** Options of {@link MemoryJournal}. */
export interface MemoryJournalOptions {
  /**
   * The journal's clock, in milliseconds: it stamps `createdAt`/`updatedAt` and measures leases.
   * @defaultValue `Date.now`
   */
  readonly now?: (() => number) | undefined;
}

interface Entry {
  record: PaymentRecord;
  readonly events: PaymentEvent[];
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
  /** Records by state, kept with every write: {@link MemoryJournal.counts} never walks the records. */
  readonly #counts = stateCounts([]);
  /** The records marked with a contradiction, kept with every write: `list({ contradictions: true })` reads only these. */
  readonly #contradicted = new Set<string>();
  readonly #budgets = new Map<string, BudgetState>();
  readonly #now: () => number;

  /** @param options - see {@link MemoryJournalOptions}. */
  constructor(options: MemoryJournalOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** {@inheritDoc PaymentJournal.takeBudget} */
  async takeBudget(request: BudgetRequest): Promise<BudgetGrant> {
    const problem = budgetRequestProblem(request);
    if (problem !== undefined) throw new TypeError(`takeBudget: ${problem}`);
    const { state, grant } = allocateBudget(this.#budgets.get(request.key), request, this.#now());
    this.#budgets.set(request.key, state);
    return grant;
  }

  /** {@inheritDoc PaymentJournal.insert} */
  async insert(record: NewPaymentRecord): Promise<PaymentRecord | undefined> {
    if (this.#entries.has(record.referenceId)) return undefined;
    const at = this.#stamp();
    const stored = freeze({ ...record, createdAt: at, updatedAt: at, version: 1 });
    const event = eventOf(null, { ...record, by: 'initiate' }, at);
    this.#entries.set(record.referenceId, { record: stored, events: [event], leaseOwner: undefined, leaseExpiresAt: 0 });
    this.#counts[stored.state] += 1;
    return withDecidableAt(stored);
  }

  /** {@inheritDoc PaymentJournal.transition} */
  async transition(referenceId: string, expectedVersion: number, change: PaymentChange): Promise<PaymentTransition> {
    const entry = this.#entries.get(referenceId);
    if (entry === undefined) return { applied: false, record: undefined };
    const current = entry.record;
    const mark = isContradictionMark(current, change);
    if (current.version !== expectedVersion || (isOpenPaymentState(current.state) ? change.contradiction !== undefined : !mark)) {
      return { applied: false, record: withDecidableAt(current) };
    }
    // Never earlier than the write before, even if the clock was set back since.
    const stamp = this.#stamp();
    const at = stamp >= current.updatedAt ? stamp : current.updatedAt;
    const next: Record<string, unknown> = { ...current };
    if (mark) next.contradiction = contradictionOf(change, at);
    else {
      for (const [key, value] of Object.entries(change)) {
        if (value === undefined || key === 'by' || key === 'requestId' || key === 'contradiction') continue;
        // Where a push went is written once: a change names it only for a record that does not say it yet.
        if (key === 'deployment' && isDeploymentKnown(current.deployment)) continue;
        next[key] = value;
      }
    }
    next.updatedAt = at;
    next.version = current.version + 1;
    entry.record = freeze(next as unknown as PaymentRecord);
    if (mark) this.#contradicted.add(referenceId);
    this.#counts[current.state] -= 1;
    this.#counts[entry.record.state] += 1;
    entry.events.push(eventOf(current.state, change, at));
    return { applied: true, record: withDecidableAt(entry.record) };
  }

  /** {@inheritDoc PaymentJournal.now} */
  async now(): Promise<string> {
    return new Date(this.#now()).toISOString();
  }

  /** {@inheritDoc PaymentJournal.get} */
  async get(referenceId: string): Promise<PaymentRecord | undefined> {
    const record = this.#entries.get(referenceId)?.record;
    return record === undefined ? undefined : withDecidableAt(record);
  }

  /** {@inheritDoc PaymentJournal.counts} */
  async counts(): Promise<Record<PaymentState, number>> {
    return { ...this.#counts };
  }

  /** {@inheritDoc PaymentJournal.history} */
  async history(referenceId: string): Promise<PaymentEvent[]> {
    return [...(this.#entries.get(referenceId)?.events ?? [])];
  }

  /** A write's time, by the journal's clock. */
  #stamp(): string {
    return new Date(this.#now()).toISOString();
  }

  /** {@inheritDoc PaymentJournal.list} */
  async list(filter: PaymentFilter = {}): Promise<PaymentRecord[]> {
    const states = filter.states === undefined ? undefined : new Set(filter.states);
    const entries =
      filter.contradictions === true
        ? [...this.#contradicted].map((referenceId) => this.#entries.get(referenceId) as Entry)
        : [...this.#entries.values()];
    const records = entries
      .map((entry) => withDecidableAt(entry.record))
      .filter((record) => states === undefined || states.has(record.state))
      .sort(oldestFirst);
    return filter.limit === undefined ? records : records.slice(0, Math.max(0, filter.limit));
  }

  /** {@inheritDoc PaymentJournal.lease} */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    const now = this.#now();
    const free = [...this.#entries.values()]
      .filter((entry) => isOpenPaymentState(entry.record.state) && (entry.leaseOwner === undefined || entry.leaseExpiresAt <= now))
      // Due order: never leased (or released) first, newest first, then by when the lease ran out.
      .sort((a, b) => a.leaseExpiresAt - b.leaseExpiresAt || oldestFirst(b.record, a.record))
      .slice(0, Math.max(0, request.limit));
    for (const entry of free) {
      entry.leaseOwner = request.owner;
      entry.leaseExpiresAt = now + request.leaseMs;
    }
    return free.map((entry) => withDecidableAt(entry.record));
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
    // decidableAt is derived on every read, never kept.
    if (value !== undefined && key !== 'decidableAt') copy[key] = value;
  }
  if (record.error !== undefined) copy.error = Object.freeze({ ...record.error });
  if (record.contradiction !== undefined) copy.contradiction = Object.freeze({ ...record.contradiction });
  return Object.freeze(copy) as unknown as PaymentRecord;
}
