/**
 * The PostgreSQL variant's store (`SIM_JOURNAL=postgres`): a model of `PostgresJournal` (src/postgres/journal.ts)
 * under PostgreSQL's default isolation, READ COMMITTED, on the simulation's scheduler. Each of the journal's SQL
 * statements is a statement here, with what READ COMMITTED lets the SDK see:
 *
 * - A statement starts when it reaches the server, and `now()` is that start, by the journal's clock (offset and
 *   jumps included): a write stamps `updated_at = GREATEST(now(), updated_at)` (`created_at` too, on insert) and a
 *   lease measures `leased_until` from it, even when the statement then waits for a row lock, so a write is stamped
 *   earlier than the moment it commits and becomes visible, and two writers' stamps need not follow their commit order
 *   across rows.
 * - A write locks its rows (`FOR UPDATE`, `UPDATE`, the insert's key), holds them while it runs and commits later; a
 *   write on a row another in-flight statement holds waits, then applies to the newest committed version: the
 *   compare-and-set of `transition` (`WHERE version = $2 ... FOR UPDATE`) is evaluated there, so it fails if the row
 *   changed meanwhile, and `renew`/`release` re-check their owner.
 * - A failed `transition` answers with a second statement (`get`), issued after the first's answer came back: it sees
 *   the newest committed version as of its own start, which may be newer than the one that beat the write (or in
 *   another state).
 * - Every read statement (`get`, `list`, `now`, `history`, `counts`) sees what was committed when it started; a `list`
 *   followed by `get`s sees several moments.
 * - `lease` is `FOR UPDATE SKIP LOCKED`: rows an in-flight statement holds are skipped (a lease returns fewer rows,
 *   never a row twice), in `PostgresJournal`'s order (never leased first, newest first, then by when the lease ran
 *   out), measured by the statement's `now()`; `renew` extends a lease still owned even if it ran out (the row was
 *   not leased by another), as `PostgresJournal` does.
 * - `takeBudget` is the real `takeBudgetRow` (src/postgres/budget.ts) on a pool that runs its three statements here:
 *   the budget row read with the server's clock, then a compare-and-set on its version (`UPDATE ... WHERE version =
 *   $3`, or the first `INSERT ... ON CONFLICT DO NOTHING`), each its own statement, read again on a conflict.
 *
 * The records' contents (fields, events, contradiction marks, counts) are kept by a real `MemoryJournal` whose clock
 * is frozen at the statement's start while a write commits: the rows' committed state. Leases and budget rows are
 * kept here (their statements differ from `MemoryJournal`'s). Left out: deadlocks (a statement takes all its rows at
 * once, in no order that could cross another's; `PostgresJournal`'s statements lock one row, or several in index
 * order), serialization failures (none in READ COMMITTED for these statements), aborted transactions (every
 * statement that starts commits, even if its client died meanwhile), the UUID filter of `lease` (the simulation
 * writes only UUID references), and the pool (a statement never waits for a connection).
 *
 * No vitest import (see scheduler.ts).
 */
import type { BudgetGrant, BudgetRequest, BudgetState } from '../../src/journal/budget.js';
import {
  isOpenPaymentState,
  type LeaseRequest,
  type NewPaymentRecord,
  OPEN_PAYMENT_STATES,
  type PaymentChange,
  type PaymentRecord,
  type PaymentTransition,
} from '../../src/journal/journal.js';
import { MemoryJournal, oldestFirst } from '../../src/journal/memory.js';
import { takeBudgetRow } from '../../src/postgres/budget.js';
import type { PostgresPool, PostgresQueryResult } from '../../src/postgres/pool.js';
import type { Proc, Scheduler } from './scheduler.js';

/** One statement on the server: the rows it locks, and whose turn it is. */
interface Statement {
  readonly keys: readonly string[];
  readonly label: string;
  readonly go: () => void;
}

/** When a write statement started (true time): the moment its `now()` was read, so the time its stamp stands for. */
export interface Started {
  readonly at: number;
  /** The journal's clock then (ms): `now()`. */
  readonly stamp: number;
}

export class PostgresModel {
  /** The rows' committed state (records, events, counts); every write goes through a statement. */
  readonly rows: MemoryJournal;
  readonly #hits: Map<string, number>;
  readonly #sim: Scheduler;
  readonly #random: () => number;
  readonly #clock: () => number;
  /** The longest a write statement holds its row locks before it commits (its run, the commit's flush), now. */
  readonly #maxHoldMs: () => number;
  /** The client's side of a round trip between two statements of one method (the journal's latency, both ways). */
  readonly #roundTrip: () => number;
  #frozen: number | undefined;
  readonly #held = new Map<string, Statement>();
  readonly #waiting: Statement[] = [];
  readonly #leases = new Map<string, { owner: string; until: number }>();
  readonly #budgets = new Map<string, { version: number; state: BudgetState }>();

  /**
   * @param clock - the journal's clock (true time plus its offset).
   * @param roundTrip - the time from a statement's answer to the client's next statement reaching the server.
   * @param maxHoldMs - the longest a write statement holds its row locks before it commits, now.
   * @param hits - where the rare paths it takes are counted (the journal's probes).
   */
  constructor(
    sim: Scheduler,
    random: () => number,
    clock: () => number,
    roundTrip: () => number,
    maxHoldMs: () => number,
    hits: Map<string, number>,
  ) {
    this.#sim = sim;
    this.#hits = hits;
    this.#random = random;
    this.#clock = clock;
    this.#roundTrip = roundTrip;
    this.#maxHoldMs = maxHoldMs;
    this.rows = new MemoryJournal({ now: () => this.#frozen ?? this.#clock() });
  }

  #hit(what: string): void {
    this.#hits.set(what, (this.#hits.get(what) ?? 0) + 1);
  }

  #started(): Started {
    return { at: this.#sim.now, stamp: this.#clock() };
  }

  /** Runs `apply` on the committed rows with `now()` frozen at the statement's start (the stores stamp synchronously). */
  #at<T>(started: Started, apply: () => Promise<T>): Promise<T> {
    this.#frozen = started.stamp;
    try {
      return apply();
    } finally {
      this.#frozen = undefined;
    }
  }

  /**
   * A write statement starting now: it locks `keys` (waiting behind the statements that hold any of them), holds
   * them for its run, then commits `commit` on the newest committed rows and releases them. The server's work: it
   * goes on if its client dies meanwhile.
   */
  #write<T>(label: string, keys: readonly string[], commit: (started: Started) => Promise<T>): Promise<T> {
    const started = this.#started();
    return new Promise<T>((resolve, reject) => {
      const statement: Statement = {
        keys,
        label,
        go: () => {
          for (const key of keys) this.#held.set(key, statement);
          const holdMs = Math.floor(this.#random() * (this.#maxHoldMs() + 1));
          this.#sim.at(this.#sim.now + holdMs, undefined, `postgres commits ${label}`, () => {
            commit(started)
              .then(resolve, reject)
              .finally(() => {
                for (const key of keys) this.#held.delete(key);
                this.#wake();
              });
          });
        },
      };
      if (keys.some((key) => this.#held.has(key))) {
        this.#hit(
          keys.some((key) => key.startsWith('budget:'))
            ? 'postgres: a budget write waited for the row lock'
            : `postgres: ${label.split(' ')[0]} waited for a row lock`,
        );
        this.#waiting.push(statement);
      } else statement.go();
    });
  }

  /** The waiting statements whose rows are all free now take them, first come first served. */
  #wake(): void {
    for (let i = 0; i < this.#waiting.length; ) {
      const statement = this.#waiting[i] as Statement;
      if (statement.keys.some((key) => this.#held.has(key))) i++;
      else {
        this.#waiting.splice(i, 1);
        statement.go();
      }
    }
  }

  /** The client's next statement of one method: it reaches the server a round trip after the last one answered. */
  #next<T>(proc: Proc, label: string, statement: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#sim.at(this.#sim.now + this.#roundTrip(), proc, `postgres ${label}`, () => {
        statement().then(resolve, reject);
      });
    });
  }

  /** `INSERT ... ON CONFLICT (reference_id) DO NOTHING`: a concurrent insert of the key waits for the first to commit. */
  insert(
    record: NewPaymentRecord,
    committed: (inserted: PaymentRecord | undefined, started: Started) => void,
  ): Promise<PaymentRecord | undefined> {
    return this.#write(`insert ${record.referenceId.slice(0, 8)}`, [record.referenceId], async (started) => {
      const inserted = await this.#at(started, () => this.rows.insert(record));
      committed(inserted, started);
      return inserted;
    });
  }

  /**
   * The conditional update (`WHERE version = $2 ... FOR UPDATE`), evaluated on the newest committed version once the
   * row is locked; on failure, `get` as a second statement of the client's.
   */
  async transition(
    proc: Proc,
    referenceId: string,
    expectedVersion: number,
    change: PaymentChange,
    committed: (before: PaymentRecord | undefined, result: PaymentTransition, started: Started) => void,
  ): Promise<PaymentTransition> {
    let beaten: PaymentRecord | undefined;
    const result = await this.#write(`transition ${referenceId.slice(0, 8)} v${expectedVersion}`, [referenceId], async (started) => {
      const before = await this.rows.get(referenceId);
      const outcome = await this.#at(started, () => this.rows.transition(referenceId, expectedVersion, change));
      committed(before, outcome, started);
      beaten = before;
      return outcome;
    });
    if (result.applied) return result;
    const record = await this.#next(proc, `get ${referenceId.slice(0, 8)} after a failed transition`, () => this.get(referenceId));
    if (record !== undefined && beaten !== undefined && record.version !== beaten.version)
      this.#hit("postgres: a failed transition's read saw a newer version than the one that beat it");
    return { applied: false, record };
  }

  /** A read: what was committed when it started. */
  get(referenceId: string): Promise<PaymentRecord | undefined> {
    return this.rows.get(referenceId);
  }

  /** `SELECT now()`: the statement's start by the journal's clock. */
  async now(): Promise<string> {
    return new Date(this.#clock()).toISOString();
  }

  /**
   * `FOR UPDATE SKIP LOCKED`: open rows nobody holds a lease on (or whose lease ran out by the statement's `now()`),
   * never leased first, newest first, then by when the lease ran out; rows an in-flight statement holds are skipped.
   */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    const stamp = this.#clock();
    const open = await this.rows.list({ states: OPEN_PAYMENT_STATES });
    const free = open.filter((record) => {
      const lease = this.#leases.get(record.referenceId);
      return lease === undefined || lease.until <= stamp;
    });
    const skipped = free.filter((record) => this.#held.has(record.referenceId)).length;
    if (skipped > 0) this.#hit('postgres: a lease skipped a locked row');
    const chosen = free
      .filter((record) => !this.#held.has(record.referenceId))
      .sort((a, b) => (this.#leases.get(a.referenceId)?.until ?? 0) - (this.#leases.get(b.referenceId)?.until ?? 0) || oldestFirst(b, a))
      .slice(0, Math.max(0, request.limit));
    const ids = chosen.map((record) => record.referenceId);
    // Locked as they are chosen: nobody changed them since the statement began.
    return this.#write('lease', ids, async () => {
      for (const id of ids) this.#leases.set(id, { owner: request.owner, until: stamp + request.leaseMs });
      return chosen.sort(oldestFirst);
    });
  }

  /** `UPDATE ... WHERE leased_to = $1 AND state IN open`: the owner's leases extended from the statement's `now()`. */
  renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]> {
    const ids = referenceIds.filter((id) => this.#leases.get(id)?.owner === owner);
    return this.#write('renew', ids, async (started) => {
      const kept: string[] = [];
      for (const id of ids) {
        const record = await this.rows.get(id);
        const lease = this.#leases.get(id);
        if (record === undefined || !isOpenPaymentState(record.state) || lease?.owner !== owner) continue;
        this.#leases.set(id, { owner, until: started.stamp + leaseMs });
        kept.push(id);
      }
      return kept;
    });
  }

  /** `UPDATE ... SET leased_to = NULL WHERE leased_to = $1`. */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    const ids = referenceIds.filter((id) => this.#leases.get(id)?.owner === owner);
    await this.#write('release', ids, async () => {
      for (const id of ids) if (this.#leases.get(id)?.owner === owner) this.#leases.delete(id);
    });
  }

  /** The real `takeBudgetRow` on a pool whose statements run here, each after the last one's round trip. */
  takeBudget(proc: Proc, request: BudgetRequest): Promise<BudgetGrant> {
    let statements = 0;
    const pool: PostgresPool = {
      end: async () => {},
      query: (text: string, values: unknown[]): Promise<PostgresQueryResult> => {
        const statement = () => this.#budgetStatement(text, values);
        return statements++ === 0 ? statement() : this.#next(proc, 'budget statement', statement);
      },
    };
    return takeBudgetRow(pool, 'budgets', request).catch((error: unknown) => {
      this.#hit('postgres: the budget row stayed contended');
      throw error;
    });
  }

  /** The budget row's three statements, read from their text as the server would run them. */
  async #budgetStatement(text: string, values: unknown[]): Promise<PostgresQueryResult> {
    const key = String(values[0]);
    const sql = text.trim();
    if (sql.startsWith('SELECT')) {
      const row = this.#budgets.get(key);
      return answer([{ now: this.#clock(), version: row?.version ?? null, state: row === undefined ? null : structuredClone(row.state) }]);
    }
    const state = JSON.parse(String(values[1])) as BudgetState;
    if (sql.startsWith('INSERT')) {
      return this.#write('budget insert', [`budget:${key}`], async () => {
        if (this.#budgets.has(key)) {
          this.#hit('postgres: a budget write lost its compare-and-set');
          return answer([]);
        }
        this.#budgets.set(key, { version: 1, state });
        return answer([{ version: 1 }]);
      });
    }
    if (!sql.startsWith('UPDATE')) throw new Error(`the PostgreSQL model does not know the statement ${sql.slice(0, 40)}`);
    // The compare-and-set as the statement says it: re-checked on the newest committed version once the row is locked.
    const compares = /\bversion\s*=\s*\$3/.test(sql);
    return this.#write('budget update', [`budget:${key}`], async () => {
      const row = this.#budgets.get(key);
      if (row === undefined || (compares && row.version !== Number(values[2]))) {
        this.#hit('postgres: a budget write lost its compare-and-set');
        return answer([]);
      }
      this.#budgets.set(key, { version: row.version + 1, state });
      return answer([{ version: row.version + 1 }]);
    });
  }
}

function answer(rows: unknown[]): PostgresQueryResult {
  return { rows, rowCount: rows.length };
}
