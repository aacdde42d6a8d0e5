/** Builders of documented payloads, so each test states only what it is about. */

import { SHARED_WINDOW_MS } from '../../src/collections/shared-budget.js';
import type { CustomerQuery, CustomerQueryInput } from '../../src/index.js';

export const TAP_BASE_URL = 'https://tap.test';
export const COLLECTIONS_BASE_URL = 'https://collections.test';
export const API_KEY = 'tap_test_key_5f0c2d9e8b7a';

export function customerQueryInput(overrides: Partial<CustomerQueryInput> = {}): CustomerQueryInput {
  return {
    merchantId: 'merchant-001',
    merchantName: 'Kabwe Groceries',
    terminalId: 'terminal-001',
    amount: 125.5,
    tagId: 'TAG-0001',
    referenceId: '3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0f',
    ...overrides,
  };
}

/** The customer query the Tap API returns for `input`, as section 2 of its document lists it. */
export function customerQuery(input: CustomerQueryInput, overrides: Partial<CustomerQuery> = {}): CustomerQuery {
  return {
    id: '9b2e4c1a-0d3f-4e5a-8b6c-7d8e9f0a1b2c',
    partner: { partnerId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', partnerName: 'Kabwe Retail Ltd' },
    customer: { firstName: 'Mwila', lastName: 'Banda' },
    tag: {
      tagId: input.tagId,
      tagNumber: '0001-2345',
      status: 'active',
      mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260977123456', status: 'active' }],
    },
    transaction: {
      merchantId: input.merchantId,
      merchantName: input.merchantName,
      terminalId: input.terminalId,
      referenceId: input.referenceId ?? '3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0f',
      currency: 'ZMW',
      amount: input.amount,
      serviceCharge: 2.5,
      status: 'pending',
    },
    createdAt: '2026-11-21T10:15:30.123Z',
    updatedAt: '2026-11-21T10:15:30.123Z',
    ...overrides,
  };
}

/** The Tap error envelope of section 7. */
export function tapError(status: number, error: string, message: string) {
  return { success: false, message, code: status, error };
}

/** A journal record as `initiate` first writes it, without its `referenceId`: the rows of the SQLite tests. */
export const INITIATING_RECORD = {
  state: 'initiating' as const,
  productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
  amount: 10,
  currency: 'ZMW',
  phoneNumber: '260*******56',
  fingerprint: 'f',
  sendWindowMs: 1000,
};

/**
 * The fields of a shared-budget renewal every test sends alike (a key of 20 per second, the SDK's window, a lease of
 * 8 s, nothing reported yet): a test adds the holder, what it keeps and wants, and whether its requests waited.
 */
export const BUDGET_RENEWAL = {
  key: 'k',
  limit: 20,
  leaseMs: 8_000,
  windowMs: SHARED_WINDOW_MS,
  accepted: 0,
  rateLimited: 0,
} as const;
