/**
 * How a {@link PaymentRecord} maps onto one row of an SQL table, shared by the SQLite and PostgreSQL stores so
 * both keep the same columns and read absent fields back the same way (SQL `NULL` ↔ a missing property).
 *
 * @module
 */
import {
  type NewPaymentRecord,
  type PaymentError,
  type PaymentEvent,
  type PaymentRecord,
  type PaymentState,
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
] as const;

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
    record.sendWindowMs ?? null,
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
  if (row.send_window_ms !== null && row.send_window_ms !== undefined) record.sendWindowMs = Number(row.send_window_ms);
  if (row.narration !== null) record.narration = String(row.narration);
  if (row.status_text !== null) record.statusText = String(row.status_text);
  if (row.transaction_code !== null) record.transactionCode = String(row.transaction_code);
  if (row.reason !== null) record.reason = String(row.reason);
  if (row.error !== null) record.error = (typeof row.error === 'string' ? JSON.parse(row.error) : row.error) as PaymentError;
  return withDecidableAt(record as unknown as PaymentRecord);
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
