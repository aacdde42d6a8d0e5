// About 400 lines: the entry point and its one class, whose statements read best next to the code that runs them;
// the schema and its upgrades are in schema.ts.
/**
 * tap-collections-sdk/sqlite: `SqliteJournal`, a payment journal in a file on disk, on Node's built-in SQLite
 * (`node:sqlite`: no native addon, nothing to download). Node 22.13+ and 23.4+ have it without a flag; Deno 2.2+
 * provides `node:sqlite` too, and Bun from 1.4. On an older Bun use `MemoryJournal`, or write a store on `bun:sqlite`
 * and prove it with `checkPaymentJournal`.
 *
 * ```ts
 * import { CollectionsClient } from 'tap-collections-sdk';
 * import { SqliteJournal } from 'tap-collections-sdk/sqlite';
 *
 * const collections = new CollectionsClient({ journal: new SqliteJournal('payments.db') });
 * await collections.recover(); // after a restart: every payment that was in flight, brought to its outcome
 * ```
 *
 * @module tap-collections-sdk/sqlite
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Logger } from '../core/logger.js';
import { allocateBudget, type BudgetGrant, type BudgetRequest, type BudgetState, budgetRequestProblem } from '../journal/budget.js';
import {
  contradictionOf,
  eventOf,
  isContradictionMark,
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
  UNKNOWN_SEND_WINDOW_MS,
} from '../journal/journal.js';
import {
  deploymentColumn,
  EVENT_COLUMNS,
  eventToRow,
  RECORD_COLUMNS,
  RowReader,
  recordToRow,
  rowToEvent,
  rowToRecord,
  WRITES_BUMP,
  WRITES_COLUMN,
} from '../journal/record-row.js';
import { nodeSqlite } from './load.js';
import {
  BUDGETS,
  BUDGETS_SCHEMA,
  COLUMNS,
  COUNTS,
  COUNTS_SCHEMA,
  DROP_OLD_WRITER_TRIGGERS,
  HISTORY,
  HISTORY_SCHEMA,
  LOCK_EARLIER_RELEASES,
  listQuery,
  OPEN,
  REFUSE_OLD_WRITERS,
  SCHEMA,
  SCHEMA_VERSION,
  TABLE,
  upgradeSteps,
} from './schema.js';

/** Options of {@link SqliteJournal}. */
export interface SqliteJournalOptions {
  /**
   * How long a write waits for another process's write to finish before it fails, in milliseconds.
   * @defaultValue `5000`
   */
  readonly busyTimeoutMs?: number | undefined;
  /**
   * Flush every write to the disk before it resolves, not only the first write of each payment (see
   * {@link SqliteJournal}): each `initiate` then waits for two flushes instead of one.
   * @defaultValue `false`
   */
  readonly flushEveryWrite?: boolean | undefined;
  /**
   * The journal's clock, in milliseconds: it stamps every write and measures leases. Processes sharing one
   * file share the machine's clock.
   * @defaultValue `Date.now`
   */
  readonly now?: (() => number) | undefined;
  /** Where a row skipped because it cannot be read (corrupt, foreign) is reported, once per row. @defaultValue `console` */
  readonly logger?: Pick<Logger, 'warn'> | undefined;
}

interface Statements {
  readonly insert: StatementSync;
  readonly update: StatementSync;
  readonly markContradiction: StatementSync;
  readonly get: StatementSync;
  readonly appendEvent: StatementSync;
  readonly history: StatementSync;
  readonly leaseCandidates: StatementSync;
  readonly takeLease: StatementSync;
  readonly renew: StatementSync;
  readonly release: StatementSync;
}

/**
 * A {@link PaymentJournal} in an SQLite file, in WAL mode. Every write is committed before its promise resolves, so a
 * process killed at any instant loses nothing. Against a power cut, the write that matters is flushed to the disk:
 * `insert` (the record written before a push leaves) commits with `synchronous = FULL`, and the push waits for it.
 * Later writes (`pending`, settled, `not-sent`, leases) commit with `synchronous = NORMAL`: they reach the disk with
 * the next flush, in order, and a power cut can lose only the last few of them — each one a state that `recover()`
 * learns again from the service (the record stays open until it does). That halves the flushes per payment; set
 * `flushEveryWrite` to flush every write.
 *
 * Several processes of one machine may share the file: leases are taken in one `BEGIN IMMEDIATE` transaction, and a
 * write waits up to `busyTimeoutMs` for another's.
 *
 * The file and its table (`tap_payment_journal`) are created on first use, not by the constructor: a file that
 * cannot be opened rejects the first call (the client turns that into `JournalError`, and sends nothing).
 * Calls are synchronous inside (the `node:sqlite` API); each takes tens of microseconds plus the disk's flush.
 */
export class SqliteJournal implements PaymentJournal {
  readonly #filename: string;
  readonly #busyTimeoutMs: number;
  readonly #now: () => number;
  readonly #flushEveryWrite: boolean;
  #db: DatabaseSync | undefined;
  #statements: Statements | undefined;
  #budget: { read: StatementSync; write: StatementSync } | undefined;
  readonly #rows: RowReader;

  /**
   * @param filename - the database file (created when absent), or `':memory:'` for a private in-memory database.
   * @param options - see {@link SqliteJournalOptions}.
   * @throws `ConfigurationError` (the main entry's) on a runtime without `node:sqlite` (Node 20, Node 22 before 22.13), naming the version needed.
   */
  constructor(filename: string, options: SqliteJournalOptions = {}) {
    nodeSqlite(); // fails here, typed, on a runtime without node:sqlite
    this.#filename = filename;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.#now = options.now ?? Date.now;
    this.#flushEveryWrite = options.flushEveryWrite ?? false;
    const logger = options.logger ?? console;
    this.#rows = new RowReader((row) =>
      logger.warn('SqliteJournal: skipped a row that cannot be read', { referenceId: row.referenceId, reason: row.reason }),
    );
  }

  /** Writes a new record (version 1, stamped by this machine's clock) with its first event; `undefined` when its `referenceId` exists. */
  async insert(record: NewPaymentRecord): Promise<PaymentRecord | undefined> {
    const statements = this.#open();
    const db = this.#database();
    // Only the write a push waits for is flushed to the disk before it resolves (see flushEveryWrite).
    if (!this.#flushEveryWrite) db.exec('PRAGMA synchronous = FULL');
    try {
      return this.#transaction(() => {
        const at = this.#stamp();
        const row = statements.insert.get(...recordToRow(record, at));
        if (row === undefined) return undefined;
        statements.appendEvent.run(...eventToRow(record.referenceId, eventOf(null, { ...record, by: 'initiate' }, at)));
        return rowToRecord(row);
      });
    } finally {
      if (!this.#flushEveryWrite) db.exec('PRAGMA synchronous = NORMAL');
    }
  }

  /** Applies `change` if the record still has `expectedVersion` and is open, with its event, in one transaction. */
  async transition(referenceId: string, expectedVersion: number, change: PaymentChange): Promise<PaymentTransition> {
    const statements = this.#open();
    return this.#transaction((): PaymentTransition => {
      const before = statements.get.get(referenceId);
      if (before === undefined) return { applied: false, record: undefined };
      const current = rowToRecord(before);
      const mark = isContradictionMark(current, change);
      const allowed = isOpenPaymentState(current.state) ? change.contradiction === undefined : mark;
      if (current.version !== expectedVersion || !allowed) return { applied: false, record: current };
      // Never earlier than the write before, even if the machine's clock was set back since.
      const at = latest(this.#stamp(), current.updatedAt);
      if (mark) {
        const marked = statements.markContradiction.get(JSON.stringify(contradictionOf(change, at)), at, referenceId, expectedVersion);
        if (marked === undefined) return { applied: false, record: current };
        statements.appendEvent.run(...eventToRow(referenceId, eventOf(current.state, change, at)));
        return { applied: true, record: rowToRecord(marked) };
      }
      const updated = statements.update.get(
        change.state,
        at,
        change.statusText ?? null,
        change.transactionCode ?? null,
        change.reason ?? null,
        change.error === undefined ? null : JSON.stringify(change.error),
        change.sendWindowMs ?? null,
        deploymentColumn(change.deployment),
        referenceId,
        expectedVersion,
      );
      if (updated === undefined) return { applied: false, record: current };
      statements.appendEvent.run(...eventToRow(referenceId, eventOf(current.state, change, at)));
      return { applied: true, record: rowToRecord(updated) };
    });
  }

  /** This machine's clock (the journal's clock for every process sharing the file). */
  async now(): Promise<string> {
    return this.#stamp();
  }

  /** The record for `referenceId`, or `undefined`. */
  async get(referenceId: string): Promise<PaymentRecord | undefined> {
    const row = this.#open().get.get(referenceId);
    return row === undefined ? undefined : this.#rows.read(row);
  }

  /** Every change of the payment, oldest first. */
  async history(referenceId: string): Promise<PaymentEvent[]> {
    return this.#open().history.all(referenceId).map(rowToEvent);
  }

  #stamp(): string {
    return new Date(this.#now()).toISOString();
  }

  /** How many records are in each state: read from the counters the file's triggers keep (seven rows at most). */
  async counts(): Promise<Record<PaymentState, number>> {
    const rows = this.#database().prepare(`SELECT state, n FROM ${COUNTS}`).all() as { state: string; n: number }[];
    return stateCounts(rows.map((row) => [row.state, Number(row.n)] as const));
  }

  /**
   * Records matching `filter`, oldest first (by `createdAt`, then `referenceId`). With `contradictions`, the file's
   * partial index of marked records is read, never the others.
   */
  async list(filter: PaymentFilter = {}): Promise<PaymentRecord[]> {
    const db = this.#database();
    if (filter.states !== undefined && filter.states.length === 0) return [];
    const { sql, parameters } = listQuery(filter);
    return this.#rows.readAll(db.prepare(sql).all(...parameters));
  }

  /** Leases up to `limit` open, unleased (or expired) records to `owner`, oldest first, in one transaction. */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    if (request.limit <= 0) return [];
    const statements = this.#open();
    return this.#transaction(() => {
      const now = this.#now();
      const records = this.#rows.readAll(statements.leaseCandidates.all(now, Math.floor(request.limit)));
      // Only rows that could be read are leased: a row that cannot be read is never left leased.
      for (const record of records) statements.takeLease.run(request.owner, now + request.leaseMs, record.referenceId);
      return records;
    });
  }

  /** Extends `owner`'s live leases on `referenceIds`; resolves with the ids it still held. */
  async renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]> {
    const statements = this.#open();
    return this.#transaction(() => {
      const now = this.#now();
      return referenceIds.filter((referenceId) => Number(statements.renew.run(now + leaseMs, referenceId, owner, now).changes) === 1);
    });
  }

  /** Ends `owner`'s leases on `referenceIds`. */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    const statements = this.#open();
    this.#transaction(() => {
      for (const referenceId of referenceIds) statements.release.run(referenceId, owner);
    });
  }

  /**
   * Renews a holder's share of a key's rate budget (see `allocateBudget`), in one `BEGIN IMMEDIATE` transaction: the
   * processes sharing the file share the budget. Kept in `tap_payment_journal_budgets`
   * (one row per key digest), created on first use.
   */
  async takeBudget(request: BudgetRequest): Promise<BudgetGrant> {
    const problem = budgetRequestProblem(request);
    if (problem !== undefined) throw new TypeError(`takeBudget: ${problem}`);
    const statements = this.#budgetStatements();
    return this.#transaction(() => {
      const row = statements.read.get(request.key) as { state: string } | undefined;
      const { state, grant } = allocateBudget(row === undefined ? undefined : (JSON.parse(row.state) as BudgetState), request, this.#now());
      statements.write.run(request.key, JSON.stringify(state));
      return grant;
    });
  }

  #budgetStatements(): { read: StatementSync; write: StatementSync } {
    if (this.#budget !== undefined && this.#db !== undefined) return this.#budget;
    const db = this.#database();
    // The table (with its lock against earlier releases) is made when the file is opened.
    this.#budget = {
      read: db.prepare(`SELECT state FROM ${BUDGETS} WHERE key = ?`),
      write: db.prepare(
        `INSERT INTO ${BUDGETS} (key, state, ${WRITES_COLUMN}) VALUES (?, ?, 1)
         ON CONFLICT (key) DO UPDATE SET state = excluded.state, ${WRITES_BUMP}`,
      ),
    };
    return this.#budget;
  }

  /** Closes the database file. A later call opens it again. */
  async close(): Promise<void> {
    const db = this.#db;
    this.#db = undefined;
    this.#statements = undefined;
    this.#budget = undefined;
    db?.close();
  }

  #transaction<T>(work: () => T): T {
    const db = this.#database();
    // IMMEDIATE takes the write lock at once, so two processes never both read the same free record.
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }

  #database(): DatabaseSync {
    if (this.#db !== undefined) return this.#db;
    const db = new (nodeSqlite().DatabaseSync)(this.#filename);
    try {
      // busy_timeout first: the schema statements below may wait for another process opening the same file.
      db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(this.#busyTimeoutMs))}`);
      db.exec('PRAGMA journal_mode = WAL');
      db.exec(`PRAGMA synchronous = ${this.#flushEveryWrite ? 'FULL' : 'NORMAL'}`);
      const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
      if (version > SCHEMA_VERSION) {
        throw new Error(`${TABLE} has schema version ${version}; this SDK knows version ${SCHEMA_VERSION}: upgrade the SDK`);
      }
      db.exec('BEGIN IMMEDIATE');
      try {
        // Read again under the write lock: another process may have upgraded the file meanwhile.
        const current = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
        const exists = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(TABLE) !== undefined;
        if (!exists || current < SCHEMA_VERSION) {
          db.exec(DROP_OLD_WRITER_TRIGGERS);
          if (exists) {
            const columns = new Set(
              db
                .prepare(`SELECT name FROM pragma_table_info('${TABLE}')`)
                .all()
                .map((row) => String(row.name)),
            );
            for (const step of upgradeSteps(columns)) db.exec(step);
            // A record written without a window (the first release kept none) is judged by the longest one possible.
            db.prepare(`UPDATE ${TABLE} SET send_window_ms = ?, ${WRITES_BUMP} WHERE send_window_ms IS NULL AND state IN ${OPEN}`).run(
              UNKNOWN_SEND_WINDOW_MS,
            );
            // The budgets of the release before this one: the same rows, under the lock from now on.
            const budgets = db.prepare(`SELECT name FROM pragma_table_info('${BUDGETS}')`).all();
            if (budgets.length > 0 && !budgets.some((row) => row.name === WRITES_COLUMN))
              db.exec(`ALTER TABLE ${BUDGETS} ADD COLUMN ${WRITES_COLUMN} INTEGER`);
          }
          db.exec(SCHEMA);
          db.exec(HISTORY_SCHEMA);
          db.exec(BUDGETS_SCHEMA);
          db.exec(REFUSE_OLD_WRITERS);
          db.exec(LOCK_EARLIER_RELEASES);
          db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        }
        // The counters of counts() (older files have none): made once, from the records already there.
        const counted = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?`).get(`${COUNTS}_insert`) !== undefined;
        if (!counted) db.exec(COUNTS_SCHEMA);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    } catch (error) {
      db.close();
      throw error;
    }
    this.#db = db;
    return db;
  }

  #open(): Statements {
    if (this.#statements !== undefined && this.#db !== undefined) return this.#statements;
    const db = this.#database();
    this.#statements = {
      insert: db.prepare(
        `INSERT INTO ${TABLE} (${COLUMNS}) VALUES (${RECORD_COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (reference_id) DO NOTHING RETURNING ${COLUMNS}`,
      ),
      update: db.prepare(
        `UPDATE ${TABLE} SET state = ?, updated_at = ?, status_text = COALESCE(?, status_text),
           transaction_code = COALESCE(?, transaction_code), reason = COALESCE(?, reason), error = COALESCE(?, error),
           send_window_ms = COALESCE(?, send_window_ms), deployment = CASE WHEN deployment IS NULL OR json_extract(deployment, '$.account') = '' THEN COALESCE(?, deployment) ELSE deployment END,
           version = version + 1, ${WRITES_BUMP}
         WHERE reference_id = ? AND version = ? AND state IN ${OPEN} RETURNING ${COLUMNS}`,
      ),
      // The one write a final record takes: the service's contradicting answer, nothing else.
      markContradiction: db.prepare(
        `UPDATE ${TABLE} SET contradiction = ?, updated_at = ?, version = version + 1, ${WRITES_BUMP}
         WHERE reference_id = ? AND version = ? AND state NOT IN ${OPEN} RETURNING ${COLUMNS}`,
      ),
      appendEvent: db.prepare(`INSERT INTO ${HISTORY} (${EVENT_COLUMNS.join(', ')}) VALUES (${EVENT_COLUMNS.map(() => '?').join(', ')})`),
      history: db.prepare(`SELECT ${EVENT_COLUMNS.join(', ')} FROM ${HISTORY} WHERE reference_id = ? ORDER BY id`),
      get: db.prepare(`SELECT ${COLUMNS} FROM ${TABLE} WHERE reference_id = ?`),
      leaseCandidates: db.prepare(
        `SELECT ${COLUMNS} FROM ${TABLE} WHERE state IN ${OPEN} AND (leased_to IS NULL OR leased_until <= ?)
           AND length(reference_id) = 36 AND (error IS NULL OR json_valid(error))
         ORDER BY leased_until, created_at DESC, reference_id DESC LIMIT ?`,
      ),
      // Every update names the writes column, leases too: the lock refuses an update that does not (an earlier release's).
      takeLease: db.prepare(`UPDATE ${TABLE} SET leased_to = ?, leased_until = ?, ${WRITES_BUMP} WHERE reference_id = ?`),
      renew: db.prepare(
        `UPDATE ${TABLE} SET leased_until = ?, ${WRITES_BUMP} WHERE reference_id = ? AND leased_to = ? AND leased_until > ?`,
      ),
      release: db.prepare(
        `UPDATE ${TABLE} SET leased_to = NULL, leased_until = 0, ${WRITES_BUMP} WHERE reference_id = ? AND leased_to = ?`,
      ),
    };
    return this.#statements;
  }
}

/** The later of two ISO 8601 times of one shape (they order as text). */
function latest(a: string, b: string): string {
  return a >= b ? a : b;
}
