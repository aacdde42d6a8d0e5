/**
 * `tap-collections-sdk/postgres`: a payment journal in PostgreSQL, shared by every process and machine that
 * points at the same table, so several settlement workers can split the open payments between them.
 *
 * ```ts
 * import { CollectionsClient } from 'tap-collections-sdk';
 * import { PostgresJournal } from 'tap-collections-sdk/postgres';
 *
 * const journal = new PostgresJournal({ connectionString: process.env.DATABASE_URL });
 * const collections = new CollectionsClient({ journal });
 * ```
 *
 * Needs the `pg` package (an optional peer dependency: `npm install pg`) unless you pass a pool of your own.
 *
 * @packageDocumentation
 * @module tap-collections-sdk/postgres
 */
import type { LeaseRequest, PaymentChange, PaymentFilter, PaymentJournal, PaymentRecord } from '../journal/journal.js';
import { RECORD_COLUMNS, type RecordRow, recordToRow, rowToRecord } from '../journal/record-row.js';

/** The part of a `pg.Pool` (or any compatible pool) the journal uses. */
export interface PostgresPool {
  /** Runs one statement with positional parameters (`$1`, `$2`, …). */
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** Closes the pool's connections. */
  end(): Promise<void>;
}

/** What {@link PostgresPool.query} resolves with (as `pg` does). */
export interface PostgresQueryResult {
  /** The rows, one object per row, keyed by column name. */
  rows: unknown[];
  /** How many rows the statement touched. */
  rowCount: number | null;
}

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
   * The table's name: letters, digits and `_`, not starting with a digit, at most 63 characters; created
   * on first use (or by {@link PostgresJournal.migrate}). @defaultValue `'tap_payment_journal'`
   */
  tableName?: string;
  /** The schema the table lives in (same rules as `tableName`). @defaultValue the connection's `search_path` */
  schema?: string;
};

/** The part of the `pg` module the journal uses. */
interface PgModule {
  Pool: new (config: { connectionString: string }) => PostgresPool;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const OPEN = "('initiating', 'pending', 'unknown')";

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
  readonly #table: string;
  readonly #indexName: string;
  readonly #ownsPool: boolean;
  readonly #connectionString: string | undefined;
  #pool: PostgresPool | Promise<PostgresPool> | undefined;
  #ready: Promise<void> | undefined;

  /** @throws TypeError on a missing connection or a table or schema name that is not a plain identifier. */
  constructor(options: PostgresJournalOptions) {
    const { tableName = 'tap_payment_journal', schema } = options ?? ({} as PostgresJournalOptions);
    if (!IDENTIFIER.test(tableName)) throw new TypeError('PostgresJournal: tableName must match /^[A-Za-z_][A-Za-z0-9_]{0,62}$/');
    if (schema !== undefined && !IDENTIFIER.test(schema))
      throw new TypeError('PostgresJournal: schema must match /^[A-Za-z_][A-Za-z0-9_]{0,62}$/');
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
    // Identifiers are checked above and quoted here, so the name can never carry SQL.
    this.#table = schema === undefined ? `"${tableName}"` : `"${schema}"."${tableName}"`;
    this.#indexName = `"${tableName}_open_idx"`;
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
    // One statement list in one implicit transaction: the advisory lock serializes concurrent first uses,
    // whose CREATE … IF NOT EXISTS would otherwise race on the catalog.
    await pool.query(
      `DO $$ BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('tap-collections-sdk journal'));
        CREATE TABLE IF NOT EXISTS ${this.#table} (
          reference_id text COLLATE "C" PRIMARY KEY,
          state text NOT NULL,
          product_id text NOT NULL,
          amount double precision NOT NULL,
          currency text NOT NULL,
          phone_number text NOT NULL,
          narration text,
          fingerprint text NOT NULL,
          created_at text COLLATE "C" NOT NULL,
          updated_at text NOT NULL,
          status_text text,
          transaction_code text,
          reason text,
          error jsonb,
          lease_owner text,
          lease_expires_at timestamptz
        );
        CREATE INDEX IF NOT EXISTS ${this.#indexName} ON ${this.#table} (created_at, reference_id) WHERE state IN ${OPEN};
      END $$`,
    );
  }

  async #poolOf(): Promise<PostgresPool> {
    if (this.#pool === undefined) {
      const connectionString = this.#connectionString as string;
      // Loaded on first use: `pg` is an optional peer, and CommonJS (its default export holds the API).
      this.#pool = import('pg').then((module: unknown) => {
        const pg = ((module as { default?: unknown }).default ?? module) as PgModule;
        return new pg.Pool({ connectionString });
      });
    }
    return this.#pool;
  }

  async #query(text: string, values: unknown[]): Promise<PostgresQueryResult> {
    await this.migrate();
    const pool = await this.#poolOf();
    return pool.query(text, values);
  }

  /** Writes a new record; `false` (writing nothing) when its `referenceId` exists already. */
  async insert(record: PaymentRecord): Promise<boolean> {
    const result = await this.#query(
      `INSERT INTO ${this.#table} (${RECORD_COLUMNS.join(', ')})
       VALUES (${RECORD_COLUMNS.map((_, index) => `$${index + 1}`).join(', ')})
       ON CONFLICT (reference_id) DO NOTHING`,
      recordToRow(record),
    );
    return result.rowCount === 1;
  }

  /** Applies `change` unless the record is final; resolves with the stored record, or `undefined` when absent. */
  async update(referenceId: string, change: PaymentChange): Promise<PaymentRecord | undefined> {
    const assignments = ['state = $2', 'updated_at = $3'];
    const values: unknown[] = [referenceId, change.state, change.updatedAt];
    const optional = [
      ['status_text', change.statusText],
      ['transaction_code', change.transactionCode],
      ['reason', change.reason],
      ['error', change.error === undefined ? undefined : JSON.stringify(change.error)],
    ] as const;
    for (const [column, value] of optional) {
      if (value === undefined) continue;
      values.push(value);
      assignments.push(`${column} = $${values.length}`);
    }
    // The condition on the open states makes "final states never change" hold under any concurrency.
    const updated = await this.#query(
      `UPDATE ${this.#table} SET ${assignments.join(', ')} WHERE reference_id = $1 AND state IN ${OPEN} RETURNING *`,
      values,
    );
    if (updated.rows.length === 1) return rowToRecord(updated.rows[0] as RecordRow);
    return this.get(referenceId);
  }

  /** The record for `referenceId`, or `undefined`. */
  async get(referenceId: string): Promise<PaymentRecord | undefined> {
    const result = await this.#query(`SELECT * FROM ${this.#table} WHERE reference_id = $1`, [referenceId]);
    return result.rows.length === 0 ? undefined : rowToRecord(result.rows[0] as RecordRow);
  }

  /** Records matching `filter`, oldest first (by `createdAt`, then `referenceId`). */
  async list(filter?: PaymentFilter): Promise<PaymentRecord[]> {
    const values: unknown[] = [];
    let where = '';
    if (filter?.states !== undefined) {
      values.push([...filter.states]);
      where = 'WHERE state = ANY($1)';
    }
    let limit = '';
    if (filter?.limit !== undefined) {
      values.push(filter.limit);
      limit = `LIMIT $${values.length}`;
    }
    const result = await this.#query(`SELECT * FROM ${this.#table} ${where} ORDER BY created_at, reference_id ${limit}`, values);
    return result.rows.map((row) => rowToRecord(row as RecordRow));
  }

  /** Leases up to `limit` open records nobody holds (or whose lease ran out) to `owner`, oldest first, in one statement. */
  async lease(request: LeaseRequest): Promise<PaymentRecord[]> {
    // SKIP LOCKED lets concurrent workers claim disjoint batches without waiting for each other; the
    // claim re-checks the lease on the row's newest version, so a lease is never granted twice.
    const result = await this.#query(
      `WITH free AS (
         SELECT reference_id FROM ${this.#table}
         WHERE state IN ${OPEN} AND (lease_owner IS NULL OR lease_expires_at <= now())
         ORDER BY created_at, reference_id
         LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       UPDATE ${this.#table} AS journal
       SET lease_owner = $1, lease_expires_at = now() + $2 * interval '1 millisecond'
       FROM free WHERE journal.reference_id = free.reference_id
       RETURNING journal.*`,
      [request.owner, request.leaseMs, request.limit],
    );
    return result.rows.map((row) => rowToRecord(row as RecordRow)).sort(oldestFirst);
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
      `UPDATE ${this.#table} SET lease_expires_at = now() + $3 * interval '1 millisecond'
       WHERE reference_id = ANY($2) AND lease_owner = $1 AND state IN ${OPEN}
       RETURNING reference_id`,
      [owner, [...referenceIds], leaseMs],
    );
    return result.rows.map((row) => String((row as RecordRow).reference_id));
  }

  /** Ends `owner`'s leases on `referenceIds` (ids it does not hold are ignored). */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    if (referenceIds.length === 0) return;
    await this.#query(
      `UPDATE ${this.#table} SET lease_owner = NULL, lease_expires_at = NULL WHERE reference_id = ANY($2) AND lease_owner = $1`,
      [owner, [...referenceIds]],
    );
  }

  /** Ends the pool the journal opened from a connection string (a pool you passed is left to you). */
  async close(): Promise<void> {
    if (!this.#ownsPool || this.#pool === undefined) return;
    const pool = await this.#pool;
    this.#pool = undefined;
    this.#ready = undefined;
    await pool.end();
  }
}

function oldestFirst(a: PaymentRecord, b: PaymentRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.referenceId < b.referenceId ? -1 : a.referenceId > b.referenceId ? 1 : 0;
}
