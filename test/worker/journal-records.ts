/** Journal records as an initiating process leaves them, for tests that settle payments they did not initiate. */
import { randomUUID } from 'node:crypto';
import { maskPhoneNumber } from '../../src/index.ts';
import type { PaymentJournal, PaymentRecord, PaymentState } from '../../src/journal/journal.ts';
import { PRODUCTS } from '../../src/testing/index.ts';

export function openRecord(phoneNumber: string, state: PaymentState = 'pending', at = new Date()): PaymentRecord {
  const iso = at.toISOString();
  return {
    referenceId: randomUUID(),
    state,
    productId: PRODUCTS.primary,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: maskPhoneNumber(phoneNumber),
    fingerprint: randomUUID(),
    createdAt: iso,
    updatedAt: iso,
  };
}

/** Writes `records` into `journal`, failing loudly on a duplicate. */
export async function insertAll(journal: PaymentJournal, records: readonly PaymentRecord[]): Promise<void> {
  for (const record of records) {
    if (!(await journal.insert(record))) throw new Error(`duplicate ${record.referenceId}`);
  }
}
