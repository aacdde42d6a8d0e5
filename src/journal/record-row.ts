/**
 * How a {@link PaymentRecord} maps onto one row of an SQL table, shared by the SQLite and PostgreSQL stores so
 * both keep the same columns and read absent fields back the same way (SQL `NULL` ↔ a missing property).
 *
 * @module
 */
import {
  type NewPaymentRecord,
  type PaymentContradiction,
  type PaymentDeployment,
  type PaymentError,
  type PaymentEvent,
  type PaymentRecord,
  type PaymentState,
  sendWindowOf,
  withDecidableAt,
} from './journal.js';

/** The record's columns, in the order {@link recordToRow} binds them. */
export const RECORD_COLUMNS = [
  'reference_id',
  'state',
  'product_id',
  'amount',
  'currency',
  'phone_number',
  'narration',
  'fingerprint',
  'created_at',
  'updated_at',
  'status_text',
  'transaction_code',
  'reason',
  'error',
  'version',
  'send_window_ms',
  'contradiction',
  'deployment',
  'sealed_phone_number',
  'writes',
] as const;

/**
 * The column only this release's writers set: every `INSERT` writes 1 and every `UPDATE` adds 1 (see
 * {@link WRITES_BUMP}). The stores' triggers refuse a write that does not, so a process of an earlier release (whose
 * statements never name the column) fails on every write into an upgraded journal.
 */
export const WRITES_COLUMN = 'writes';
/** The assignment every `UPDATE` of a record row carries (rows of an earlier release hold `NULL`). */
export const WRITES_BUMP = `${WRITES_COLUMN} = COALESCE(${WRITES_COLUMN}, 0) + 1`;

/** The columns of a history row, in the order {@link eventToRow} binds them. */
export const EVENT_COLUMNS = [
  'reference_id',
  'at',
  'from_state',
  'to_state',
  'status_text',
  'transaction_code',
  'request_id',
  'by',
] as const;

/**
 * A row as a driver returns it, keyed by {@link RECORD_COLUMNS}: `error` as JSON text (SQLite) or already parsed
 * (PostgreSQL `jsonb`).
 */
export type RecordRow = Readonly<Record<string, unknown>>;

/** A deployment as both stores keep it (JSON text of its two fields, in this order), or `null` for none. */
export function deploymentColumn(deployment: PaymentDeployment | undefined): string | null {
  return deployment === undefined ? null : JSON.stringify({ baseUrl: deployment.baseUrl, account: deployment.account });
}

/**
 * The values an `INSERT` binds for a new record, in {@link RECORD_COLUMNS} order, stamped `at` (the journal's
 * clock) with version 1; absent fields become `null`.
 */
export function recordToRow(record: NewPaymentRecord, at: string | null): (string | number | null)[] {
  return [
    record.referenceId,
    record.state,
    record.productId,
    record.amount,
    record.currency,
    record.phoneNumber,
    record.narration ?? null,
    record.fingerprint,
    at,
    at,
    record.statusText ?? null,
    record.transactionCode ?? null,
    record.reason ?? null,
    record.error === undefined ? null : JSON.stringify(record.error),
    1,
    // Never NULL: a window not known is stored as the longest one (Infinity), and a NULL marks the insert of an
    // older release, which an upgraded store refuses.
    sendWindowOf(record),
    null,
    deploymentColumn(record.deployment),
    record.sealedPhoneNumber ?? null,
    1,
  ];
}

/** A time as a driver returns it (ISO text, or a `Date` from PostgreSQL's `timestamptz`) as ISO 8601 text. */
function isoTime(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/** The record a row holds; a `NULL` column is an absent property, never `null`. */
export function rowToRecord(row: RecordRow): PaymentRecord {
  const record: Record<string, unknown> = {
    referenceId: String(row.reference_id),
    state: row.state as PaymentState,
    productId: String(row.product_id),
    amount: Number(row.amount),
    currency: String(row.currency),
    phoneNumber: String(row.phone_number),
    fingerprint: String(row.fingerprint),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
    version: Number(row.version ?? 1),
  };
  // A window not known (NULL, or the Infinity an upgrade or an insert without one wrote) is an absent property.
  const window = row.send_window_ms === null || row.send_window_ms === undefined ? Number.NaN : Number(row.send_window_ms);
  if (Number.isFinite(window)) record.sendWindowMs = window;
  if (row.narration !== null) record.narration = String(row.narration);
  if (row.status_text !== null) record.statusText = String(row.status_text);
  if (row.transaction_code !== null) record.transactionCode = String(row.transaction_code);
  if (row.reason !== null) record.reason = String(row.reason);
  if (row.error !== null) record.error = (typeof row.error === 'string' ? JSON.parse(row.error) : row.error) as PaymentError;
  const contradiction = jsonColumn(row.contradiction);
  if (contradiction !== undefined) record.contradiction = contradiction as PaymentContradiction;
  const deployment = jsonColumn(row.deployment);
  if (deployment !== undefined) record.deployment = deployment as PaymentDeployment;
  if (row.sealed_phone_number !== null && row.sealed_phone_number !== undefined) record.sealedPhoneNumber = String(row.sealed_phone_number);
  return withDecidableAt(record as unknown as PaymentRecord);
}

/** A JSON column as a driver returns it (text from SQLite, parsed from PostgreSQL), or `undefined` when absent or unreadable. */
function jsonColumn(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** The event a history row holds. */
export function rowToEvent(row: RecordRow): PaymentEvent {
  const event: Record<string, unknown> = {
    at: isoTime(row.at),
    from: row.from_state === null ? null : (row.from_state as PaymentState),
    to: row.to_state as PaymentState,
    by: String(row.by),
  };
  if (row.status_text !== null) event.statusText = String(row.status_text);
  if (row.transaction_code !== null) event.transactionCode = String(row.transaction_code);
  if (row.request_id !== null) event.requestId = String(row.request_id);
  return event as unknown as PaymentEvent;
}

/** The values a history `INSERT` binds, in {@link EVENT_COLUMNS} order. */
export function eventToRow(referenceId: string, event: PaymentEvent): (string | null)[] {
  return [
    referenceId,
    event.at,
    event.from,
    event.to,
    event.statusText ?? null,
    event.transactionCode ?? null,
    event.requestId ?? null,
    event.by,
  ];
}

// --- Rows that cannot be read are reported once and skipped ---

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATES = new Set<string>(['initiating', 'pending', 'unknown', 'rejected', 'not-sent', 'successful', 'failed']);

/** Why a row cannot be read as a record, or `undefined` when it can (what {@link rowToRecord} relies on). */
function unreadable(row: RecordRow): string | undefined {
  if (typeof row.reference_id !== 'string' || !UUID.test(row.reference_id))
    return 'a reference_id that is not a UUID (a row the SDK did not write)';
  if (typeof row.state !== 'string' || !STATES.has(row.state)) return 'an unknown state';
  if (!Number.isFinite(Number(row.amount))) return 'an amount that is not a number';
  for (const column of ['created_at', 'updated_at'] as const) {
    const value = row[column];
    if (!(value instanceof Date ? Number.isFinite(value.getTime()) : Number.isFinite(Date.parse(String(value)))))
      return `a ${column} that is not a time`;
  }
  if (row.error !== null && row.error !== undefined) {
    let error: unknown = row.error;
    if (typeof error === 'string') {
      try {
        error = JSON.parse(error);
      } catch {
        return 'an error column that is not JSON';
      }
    }
    if (typeof error !== 'object' || error === null || typeof (error as { name?: unknown }).name !== 'string')
      return 'an error column that is not an object with a name';
  }
  // A deployment that cannot be read must not read as "absent": that is how a record of an earlier release looks.
  if (row.deployment !== null && row.deployment !== undefined) {
    const deployment = jsonColumn(row.deployment) as { baseUrl?: unknown; account?: unknown } | undefined;
    if (
      typeof deployment !== 'object' ||
      deployment === null ||
      typeof deployment.baseUrl !== 'string' ||
      typeof deployment.account !== 'string'
    )
      return 'a deployment column that is not an object with a baseUrl and an account';
  }
  return undefined;
}

/** What a store is told about a row it skipped. */
export interface UnreadableRow {
  /** The row's `reference_id` as stored (may be anything: the row is not the SDK's). */
  readonly referenceId: string;
  /** Why it cannot be read. */
  readonly reason: string;
}

/**
 * Reads rows as records, skipping a row that cannot be read (corrupt, foreign, another version's) and reporting
 * each such row once per journal object: one bad row never stops a list, a lease or a read of the others.
 */
export class RowReader {
  readonly #reported = new Set<string>();
  readonly #report: (row: UnreadableRow) => void;

  constructor(report: ((row: UnreadableRow) => void) | undefined) {
    this.#report =
      report ??
      ((row) =>
        console.warn(
          `tap-collections-sdk journal: skipped a row that cannot be read (reference_id ${JSON.stringify(row.referenceId)}: ${row.reason})`,
        ));
  }

  /** The record, or `undefined` (reported once) when the row cannot be read. */
  read(row: RecordRow): PaymentRecord | undefined {
    const reason = unreadable(row);
    if (reason === undefined) return rowToRecord(row);
    const referenceId = String(row.reference_id).slice(0, 200);
    if (!this.#reported.has(referenceId)) {
      this.#reported.add(referenceId);
      try {
        this.#report({ referenceId, reason });
      } catch {
        // A reporter that throws must not turn a skipped row into a failed read.
      }
    }
    return undefined;
  }

  /** Every readable record of `rows`, in order. */
  readAll(rows: readonly RecordRow[]): PaymentRecord[] {
    const records: PaymentRecord[] = [];
    for (const row of rows) {
      const record = this.read(row);
      if (record !== undefined) records.push(record);
    }
    return records;
  }
}
