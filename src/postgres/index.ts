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

import type { Logger } from '../core/logger.js';
import type {
  LeaseRequest,
  NewPaymentRecord,
  PaymentChange,
  PaymentEvent,
  PaymentFilter,
  PaymentJournal,
  PaymentRecord,
  PaymentTransition,
} from '../journal/journal.js';
import { RECORD_COLUMNS, type RecordRow, RowReader, recordToRow, rowToEvent, rowToRecord } from '../journal/record-row.js';

/** The part of a `pg.Pool` (or any compatible pool) the journal uses. */
export interface PostgresPool {
  /** Runs one statement with positional parameters (`$1`, `$2`, …). */
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** Closes the pool's connections. */
  end(): Promise<void>;
  /**
   * Checks out one connection (as `pg.Pool#connect`): {@link PostgresJournal.watch} holds one for `LISTEN`.
   * Without it, `waitForSettlement` reads the journal on a schedule instead.
   */
  connect?(): Promise<PostgresListenClient>;
}

/** The part of a checked-out `pg` client that `LISTEN` needs (fleet-20). */
export interface PostgresListenClient {
  /** Runs one statement on this connection (`LISTEN`, `UNLISTEN`). */
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** Called for each `NOTIFY` on a channel this connection listens to. */
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  /** Called when the connection fails or ends: the journal opens a new one and listens again. */
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  /** Returns the connection to the pool; `true` (or an error) discards it. */
  release(destroy?: boolean | Error): void;
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
   * The table's name: letters, digits and `_`, not starting with a digit, at most 47 characters (PostgreSQL
   * cuts names at 63, and the history table and the indexes add a suffix to it); created
   * on first use (or by {@link PostgresJournal.migrate}). @defaultValue `'tap_payment_journal'`
   */
  tableName?: string;
  /** The schema the table lives in (same rules as `tableName`). @defaultValue the connection's `search_path` */
  schema?: string;
  /**
   * Where the journal reports what it rides out: a connection of its own pool that broke (the database
   * restarted or is unreachable: calls fail until it is back, nothing crashes) and a row it skipped because it
   * cannot be read (once per row). @defaultValue `console`
   */
  logger?: Pick<Logger, 'warn'>;
};

/** The part of the `pg` module the journal uses. */
interface PgModule {
  Pool: new (config: { connectionString: string }) => PostgresPool & { on(event: 'error', listener: (error: Error) => void): unknown };
}

/** A reference id as the SDK writes it (lower-case UUID): other rows are foreign and never leased. */
const UUID_SQL = "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/**
 * Table names leave room for the longest suffix derived from them (`_history_ref_idx`, 16 characters) within
 * PostgreSQL's 63: a longer name would be cut silently, and the index named after it lost.
 */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,46}$/;
const OPEN = "('initiating', 'pending', 'unknown')";
/**
 * The server's clock, cut to the millisecond: the precision a JavaScript `Date` reads back. Times kept finer
 * would order records (oldest first) by digits no reader sees, so two records of one millisecond would come
 * back in an order their `createdAt` and `referenceId` do not explain.
 */
const NOW = "date_trunc('milliseconds', now())";

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
  readonly #history: string;
  readonly #tableName: string;
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

  /** @throws TypeError on a missing connection or a table or schema name that is not a plain identifier. */
  constructor(options: PostgresJournalOptions) {
    const { tableName = 'tap_payment_journal', schema } = options ?? ({} as PostgresJournalOptions);
    if (!TABLE_NAME.test(tableName)) {
      throw new TypeError(
        'PostgresJournal: tableName must be letters, digits and _, not starting with a digit, at most 47 characters (the names derived from it must fit in 63)',
      );
    }
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
    const qualified = (name: string) => (schema === undefined ? `"${name}"` : `"${schema}"."${name}"`);
    this.#table = qualified(tableName);
    this.#history = qualified(`${tableName}_history`);
    this.#tableName = tableName;
    this.#logger = options.logger ?? console;
    this.#rows = new RowReader((row) =>
      this.#logger.warn(`PostgresJournal: skipped a row of ${tableName} that cannot be read`, {
        referenceId: row.referenceId,
        reason: row.reason,
      }),
    );
    this.#channel = `${tableName}_settled`;
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
    const name = this.#tableName;
    // One statement list in one implicit transaction: the advisory lock serializes concurrent first uses,
    // whose CREATE … IF NOT EXISTS would otherwise race on the catalog. A table of the first release
    // (text times, double amounts, no version or history) is upgraded in place.
    await pool.query(
      `DO $$ BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('tap-collections-sdk journal'));
        CREATE TABLE IF NOT EXISTS ${this.#table} (
          reference_id text COLLATE "C" PRIMARY KEY,
          state text NOT NULL,
          product_id text NOT NULL,
          amount numeric NOT NULL,
          currency text NOT NULL,
          phone_number text NOT NULL,
          narration text,
          fingerprint text NOT NULL,
          created_at timestamptz NOT NULL,
          updated_at timestamptz NOT NULL,
          status_text text,
          transaction_code text,
          reason text,
          error jsonb,
          leased_to text,
          leased_until timestamptz,
          version integer NOT NULL DEFAULT 1,
          send_window_ms double precision,
          contradiction jsonb
        );
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${this.#table}'::regclass AND attname = 'amount') = 'double precision'::regtype THEN
          ALTER TABLE ${this.#table} ALTER COLUMN amount TYPE numeric USING round(amount::numeric, 2);
        END IF;
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${this.#table}'::regclass AND attname = 'created_at') = 'text'::regtype THEN
          ALTER TABLE ${this.#table}
            ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
            ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;
        END IF;
        ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;
        ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS send_window_ms double precision;
        ALTER TABLE ${this.#table} ADD COLUMN IF NOT EXISTS contradiction jsonb;
        -- evidence-records: a window not known is the longest possible (Infinity), which an integer cannot hold.
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${this.#table}'::regclass AND attname = 'send_window_ms') <> 'double precision'::regtype THEN
          ALTER TABLE ${this.#table} ALTER COLUMN send_window_ms TYPE double precision;
        END IF;
        -- evidence-records: the lease columns under new names, so an older release's lease statements fail.
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${this.#table}'::regclass AND attname = 'lease_owner' AND NOT attisdropped) THEN
          ALTER TABLE ${this.#table} RENAME COLUMN lease_owner TO leased_to;
          ALTER TABLE ${this.#table} RENAME COLUMN lease_expires_at TO leased_until;
        END IF;
        -- A record written without a window (the first release kept none) is judged by the longest one possible.
        UPDATE ${this.#table} SET send_window_ms = 'Infinity' WHERE send_window_ms IS NULL AND state IN ${OPEN};
        -- evidence-records: writers of an older release fail: their insert writes no window, their update bumps no version.
        CREATE OR REPLACE FUNCTION ${this.#oldWriterFunction()}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            RAISE EXCEPTION '% was upgraded by a newer tap-collections-sdk: this process runs an older release and may not write to it (upgrade it); nothing was written', TG_TABLE_NAME
              USING ERRCODE = 'object_not_in_prerequisite_state';
          END $fn$;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${this.#table}'::regclass AND tgname = '${name}_old_insert') THEN
          CREATE TRIGGER "${name}_old_insert" BEFORE INSERT ON ${this.#table}
            FOR EACH ROW WHEN (NEW.send_window_ms IS NULL) EXECUTE FUNCTION ${this.#oldWriterFunction()}();
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${this.#table}'::regclass AND tgname = '${name}_old_update') THEN
          CREATE TRIGGER "${name}_old_update"
            BEFORE UPDATE OF state, updated_at, status_text, transaction_code, reason, error, send_window_ms ON ${this.#table}
            FOR EACH ROW WHEN (NEW.version IS NOT DISTINCT FROM OLD.version) EXECUTE FUNCTION ${this.#oldWriterFunction()}();
        END IF;
        CREATE INDEX IF NOT EXISTS "${name}_open_idx" ON ${this.#table} (created_at, reference_id) WHERE state IN ${OPEN};
        CREATE TABLE IF NOT EXISTS ${this.#history} (
          id bigserial PRIMARY KEY,
          reference_id text COLLATE "C" NOT NULL,
          at timestamptz NOT NULL,
          from_state text,
          to_state text NOT NULL,
          status_text text,
          transaction_code text,
          request_id text,
          by text NOT NULL
        );
        CREATE INDEX IF NOT EXISTS "${name}_history_ref_idx" ON ${this.#history} (reference_id, id);
        -- fleet-20: leases in due order (never leased first, then by when the lease ran out).
        CREATE INDEX IF NOT EXISTS "${name}_due_idx" ON ${this.#table} (leased_until NULLS FIRST, created_at DESC, reference_id DESC) WHERE state IN ${OPEN};
        -- fleet-20: a transition to a final state notifies waiters (waitForSettlement) when it commits.
        CREATE OR REPLACE FUNCTION ${this.#notifyFunction()}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            PERFORM pg_notify('${this.#channel}', NEW.reference_id);
            RETURN NULL;
          END $fn$;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${this.#table}'::regclass AND tgname = '${name}_settled') THEN
          CREATE TRIGGER "${name}_settled" AFTER INSERT OR UPDATE OF state ON ${this.#table}
            FOR EACH ROW WHEN (NEW.state NOT IN ${OPEN}) EXECUTE FUNCTION ${this.#notifyFunction()}();
        END IF;
      END $$`,
    );
  }

  #notifyFunction(): string {
    return this.#table.replace(/"$/, '_notify"');
  }

  #oldWriterFunction(): string {
    return this.#table.replace(/"$/, '_old_writer"');
  }

  async #poolOf(): Promise<PostgresPool> {
    if (this.#pool === undefined) {
      const connectionString = this.#connectionString as string;
      // Loaded on first use: `pg` is an optional peer, and CommonJS (its default export holds the API).
      this.#pool = import('pg').then((module: unknown) => {
        const pg = ((module as { default?: unknown }).default ?? module) as PgModule;
        const pool = new pg.Pool({ connectionString });
        // fleet-20: an idle connection that breaks (a database restart) is an 'error' event on the pool: without a
        // listener Node ends the process. It stays attached after close(): connections may still break while ending.
        pool.on('error', (error) => this.#connectionBroke(error));
        return pool;
      });
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
           send_window_ms = COALESCE($8, journal.send_window_ms)
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
           updated_at = GREATEST(${NOW}, journal.updated_at), version = journal.version + 1,
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
    // fleet-20: rows that cannot be read are never leased (a foreign id, an error that is not a JSON object):
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
       SET leased_to = $1, leased_until = now() + $2 * interval '1 millisecond'
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
      `UPDATE ${this.#table} SET leased_until = now() + $3 * interval '1 millisecond'
       WHERE reference_id = ANY($2) AND leased_to = $1 AND state IN ${OPEN}
       RETURNING reference_id`,
      [owner, [...referenceIds], leaseMs],
    );
    return result.rows.map((row) => String((row as RecordRow).reference_id));
  }

  /** Ends `owner`'s leases on `referenceIds` (ids it does not hold are ignored). */
  async release(owner: string, referenceIds: readonly string[]): Promise<void> {
    if (referenceIds.length === 0) return;
    await this.#query(`UPDATE ${this.#table} SET leased_to = NULL, leased_until = NULL WHERE reference_id = ANY($2) AND leased_to = $1`, [
      owner,
      [...referenceIds],
    ]);
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

  /** Ends the pool the journal opened from a connection string (a pool you passed is left to you). */
  async close(): Promise<void> {
    this.#listener?.close();
    this.#listener = undefined;
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

/**
 * fleet-20: the one `LISTEN` connection of a journal, shared by every waiter. A connection that breaks is made
 * again (after a pause) and every waiter is told, since a notification may have been sent while it was down.
 */
class Listener {
  readonly #pool: PostgresPool;
  readonly #channel: string;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #watchers = new Map<string, Set<() => void>>();
  #client: Promise<PostgresListenClient | undefined> | undefined;
  #closed = false;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(pool: PostgresPool, channel: string, logger: Pick<Logger, 'warn'>) {
    this.#pool = pool;
    this.#channel = channel;
    this.#logger = logger;
  }

  async add(referenceId: string, onChange: () => void): Promise<() => void> {
    const set = this.#watchers.get(referenceId) ?? new Set<() => void>();
    this.#watchers.set(referenceId, set);
    set.add(onChange);
    const remove = () => {
      set.delete(onChange);
      if (set.size === 0 && this.#watchers.get(referenceId) === set) this.#watchers.delete(referenceId);
      if (this.#watchers.size === 0) this.#disconnect();
    };
    const connected = await this.#connection();
    if (connected === undefined) {
      remove();
      throw new Error('PostgresJournal: could not LISTEN');
    }
    return remove;
  }

  /** The one connection, made when there is none. */
  #connection(): Promise<PostgresListenClient | undefined> {
    this.#client ??= this.#connect();
    return this.#client;
  }

  async #connect(): Promise<PostgresListenClient | undefined> {
    const connect = this.#pool.connect as () => Promise<PostgresListenClient>;
    let client: PostgresListenClient;
    try {
      client = await connect.call(this.#pool);
    } catch (error) {
      this.#client = undefined;
      this.#reconnectLater(error);
      return undefined;
    }
    const onLost = (error?: Error) => {
      if (!this.#drop(client, error ?? true)) return;
      if (this.#closed) return;
      this.#client = undefined;
      this.#reconnectLater(error);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== this.#channel || message.payload === undefined) return;
      for (const watcher of this.#watchers.get(message.payload) ?? []) watcher();
    });
    try {
      await client.query(`LISTEN "${this.#channel}"`);
    } catch (error) {
      onLost(error as Error);
      return undefined;
    }
    return client;
  }

  /** Connections already handed back: pg throws on a second release (an 'end' after an UNLISTEN's release). */
  readonly #dropped = new WeakSet<PostgresListenClient>();

  /** Hands the connection back once; false when it was already. */
  #drop(client: PostgresListenClient, destroy: boolean | Error | undefined): boolean {
    if (this.#dropped.has(client)) return false;
    this.#dropped.add(client);
    client.release(destroy);
    return true;
  }

  #reconnectLater(error: unknown): void {
    if (this.#closed || this.#watchers.size === 0 || this.#retry !== undefined) return;
    this.#logger.warn('PostgresJournal: the LISTEN connection broke; waiters read the journal until it is back', {
      reason: error instanceof Error ? error.message : String(error),
    });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#closed || this.#watchers.size === 0) return;
      void this.#connection().then((client) => {
        // Back: whatever settled meanwhile sent its notification to nobody; every waiter reads again.
        if (client !== undefined) for (const set of this.#watchers.values()) for (const watcher of set) watcher();
      });
    }, 1_000);
  }

  #disconnect(): void {
    const client = this.#client;
    this.#client = undefined;
    void client?.then((connected) => {
      if (connected === undefined) return;
      connected.query(`UNLISTEN "${this.#channel}"`).then(
        () => this.#drop(connected, undefined),
        () => this.#drop(connected, true),
      );
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#watchers.clear();
    this.#disconnect();
  }
}
