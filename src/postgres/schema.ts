/**
 * The PostgreSQL journal's schema: its names (checked, then quoted, so a name can never carry SQL), the SQL
 * fragments its statements share, and the one migration that creates or upgrades the tables.
 */

import type { PaymentFilter } from '../journal/journal.js';
import { WRITES_BUMP, WRITES_COLUMN } from '../journal/record-row.js';

/** A reference id as the SDK writes it (lower-case UUID): other rows are foreign and never leased. */
export const UUID_SQL = "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/**
 * Table names leave room for the longest suffix derived from them (`_history_ref_idx`, 16 characters) within
 * PostgreSQL's 63: a longer name would be cut silently, and the index named after it lost.
 */
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,46}$/;
/** The open states, as an SQL list. */
export const OPEN = "('initiating', 'pending', 'unknown')";
/** Counter rows per state (a power of two): writers of different payments rarely share one. */
const COUNT_SLOTS = 16;
/**
 * The server's clock, cut to the millisecond: the precision a JavaScript `Date` reads back. Times kept finer
 * would order records (oldest first) by digits no reader sees, so two records of one millisecond would come
 * back in an order their `createdAt` and `referenceId` do not explain.
 */
export const NOW = "date_trunc('milliseconds', now())";

/** The quoted names of a journal's tables and functions, and its `NOTIFY` channel. */
export interface TableNames {
  /** The records. */
  readonly table: string;
  /** Every record's events. */
  readonly history: string;
  /** The records by state, kept by a trigger (see {@link migrationSql}). */
  readonly counts: string;
  /** The rate budgets (created apart, on first use). */
  readonly budgets: string;
  /** The table's name as given (unquoted). */
  readonly tableName: string;
  /** The channel a transition to a final state notifies. */
  readonly channel: string;
}

/**
 * The quoted names derived from `tableName` and `schema`.
 *
 * @throws TypeError on a table or schema name that is not a plain identifier (the table's first).
 */
export function tableNames(tableName: string, schema: string | undefined): TableNames {
  if (!TABLE_NAME.test(tableName)) {
    throw new TypeError(
      'PostgresJournal: tableName must be letters, digits and _, not starting with a digit, at most 47 characters (the names derived from it must fit in 63)',
    );
  }
  if (schema !== undefined && !IDENTIFIER.test(schema))
    throw new TypeError('PostgresJournal: schema must match /^[A-Za-z_][A-Za-z0-9_]{0,62}$/');
  // Identifiers are checked above and quoted here, so the name can never carry SQL.
  const qualified = (name: string) => (schema === undefined ? `"${name}"` : `"${schema}"."${name}"`);
  return {
    table: qualified(tableName),
    history: qualified(`${tableName}_history`),
    counts: qualified(`${tableName}_counts`),
    budgets: qualified(`${tableName}_budgets`),
    tableName,
    channel: `${tableName}_settled`,
  };
}

/** A function named after the table: `"schema"."table_suffix"`. */
function tableFunction(table: string, suffix: string): string {
  return table.replace(/"$/, `${suffix}"`);
}

/**
 * The migration: one statement list in one implicit transaction. The advisory lock serializes concurrent first
 * uses, whose CREATE … IF NOT EXISTS would otherwise race on the catalog. A table of the first release (text
 * times, double amounts, no version or history) is upgraded in place.
 */
export function migrationSql({ table, history, counts, budgets, channel, tableName: name }: TableNames): string {
  const countFunction = tableFunction(table, '_count');
  const notifyFunction = tableFunction(table, '_notify');
  const oldWriterFunction = tableFunction(table, '_old_writer');
  const lockFunction = tableFunction(table, '_lock');
  return `DO $$ BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('tap-collections-sdk journal'));
        CREATE TABLE IF NOT EXISTS ${table} (
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
          contradiction jsonb,
          deployment jsonb,
          sealed_phone_number text,
          ${WRITES_COLUMN} integer
        );
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attname = 'amount') = 'double precision'::regtype THEN
          ALTER TABLE ${table} ALTER COLUMN amount TYPE numeric USING round(amount::numeric, 2);
        END IF;
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attname = 'created_at') = 'text'::regtype THEN
          ALTER TABLE ${table}
            ALTER COLUMN created_at TYPE timestamptz USING created_at::timestamptz,
            ALTER COLUMN updated_at TYPE timestamptz USING updated_at::timestamptz;
        END IF;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version integer NOT NULL DEFAULT 1;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS send_window_ms double precision;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS contradiction jsonb;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS deployment jsonb;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS sealed_phone_number text;
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${WRITES_COLUMN} integer;
        -- evidence-records: a window not known is the longest possible (Infinity), which an integer cannot hold.
        IF (SELECT atttypid FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attname = 'send_window_ms') <> 'double precision'::regtype THEN
          ALTER TABLE ${table} ALTER COLUMN send_window_ms TYPE double precision;
        END IF;
        -- evidence-records: the lease columns under new names, so an older release's lease statements fail.
        IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = '${table}'::regclass AND attname = 'lease_owner' AND NOT attisdropped) THEN
          ALTER TABLE ${table} RENAME COLUMN lease_owner TO leased_to;
          ALTER TABLE ${table} RENAME COLUMN lease_expires_at TO leased_until;
        END IF;
        -- A record written without a window (the first release kept none) is judged by the longest one possible.
        -- It names the writes column: a row an earlier release inserted just before the lock below must not make
        -- this statement (run at every start) fail forever.
        UPDATE ${table} SET send_window_ms = 'Infinity', ${WRITES_BUMP} WHERE send_window_ms IS NULL AND state IN ${OPEN};
        -- evidence-records: writers of an older release fail: their insert writes no window, their update bumps no version.
        CREATE OR REPLACE FUNCTION ${oldWriterFunction}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            RAISE EXCEPTION '% was upgraded by a newer tap-collections-sdk: this process runs an older release and may not write to it (upgrade it); nothing was written', TG_TABLE_NAME
              USING ERRCODE = 'object_not_in_prerequisite_state';
          END $fn$;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${table}'::regclass AND tgname = '${name}_old_insert') THEN
          CREATE TRIGGER "${name}_old_insert" BEFORE INSERT ON ${table}
            FOR EACH ROW WHEN (NEW.send_window_ms IS NULL) EXECUTE FUNCTION ${oldWriterFunction}();
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${table}'::regclass AND tgname = '${name}_old_update') THEN
          CREATE TRIGGER "${name}_old_update"
            BEFORE UPDATE OF state, updated_at, status_text, transaction_code, reason, error, send_window_ms ON ${table}
            FOR EACH ROW WHEN (NEW.version IS NOT DISTINCT FROM OLD.version) EXECUTE FUNCTION ${oldWriterFunction}();
        END IF;
        ${lockSql(table, budgets, name, lockFunction)}
        CREATE INDEX IF NOT EXISTS "${name}_open_idx" ON ${table} (created_at, reference_id) WHERE state IN ${OPEN};
        -- journal list --contradictions reads only the marked records, however many there are.
        CREATE INDEX IF NOT EXISTS "${name}_contra_idx" ON ${table} (created_at, reference_id) WHERE contradiction IS NOT NULL;
        CREATE TABLE IF NOT EXISTS ${history} (
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
        CREATE INDEX IF NOT EXISTS "${name}_history_ref_idx" ON ${history} (reference_id, id);
        -- Leases in due order (never leased first, then by when the lease ran out).
        CREATE INDEX IF NOT EXISTS "${name}_due_idx" ON ${table} (leased_until NULLS FIRST, created_at DESC, reference_id DESC) WHERE state IN ${OPEN};
        -- A transition to a final state notifies waiters (waitForSettlement) when it commits.
        CREATE OR REPLACE FUNCTION ${notifyFunction}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            PERFORM pg_notify('${channel}', NEW.reference_id);
            RETURN NULL;
          END $fn$;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${table}'::regclass AND tgname = '${name}_settled') THEN
          CREATE TRIGGER "${name}_settled" AFTER INSERT OR UPDATE OF state ON ${table}
            FOR EACH ROW WHEN (NEW.state NOT IN ${OPEN}) EXECUTE FUNCTION ${notifyFunction}();
        END IF;
        -- Records by state, kept by a trigger in the transaction of each write, so counts() (the worker's /metrics)
        -- reads at most ${COUNT_SLOTS} rows a state whatever the journal's size. A record always counts in the same
        -- slot (by its reference's hash): concurrent writers of different payments rarely wait on one counter row.
        CREATE TABLE IF NOT EXISTS ${counts} (
          state text NOT NULL,
          slot smallint NOT NULL,
          n bigint NOT NULL,
          PRIMARY KEY (state, slot)
        );
        -- SET search_path FROM CURRENT: the counter table is found as this migration found it, whatever the
        -- search_path of the connection that writes a record.
        CREATE OR REPLACE FUNCTION ${countFunction}() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
          DECLARE
            counter smallint;
          BEGIN
            IF TG_OP = 'INSERT' THEN
              counter := hashtext(NEW.reference_id) & ${COUNT_SLOTS - 1};
              INSERT INTO ${counts} AS c VALUES (NEW.state, counter, 1) ON CONFLICT (state, slot) DO UPDATE SET n = c.n + 1;
            ELSIF TG_OP = 'DELETE' THEN
              counter := hashtext(OLD.reference_id) & ${COUNT_SLOTS - 1};
              UPDATE ${counts} AS c SET n = c.n - 1 WHERE c.state = OLD.state AND c.slot = counter;
            ELSIF NEW.state IS DISTINCT FROM OLD.state THEN
              counter := hashtext(NEW.reference_id) & ${COUNT_SLOTS - 1};
              -- Counter rows are locked in the order of their state's name, so two writers never wait on each other in a cycle.
              IF OLD.state < NEW.state THEN
                UPDATE ${counts} AS c SET n = c.n - 1 WHERE c.state = OLD.state AND c.slot = counter;
                INSERT INTO ${counts} AS c VALUES (NEW.state, counter, 1) ON CONFLICT (state, slot) DO UPDATE SET n = c.n + 1;
              ELSE
                INSERT INTO ${counts} AS c VALUES (NEW.state, counter, 1) ON CONFLICT (state, slot) DO UPDATE SET n = c.n + 1;
                UPDATE ${counts} AS c SET n = c.n - 1 WHERE c.state = OLD.state AND c.slot = counter;
              END IF;
            END IF;
            RETURN NULL;
          END $fn$;
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${table}'::regclass AND tgname = '${name}_counted') THEN
          -- The records as they are now, counted with writers held off until the trigger counts what follows.
          LOCK TABLE ${table} IN SHARE ROW EXCLUSIVE MODE;
          DELETE FROM ${counts};
          INSERT INTO ${counts} SELECT state, hashtext(reference_id) & ${COUNT_SLOTS - 1}, count(*) FROM ${table} GROUP BY 1, 2;
          CREATE TRIGGER "${name}_counted" AFTER INSERT OR DELETE OR UPDATE OF state ON ${table}
            FOR EACH ROW EXECUTE FUNCTION ${countFunction}();
        END IF;
      END $$`;
}

/** The budgets table (its own step: the records' schema is unchanged), under the migration's advisory lock. */
export function budgetsTableSql(budgets: string): string {
  return `DO $$ BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('tap-collections-sdk journal'));
            ${budgetsTable(budgets)}
          END $$`;
}

/** The budgets table as this release writes it (the writes column of the lock: see {@link lockSql}). */
function budgetsTable(budgets: string): string {
  return `CREATE TABLE IF NOT EXISTS ${budgets} (key text COLLATE "C" PRIMARY KEY, version bigint NOT NULL, state jsonb NOT NULL, ${WRITES_COLUMN} integer);
          ALTER TABLE ${budgets} ADD COLUMN IF NOT EXISTS ${WRITES_COLUMN} integer;`;
}

/**
 * Writers of every earlier release fail, whatever they write (records, leases, budgets): every insert of this release
 * writes the writes column and every update adds 1 to it; no earlier release names it, so its insert leaves it
 * `NULL` and its update leaves it unchanged, and these triggers refuse both. The triggers' and the function's names
 * are new: no earlier release's migration (run by each of its processes at start) drops, replaces or makes them, and
 * none of those migrations writes a row of this table that the lock refuses. The budgets table is made here, locked,
 * so that an earlier release's process can never make it without the lock.
 */
function lockSql(table: string, budgets: string, name: string, lockFunction: string): string {
  const trigger = (on: string, suffix: string, event: 'INSERT' | 'UPDATE', when: string) => `
        IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = '${on}'::regclass AND tgname = '${name}${suffix}') THEN
          CREATE TRIGGER "${name}${suffix}" BEFORE ${event} ON ${on}
            FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION ${lockFunction}();
        END IF;`;
  return `CREATE OR REPLACE FUNCTION ${lockFunction}() RETURNS trigger LANGUAGE plpgsql AS $fn$
          BEGIN
            RAISE EXCEPTION '% was upgraded by a newer tap-collections-sdk: this process runs an older release and may not write to it (upgrade it); nothing was written', TG_TABLE_NAME
              USING ERRCODE = 'object_not_in_prerequisite_state';
          END $fn$;
        ${budgetsTable(budgets)}
        ${trigger(table, '_lock_insert', 'INSERT', `NEW.${WRITES_COLUMN} IS NULL`)}
        ${trigger(table, '_lock_update', 'UPDATE', `OLD.${WRITES_COLUMN} IS NOT DISTINCT FROM NEW.${WRITES_COLUMN}`)}
        ${trigger(budgets, '_b_lock_insert', 'INSERT', `NEW.${WRITES_COLUMN} IS NULL`)}
        ${trigger(budgets, '_b_lock_update', 'UPDATE', `OLD.${WRITES_COLUMN} IS NOT DISTINCT FROM NEW.${WRITES_COLUMN}`)}`;
}

/**
 * The statement `list(filter)` runs on `table` and its values. With `contradictions`, its condition is the partial
 * index's own (`<table>_contra_idx`), so the server reads that index and no other record.
 */
export function listQuery(table: string, filter: PaymentFilter): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const conditions: string[] = [];
  if (filter.states !== undefined) {
    values.push([...filter.states]);
    conditions.push('state = ANY($1)');
  }
  if (filter.contradictions === true) conditions.push('contradiction IS NOT NULL');
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  let limit = '';
  if (filter.limit !== undefined) {
    values.push(filter.limit);
    limit = `LIMIT $${values.length}`;
  }
  return { sql: `SELECT * FROM ${table} ${where} ORDER BY created_at, reference_id ${limit}`, values };
}
