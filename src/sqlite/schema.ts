/**
 * The SQLite journal's schema: its table names, the current schema version, the statements that create it, the
 * steps that upgrade a table of an older release, and the triggers that refuse an older release's writes.
 *
 * @module
 */
import type { PaymentFilter } from '../journal/journal.js';
import { RECORD_COLUMNS, WRITES_COLUMN } from '../journal/record-row.js';

/** The records' table. */
export const TABLE = 'tap_payment_journal';
/** Every record's events. */
export const HISTORY = `${TABLE}_history`;
/** The rate budgets. */
export const BUDGETS = `${TABLE}_budgets`;
/** The schema this release writes (`PRAGMA user_version`). */
export const SCHEMA_VERSION = 4;
/** The open states, as an SQL list. */
export const OPEN = "('initiating', 'pending', 'unknown')";

/** The records' table and its indexes. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS ${TABLE} (
  reference_id TEXT PRIMARY KEY NOT NULL,
  state TEXT NOT NULL,
  product_id TEXT NOT NULL,
  amount REAL NOT NULL,
  currency TEXT NOT NULL,
  phone_number TEXT NOT NULL,
  narration TEXT,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status_text TEXT,
  transaction_code TEXT,
  reason TEXT,
  error TEXT,
  leased_to TEXT,
  leased_until INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL DEFAULT 1,
  send_window_ms INTEGER,
  contradiction TEXT,
  deployment TEXT,
  sealed_phone_number TEXT,
  ${WRITES_COLUMN} INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ${TABLE}_order ON ${TABLE} (created_at, reference_id);
CREATE INDEX IF NOT EXISTS ${TABLE}_open ON ${TABLE} (created_at, reference_id) WHERE state IN ${OPEN};
-- Leases in due order (never leased or released first, then by when the lease ran out).
-- journal list --contradictions reads only the marked records, however many there are.
CREATE INDEX IF NOT EXISTS ${TABLE}_contradicted ON ${TABLE} (created_at, reference_id) WHERE contradiction IS NOT NULL;
CREATE INDEX IF NOT EXISTS ${TABLE}_due ON ${TABLE} (leased_until, created_at DESC, reference_id DESC) WHERE state IN ${OPEN};
`;

/** What a writer of an older release reads when it writes into an upgraded file. */
const REFUSAL = `${TABLE} was upgraded by a newer tap-collections-sdk (schema version ${SCHEMA_VERSION}): this process runs an older release and may not write to it (upgrade it); nothing was written`;

/**
 * Writers of an older release fail after an upgrade (evidence-records): a process of the first release that had the
 * file open before the upgrade keeps its prepared statements, which SQLite prepares again against the new schema on
 * their next run. Its insert names no `send_window_ms` (every insert of this release writes one), its update bumps
 * no `version` (every change of this release does), and its lease statements name columns that no longer exist
 * (`lease_owner`, `lease_expires_at`, renamed): each fails with an error, and its `initiate` sends nothing.
 */
export const REFUSE_OLD_WRITERS = `
CREATE TRIGGER ${TABLE}_refuse_old_insert BEFORE INSERT ON ${TABLE} WHEN NEW.send_window_ms IS NULL
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
CREATE TRIGGER ${TABLE}_refuse_old_update
BEFORE UPDATE OF state, updated_at, status_text, transaction_code, reason, error, send_window_ms ON ${TABLE}
WHEN NEW.version IS OLD.version
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
`;
/**
 * Writers of every earlier release fail after an upgrade, whatever they write: the first release, the state-machine
 * release (whose insert writes a window and whose update bumps `version`, so the triggers above let them through) and
 * the release before this one. Every insert of this release writes `writes` (1) and every update adds 1 to it,
 * leases included; no earlier release names the column, so its insert leaves it `NULL` and its update leaves it
 * unchanged, and these triggers refuse both. No earlier release drops or makes triggers of these names, and none
 * can open a file of this schema version (each refuses a `user_version` above its own), so none can undo them.
 */
export const LOCK_EARLIER_RELEASES = `
CREATE TRIGGER IF NOT EXISTS ${TABLE}_lock_insert BEFORE INSERT ON ${TABLE} WHEN NEW.${WRITES_COLUMN} IS NULL
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
CREATE TRIGGER IF NOT EXISTS ${TABLE}_lock_update BEFORE UPDATE ON ${TABLE} WHEN NEW.${WRITES_COLUMN} IS OLD.${WRITES_COLUMN}
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
`;

/** Drops the refusal triggers while an upgrade runs (they are made again after it). */
export const DROP_OLD_WRITER_TRIGGERS = `
DROP TRIGGER IF EXISTS ${TABLE}_refuse_old_insert;
DROP TRIGGER IF EXISTS ${TABLE}_refuse_old_update;
DROP TRIGGER IF EXISTS ${TABLE}_lock_insert;
DROP TRIGGER IF EXISTS ${TABLE}_lock_update;
`;

/**
 * The budgets table with the same lock: the release before this one writes it (`key`, `state`) and names no
 * `writes`. Made by the upgrade, not on first use, so that an earlier release's process that had the file open can
 * never make it without the lock.
 */
export const BUDGETS_SCHEMA = `
CREATE TABLE IF NOT EXISTS ${BUDGETS} (key TEXT PRIMARY KEY, state TEXT NOT NULL, ${WRITES_COLUMN} INTEGER);
CREATE TRIGGER IF NOT EXISTS ${BUDGETS}_lock_insert BEFORE INSERT ON ${BUDGETS} WHEN NEW.${WRITES_COLUMN} IS NULL
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
CREATE TRIGGER IF NOT EXISTS ${BUDGETS}_lock_update BEFORE UPDATE ON ${BUDGETS} WHEN NEW.${WRITES_COLUMN} IS OLD.${WRITES_COLUMN}
BEGIN SELECT RAISE(ABORT, '${REFUSAL}'); END;
`;

/** The history of every record, appended in the same transaction as the change it describes. */
export const HISTORY_SCHEMA = `
CREATE TABLE IF NOT EXISTS ${HISTORY} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  reference_id TEXT NOT NULL,
  at TEXT NOT NULL,
  from_state TEXT,
  to_state TEXT NOT NULL,
  status_text TEXT,
  transaction_code TEXT,
  request_id TEXT,
  by TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ${HISTORY}_reference ON ${HISTORY} (reference_id, id);
`;

/**
 * The upgrade of an existing table to this schema, step by step, each only if not done yet (a process of the first
 * release that opened the file while it was being upgraded may have set `user_version` back): the compare-and-set
 * version and the sender's window (schema 2), the lease columns under their new names (schema 3), the deployment,
 * the sealed number and the writes column (schema 4).
 */
export function upgradeSteps(columns: ReadonlySet<string>): string[] {
  const steps: string[] = [];
  if (!columns.has('version')) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN version INTEGER NOT NULL DEFAULT 1`);
  if (!columns.has('send_window_ms')) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN send_window_ms INTEGER`);
  if (!columns.has('contradiction')) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN contradiction TEXT`);
  // Schema 4: where the push went, the sealed number, and the column that locks out every earlier release's writes.
  if (!columns.has('deployment')) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN deployment TEXT`);
  if (!columns.has('sealed_phone_number')) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN sealed_phone_number TEXT`);
  if (!columns.has(WRITES_COLUMN)) steps.push(`ALTER TABLE ${TABLE} ADD COLUMN ${WRITES_COLUMN} INTEGER`);
  if (columns.has('lease_owner')) steps.push(`ALTER TABLE ${TABLE} RENAME COLUMN lease_owner TO leased_to`);
  if (columns.has('lease_expires_at')) steps.push(`ALTER TABLE ${TABLE} RENAME COLUMN lease_expires_at TO leased_until`);
  return steps;
}

/**
 * Records by state, kept by triggers in the transaction of each write, so counts() (the worker's /metrics) reads
 * seven rows whatever the journal's size. Created with the counts of the records already there, under the write
 * lock; the triggers live in the file, so every writer keeps them (an older SDK too).
 */
export const COUNTS = `${TABLE}_counts`;
/** The records by state, and the triggers that keep them. */
export const COUNTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS ${COUNTS} (state TEXT PRIMARY KEY NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
DELETE FROM ${COUNTS};
INSERT INTO ${COUNTS} SELECT state, count(*) FROM ${TABLE} GROUP BY state;
CREATE TRIGGER ${COUNTS}_insert AFTER INSERT ON ${TABLE} BEGIN
  INSERT INTO ${COUNTS} VALUES (NEW.state, 1) ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER ${COUNTS}_update AFTER UPDATE OF state ON ${TABLE} WHEN NEW.state IS NOT OLD.state BEGIN
  UPDATE ${COUNTS} SET n = n - 1 WHERE state = OLD.state;
  INSERT INTO ${COUNTS} VALUES (NEW.state, 1) ON CONFLICT (state) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER ${COUNTS}_delete AFTER DELETE ON ${TABLE} BEGIN
  UPDATE ${COUNTS} SET n = n - 1 WHERE state = OLD.state;
END;
`;

/** The record columns, as an SQL list. */
export const COLUMNS = RECORD_COLUMNS.join(', ');

/**
 * The statement `list(filter)` runs and its parameters (a filter of no states is answered without one). With
 * `contradictions`, its condition is the partial index's own, so SQLite reads that index and no other record.
 */
export function listQuery(filter: PaymentFilter): { sql: string; parameters: (string | number)[] } {
  const states = filter.states;
  const conditions = states === undefined ? [] : [`state IN (${states.map(() => '?').join(', ')})`];
  if (filter.contradictions === true) conditions.push('contradiction IS NOT NULL');
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  const parameters: (string | number)[] = [...(states ?? [])];
  if (filter.limit !== undefined) parameters.push(Math.max(0, Math.floor(filter.limit)));
  const limit = filter.limit === undefined ? '' : 'LIMIT ?';
  return { sql: `SELECT ${COLUMNS} FROM ${TABLE} ${where} ORDER BY created_at, reference_id ${limit}`, parameters };
}
