/**
 * What a till shows for a payment in the journal, e.g. after `recover()` at start-up ("last sale: …").
 *
 * @module
 */
import type { PaymentRecord } from './journal.js';

/**
 * A payment's outcome in the words a till needs:
 *
 * | outcome | states | what to do |
 * |---|---|---|
 * | `'paid'` | `successful` | hand over the goods |
 * | `'not-paid'` | `failed` | the customer was asked and the payment failed (declined, no funds): no money moved |
 * | `'not-sent'` | `not-sent`, `rejected` | the customer was never asked (or the service refused the request): start the sale over |
 * | `'unknown'` | `initiating`, `pending`, `unknown` | still open: do not hand over the goods, do not charge again; `recover()` later |
 */
export type SaleOutcome = 'paid' | 'not-paid' | 'not-sent' | 'unknown';

/** The {@link SaleOutcome} of a journal record: what the till tells the cashier. */
export function saleOutcome(record: Pick<PaymentRecord, 'state'>): SaleOutcome {
  switch (record.state) {
    case 'successful':
      return 'paid';
    case 'failed':
      return 'not-paid';
    case 'not-sent':
    case 'rejected':
      return 'not-sent';
    default:
      return 'unknown';
  }
}
