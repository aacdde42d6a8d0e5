/** Journal records as an initiating process leaves them, for tests that settle payments they did not initiate. */
import { randomUUID } from 'node:crypto';
import { maskPhoneNumber } from '../../src/index.ts';
import type { NewPaymentRecord, PaymentJournal, PaymentState } from '../../src/journal/journal.ts';
import { PRODUCTS } from '../../src/testing/index.ts';

/**
 * The journal stamps its own times: a record "created at" another time needs a journal whose clock says so. Every
 * record carries its sender's window, as `initiate` writes it; 0 here: its age alone decides (a record without one
 * would never become `not-sent` by age).
 */
export function openRecord(phoneNumber: string, state: PaymentState = 'pending'): NewPaymentRecord {
  return {
    referenceId: randomUUID(),
    state,
    productId: PRODUCTS.primary,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: maskPhoneNumber(phoneNumber),
    fingerprint: randomUUID(),
    sendWindowMs: 0,
  };
}

/** Writes `records` into `journal`, failing loudly on a duplicate. */
export async function insertAll(journal: PaymentJournal, records: readonly NewPaymentRecord[]): Promise<void> {
  for (const record of records) {
    if ((await journal.insert(record)) === undefined) throw new Error(`duplicate ${record.referenceId}`);
  }
}
