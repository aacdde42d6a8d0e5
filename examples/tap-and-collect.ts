/**
 * What a till does when a customer taps: resolve the tag, charge its airtel_money number, wait for the
 * customer to approve, and say what happened, handling every outcome a till must handle.
 *
 * Runs against the embedded simulator unless the sandbox variables are set (see connect.ts).
 *
 * Run: `node examples/tap-and-collect.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import {
  BadRequestError,
  type CollectionsClient,
  mobileNumberFor,
  NotFoundError,
  PollTimeoutError,
  type TapClient,
  UnknownOutcomeError,
} from 'tap-collections-sdk';
import { connect } from './connect.ts';

type TillResult =
  | { kind: 'paid'; referenceId: string; transactionCode: string | null | undefined }
  | { kind: 'declined'; referenceId: string; reason: string }
  | { kind: 'unresolved'; reason: string }
  | { kind: 'check-later'; referenceId: string };

/** One sale: tap → resolve → push → wait. */
export async function chargeTap(
  clients: { tap: TapClient; collections: CollectionsClient },
  sale: { tagId: string; amount: number; productId: string; merchantId: string; terminalId: string },
  poll: { initialDelayMs?: number; intervalMs?: number; maxIntervalMs?: number } = {},
): Promise<TillResult> {
  let phoneNumber: string | undefined;
  try {
    const query = await clients.tap.submitCustomerQuery({ ...sale, merchantName: 'Kabwe Groceries' });
    phoneNumber = mobileNumberFor(query);
  } catch (error) {
    // A missing or inactive tag, or no number for the provider: 404 or 400, whichever the service sends.
    if (error instanceof NotFoundError || error instanceof BadRequestError) return { kind: 'unresolved', reason: error.message };
    throw error;
  }
  if (phoneNumber === undefined) return { kind: 'unresolved', reason: 'no active airtel_money number on this tag' };

  // Persist the referenceId BEFORE pushing, so a crash mid-call can be reconciled (docs/guide/reliability.md).
  const referenceId = crypto.randomUUID();
  try {
    await clients.collections.initiate({ productId: sale.productId, phoneNumber, amount: sale.amount, referenceId });
    const outcome = await clients.collections.pollUntilSettled(referenceId, {
      ...poll,
      onUpdate: (status) => console.log(`  till: ${status.statusText === 'pending' ? 'waiting for the customer…' : status.statusText}`),
    });
    if (outcome.statusText === 'successful') return { kind: 'paid', referenceId, transactionCode: outcome.transactionCode };
    return { kind: 'declined', referenceId, reason: outcome.reason ?? outcome.transactionCode ?? 'failed' };
  } catch (error) {
    // The payment may still happen: never push again for this sale; check the reference later.
    if (error instanceof PollTimeoutError || error instanceof UnknownOutcomeError) return { kind: 'check-later', referenceId };
    throw error;
  }
}

const connection = await connect();
try {
  const suffix = crypto.randomUUID().slice(0, 8);
  const result = await chargeTap(
    connection,
    { tagId: connection.tagId, amount: 42.5, productId: connection.productId, merchantId: `till-${suffix}`, terminalId: `T7-${suffix}` },
    connection.poll,
  );
  console.log(`sale finished against the ${connection.target}:`, result);
  process.exitCode = result.kind === 'paid' ? 0 : 1;
} finally {
  await connection.close();
}
