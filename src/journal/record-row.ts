/**
 * How a {@link PaymentRecord} maps onto one row of an SQL table, shared by the SQLite and PostgreSQL stores so
 * both keep the same columns and read absent fields back the same way (SQL `NULL` ↔ a missing property).
 *
 * @module
 */
import type { PaymentError, PaymentRecord, PaymentState } from './journal.js';

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
] as const;

/**
 * A row as a driver returns it, keyed by {@link RECORD_COLUMNS}: `error` as JSON text (SQLite) or already parsed
 * (PostgreSQL `jsonb`).
 */
export type RecordRow = Readonly<Record<string, unknown>>;

/** The values an `INSERT` binds for `record`, in {@link RECORD_COLUMNS} order; absent fields become `null`. */
export function recordToRow(record: PaymentRecord): (string | number | null)[] {
  return [
    record.referenceId,
    record.state,
    record.productId,
    record.amount,
    record.currency,
    record.phoneNumber,
    record.narration ?? null,
    record.fingerprint,
    record.createdAt,
    record.updatedAt,
    record.statusText ?? null,
    record.transactionCode ?? null,
    record.reason ?? null,
    record.error === undefined ? null : JSON.stringify(record.error),
  ];
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
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
  if (row.narration !== null) record.narration = String(row.narration);
  if (row.status_text !== null) record.statusText = String(row.status_text);
  if (row.transaction_code !== null) record.transactionCode = String(row.transaction_code);
  if (row.reason !== null) record.reason = String(row.reason);
  if (row.error !== null) record.error = (typeof row.error === 'string' ? JSON.parse(row.error) : row.error) as PaymentError;
  return record as unknown as PaymentRecord;
}
