/**
 * `PostgresJournal`: the {@link PaymentJournal} in PostgreSQL, one statement per method. About 410 lines, one
 * concern: the class and its statements, each read best next to the code that runs it (the schema, pool, listener
 * and budget row have their own files).
 */

import type { Logger } from '../core/logger.js';
import { type BudgetGrant, type BudgetRequest, budgetRequestProblem } from '../journal/budget.js';
import type {
  LeaseRequest,
  NewPaymentRecord,
  PaymentChange,
  PaymentEvent,
  PaymentFilter,
  PaymentJournal,
  PaymentRecord,
  PaymentState,
  PaymentTransition,
} from '../journal/journal.js';
import { stateCounts } from '../journal/journal.js';
import {
  deploymentColumn,
  RECORD_COLUMNS,
  type RecordRow,
  RowReader,
  recordToRow,
  rowToEvent,
  rowToRecord,
  WRITES_BUMP,
} from '../journal/record-row.js';
import { takeBudgetRow } from './budget.js';
import { Listener } from './listener.js';
import { openPool, type PostgresPool, type PostgresQueryResult } from './pool.js';
import { budgetsTableSql, listQuery, migrationSql, NOW, OPEN, type TableNames, tableNames, UUID_SQL } from './schema.js';

/** Options of {@link PostgresJournal}: a connection string (the journal opens and owns a pool) or your pool. */
export type PostgresJournalOptions = (
  | {
      /** `postgres://user:password@host:5432/database`; the journal opens a `pg.Pool` (10 connections) and `close()` ends it. */
      connectionString: string;
      /** Not with `connectionString`. */
      pool?: never;
    }
  | {
      /** A `pg.Pool` you own (the journal never ends it). */
      pool: PostgresPool;
      /** Not with `pool`. */
      connectionString?: never;
    }
) & {
  /**
   * The table's name: letters, digits and `_`, not starting with a digit, at most 47 characters (PostgreSQL
   * cuts names at 63, and the history table and the indexes add a suffix to it); created
   * on first use (or by {@link PostgresJournal.migrate}). @defaultValue `'tap_payment_journal'`
   */
  tableName?: string | undefined;
  /** The schema the table lives in (same rules as `tableName`). @defaultValue the connection's `search_path` */
  schema?: string | undefined;
  /**
   * Where the journal reports what it rides out: a connection of its own pool that broke (the database
   * restarted or is unreachable: calls fail until it is back, nothing crashes) and a row it skipped because it
   * cannot be read (once per row). @defaultValue `console`
   */
  logger?: Pick<Logger, 'warn'> | undefined;
};

/**
 * A {@link PaymentJournal} in one PostgreSQL table.
 *
 * - Every method is one statement (autocommit), so a method that resolves has committed its write.
 * - Leases are claimed with `FOR UPDATE SKIP LOCKED` and measured by the database server's clock
 *   (`now()`), so workers on machines whose clocks disagree still never hold one record at once.
 * - The table is created on first use (under an advisory lock, so processes starting together do not
 *   race), or ahead of time with {@link PostgresJournal.migrate}.
 */
export class PostgresJournal implements PaymentJournal {
  readonly #names: TableNames;
  readonly #table: string;
  /** The records by state, kept by a trigger (see migrate). */
  readonly #counts: string;
  readonly #history: string;
  readonly #ownsPool: boolean;
  readonly #connectionString: string | undefined;
  #pool: PostgresPool | Promise<PostgresPool> | undefined;
  #ready: Promise<void> | undefined;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #rows: RowReader;
  readonly #channel: string;
  /** When the last broken connection was logged: one line per outage, not one per pooled connection. */
  #brokenLoggedAt = 0;
  #listener: Listener | undefined;
  readonly #budgets: string;
  #budgetsReady: Promise<void> | undefined;

  /** @throws TypeError on a missing connection or a table or schema name that is not a plain identifier. */
  constructor(options: PostgresJournalOptions) {
    const { tableName = 'tap_payment_journal', schema } = options ?? ({} as PostgresJournalOptions);
    const names = tableNames(tableName, schema);
    if (options?.pool !== undefined) {
      if (typeof options.pool.query !== 'function') throw new TypeError('PostgresJournal: pool must have a query method');
      this.#pool = options.pool;
      this.#ownsPool = false;
    } else if (typeof options?.connectionString === 'string' && options.connectionString !== '') {
      this.#connectionString = options.connectionString;
      this.#ownsPool = true;
    } else {
      throw new TypeError('PostgresJournal: pass { connectionString } or { pool }');
    }
    this.#names = names;
    this.#table = names.table;
    this.#history = names.history;
    this.#counts = names.counts;
    this.#budgets = names.budgets;
    this.#logger = options.logger ?? console;
    this.#rows = new RowReader((row) =>
      this.#logger.warn(`PostgresJournal: skipped a row of ${tableName} that cannot be read`, {
        referenceId: row.referenceId,
        reason: row.reason,
      }),
    );
    this.#channel = names.channel;
  }

  /**
   * Creates the table and its index if they do not exist (idempotent, safe from several processes at
   * once). Called on first use; call it yourself to create the schema at deploy time instead.
   */
  migrate(): Promise<void> {
    this.#ready ??= this.#migrate().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #migrate(): Promise<void> {
    const pool = await this.#poolOf();
    await pool.query(migrationSql(this.#names));
  }

  async #poolOf(): Promise<PostgresPool> {
    if (this.#pool === undefined) {
      const connectionString = this.#connectionString as string;
      this.#pool = openPool(connectionString, (error) => this.#connectionBroke(error));
    }
    return this.#pool;
  }

  /** One log line per outage: every pooled connection breaks at once when the database restarts. */
  #connectionBroke(error: Error): void {
    const now = Date.now();
    if (now - this.#brokenLoggedAt < 10_000) return;
    this.#brokenLoggedAt = now;
    this.#logger.warn('PostgresJournal: a database connection broke; calls fail until the database is back', { reason: error.message });
  }

  async #query(text: string, values: unknown[]): Promise<PostgresQueryResult> {
    await this.migrate();
    const pool = await this.#poolOf();
    return pool.query(text, values);
  }

  /** Writes a new record (version 1, stamped by the server's clock) with its first event, in one statement; `undefined` when its `referenceId` exists. */
  async insert(record: NewPaymentRecord): Promise<PaymentRecord | undefined> {
    // The two time columns are bound as NULL and take the server's now().
    const placeholders = RECORD_COLUMNS.map((column, index) =>
      column === 'created_at' || column === 'updated_at' ? `COALESCE($${index + 1}::timestamptz, ${NOW})` : `$${index + 1}`,
    );
    const result = await this.#query(
      `WITH inserted AS (
         INSERT INTO ${this.#table} (${RECORD_COLUMNS.join(', ')})
         VALUES (${placeholders.join(', ')})
         ON CONFLICT (reference_id) DO NOTHING
         RETURNING *
       ), event AS (
         INSERT INTO ${this.#history} (reference_id, at, from_state, to_state, status_text, by)
         SELECT reference_id, updated_at, NULL, state, status_text, 'initiate' FROM inserted
       )
       SELECT * FROM inserted`,
      recordToRow(record, null),
    );
    return result.rows.length === 1 ? rowToRecord(result.rows[0] as RecordRow) : undefined;
  }

  /**
   * Applies `change` if the record still has `expectedVersion` and is open, and appends its event, in one
   * statement (the row locked while its state before is read).
   */
  async transition(referenceId: string, expectedVersion: number, change: PaymentChange): Promise<PaymentTransition> {
    if (change.contradiction !== undefined) return this.#markContradiction(referenceId, expectedVersion, change);
    const result = await this.#query(
      `WITH before AS (
         SELECT reference_id, state FROM ${this.#table}
         WHERE reference_id = $1 AND version = $2 AND state IN ${OPEN}
         FOR UPDATE
       ), changed AS (
         UPDATE ${this.#table} AS journal SET
           state = $3, updated_at = GREATEST(${NOW}, journal.updated_at), version = journal.version + 1,
           status_text = COALESCE($4, journal.status_text), transaction_code = COALESCE($5, journal.transaction_code),
           reason = COALESCE($6, journal.reason), error = COALESCE($7::jsonb, journal.error),
           send_window_ms = COALESCE($8, journal.send_window_ms), deployment = CASE WHEN journal.deployment IS NULL OR journal.deployment->>'account' = ''
             THEN COALESCE($11::jsonb, journal.deployment) ELSE journal.deployment END,
           ${WRITES_BUMP}
         FROM before WHERE journal.reference_id = before.reference_id
         RETURNING journal.*
       ), event AS (
         INSERT INTO ${this.#history} (reference_id, at, from_state, to_state, status_text, transaction_code, request_id, by)
         SELECT changed.reference_id, changed.updated_at, before.state, changed.state, $4, $5, $9, $10 FROM changed, before
       )
       SELECT * FROM changed`,
      [
        referenceId,
        expectedVersion,
        change.state,
        change.statusText ?? null,
        change.transactionCode ?? null,
        change.reason ?? null,
        change.error === undefined ? null : JSON.stringify(change.error),
        change.sendWindowMs ?? null,
        change.requestId ?? null,
        change.by,
        deploymentColumn(change.deployment),
      ],
    );
    if (result.rows.length === 1) return { applied: true, record: rowToRecord(result.rows[0] as RecordRow) };
    return { applied: false, record: await this.get(referenceId) };
  }

  /** The one write a final record takes (see `PaymentChange.contradiction`): the mark, the version, the time, the event. */
  async #markContradiction(referenceId: string, expectedVersion: number, change: PaymentChange): Promise<PaymentTransition> {
    const answer = change.contradiction as NonNullable<PaymentChange['contradiction']>;
    const result = await this.#query(
      `WITH before AS (
         SELECT reference_id, state FROM ${this.#table}
         WHERE reference_id = $1 AND version = $2 AND state = $3 AND state NOT IN ${OPEN}
         FOR UPDATE
       ), changed AS (
         UPDATE ${this.#table} AS journal SET
           updated_at = GREATEST(${NOW}, journal.updated_at), version = journal.version + 1, ${WRITES_BUMP},
           contradiction = jsonb_build_object(
             'at', to_char(GREATEST(${NOW}, journal.updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'statusText', $4::text, 'by', $6::text
           ) || CASE WHEN $5::text IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('requestId', $5::text) END
         FROM before WHERE journal.reference_id = before.reference_id
         RETURNING journal.*
       ), event AS (
         INSERT INTO ${this.#history} (reference_id, at, from_state, to_state, status_text, request_id, by)
         SELECT changed.reference_id, changed.updated_at, before.state, changed.state, $4, $5, $6 FROM changed, before
       )
       SELECT * FROM changed`,
      [referenceId, expectedVersion, change.state, answer.statusText, answer.requestId ?? null, change.by],
    );
    if (result.rows.length === 1) return { applied: true, record: rowToRecord(result.rows[0] as RecordRow) };
    return { applied: false, record: await this.get(referenceId) };
  }

  /** The database server's clock: every process and machine on this journal measures ages by it. */
  async now(): Promise<string> {
    const result = await this.#query(`SELECT ${NOW} AS now`, []);
    const value = (result.rows[0] as { now: unknown }).now;
    return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
  }

  /**
   * How many records are in each state: read from the counters a trigger keeps in the transaction of every write,
   * so its cost does not grow with the journal (at most 16 rows a state are read).
   */
  async counts(): Promise<Record<PaymentState, number>> {
    const result = await this.#query(`SELECT state, sum(n)::bigint AS n FROM ${this.#counts} GROUP BY state`, []);
    return stateCounts((result.rows as { state: unknown; n: unknown }[]).map((row) => [String(row.state), Number(row.n)] as const));
  }

  /** Every change of the payment, oldest first. */
  async history(referenceId: string): Promise<PaymentEvent[]> {
    const result = await this.#query(
      `SELECT at, from_state, to_state, status_text, transaction_code, request_id, by FROM ${this.#history} WHERE reference_id = $1 ORDER BY id`,
      [referenceId],
    );
    return result.rows.map((row) => rowToEvent(row as RecordRow));
  }

  /** The record for `referenceId`, or `undefined`. */
  async get(referenceId: string): Promise<PaymentRecord | undefined> {
    const result = await this.#query(`SELECT * FROM ${this.#table} WHERE reference_id = $1`, [referenceId]);
    return result.rows.length === 0 ? undefined : this.#rows.read(result.rows[0] as RecordRow);
  }

  /**
   * Records matching `filter`, oldest first (by `createdAt`, then `referenceId`). With `contradictions`, the table's
   * partial index of marked records is read, never the others.
   */
  async list(filter?: PaymentFilter): Promise<PaymentRecord[]> {
    const { sql, values } = listQuery(this.#table, filter ?? {});
    const result = await this.#query(sql, values);
    return this.#rows.readAll(result.rows as RecordRow[]);
  }

  /**
   * Leases up to `limit` open records nobody holds (or whose lease ran out) to `owner`, in one statement: those
   * never leased (newest first: a payment
   * just initiated is due soonest), then those whose lease ran out longest ago (a worker parks a payment until its next
   * check by renewing its lease to then).
   */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    // SKIP LOCKED lets concurrent workers claim disjoint batches without waiting for each other; the
    // claim re-checks the lease on the row's newest version, so a lease is never granted twice.
    // Rows that cannot be read are never leased (a foreign id, an error that is not a JSON object):
    // a lease committed on a row that then fails to read would leave it leased to nobody.
    const result = await this.#query(
      `WITH free AS (
         SELECT reference_id FROM ${this.#table}
         WHERE state IN ${OPEN} AND (leased_to IS NULL OR leased_until <= now())
           AND reference_id ~* ${UUID_SQL} AND (error IS NULL OR jsonb_typeof(error) = 'object')
         ORDER BY leased_until NULLS FIRST, created_at DESC, reference_id DESC
         LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE ${this.#table} AS journal
       SET leased_to = $1, leased_until = now() + $2 * interval '1 millisecond', ${WRITES_BUMP}
       FROM free WHERE journal.reference_id = free.reference_id
       RETURNING journal.*`,
      [request.owner, request.leaseMs, request.limit],
    );
    const records: PaymentRecord[] = [];
    const unread: string[] = [];
    for (const row of result.rows as RecordRow[]) {
      const record = this.#rows.read(row);
      if (record === undefined) unread.push(String(row.reference_id));
      else records.push(record);
    }
    // Whatever the filter above missed is released at once, never left leased to a worker that cannot use it.
    if (unread.length > 0) await this.release(request.owner, unread);
    return records.sort(oldestFirst);
  }

  /**
   * Extends `owner`'s leases on `referenceIds` by `leaseMs`; resolves with the ids it still held.
   *
   * A lease that ran out but was not taken by another owner is still the owner's; a record that became
   * final is no longer leased (there is nothing left to do for it).
   */
  async renew(owner: string, referenceIds: readonly string[], leaseMs: number): Promise<string[]> {
    if (referenceIds.length === 0) return [];
    const result = await this.#query(
      `UPDATE ${this.#table} SET leased_until = now() + $3 * interval '1 millisecond', ${WRITES_BUMP}
       WHERE reference_id = ANY($2) AND leased_to = $1 AND state IN ${OPEN}
       RETURNING reference_id`,
      [owner, [...referenceIds], leaseMs],
    );
    return result.rows.map((row) => String((row as RecordRow).reference_id));
  }

  /** Ends `owner`'s leases on `referenceIds` (ids it does not hold are ignored). */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    if (referenceIds.length === 0) return;
    await this.#query(
      `UPDATE ${this.#table} SET leased_to = NULL, leased_until = NULL, ${WRITES_BUMP} WHERE reference_id = ANY($2) AND leased_to = $1`,
      [owner, [...referenceIds]],
    );
  }

  /**
   * Calls `onChange` whenever the payment may have reached a final state (a `NOTIFY` sent by the transition's
   * commit), and after the listening connection was lost and made again (a notification may have been missed
   * meanwhile). One `LISTEN` connection per journal, shared by every watcher. Resolves with the function that
   * stops watching.
   */
  async watch(referenceId: string, onChange: () => void): Promise<() => void> {
    await this.migrate();
    const pool = await this.#poolOf();
    if (typeof pool.connect !== 'function') throw new TypeError('PostgresJournal: the pool has no connect() for LISTEN');
    this.#listener ??= new Listener(pool, this.#channel, this.#logger);
    return this.#listener.add(referenceId, onChange);
  }

  /**
   * Renews a holder's share of a key's rate budget (see `allocateBudget`; leases run on the time holders measured,
   * the server's clock paces only `'adaptive'`), shared by every process and machine on this database. Kept in `<tableName>_budgets` (one row per key digest, created on first use,
   * apart from the records' tables). Two statements: the row read with the server's clock, then a compare-and-set on
   * its version (read again on a conflict).
   */
  async takeBudget(request: BudgetRequest): Promise<BudgetGrant> {
    const problem = budgetRequestProblem(request);
    if (problem !== undefined) throw new TypeError(`takeBudget: ${problem}`);
    await this.#createBudgets();
    const pool = await this.#poolOf();
    return takeBudgetRow(pool, this.#budgets, request);
  }

  /** The budgets table, created once per journal (its own step: the records' schema is unchanged). */
  #createBudgets(): Promise<void> {
    this.#budgetsReady ??= this.#poolOf()
      .then((pool) => pool.query(budgetsTableSql(this.#budgets)))
      .then(
        () => undefined,
        (error: unknown) => {
          this.#budgetsReady = undefined;
          throw error;
        },
      );
    return this.#budgetsReady;
  }

  /** Ends the pool the journal opened from a connection string (a pool you passed is left to you). */
  async close(): Promise<void> {
    this.#listener?.close();
    this.#listener = undefined;
    if (!this.#ownsPool || this.#pool === undefined) return;
    const pool = await this.#pool;
    this.#pool = undefined;
    this.#ready = undefined;
    this.#budgetsReady = undefined;
    await pool.end();
  }
}

function oldestFirst(a: PaymentRecord, b: PaymentRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.referenceId < b.referenceId ? -1 : a.referenceId > b.referenceId ? 1 : 0;
}
