/**
 * Whether an open journal record may be resent, and the very create its push sent, rebuilt: for clients whose
 * service refuses duplicate references (`duplicateReferences: 'refused'`), so `recover()`, the settlement worker and
 * `initiate` of the same payment learn its outcome from the service's answer to the same create at once, instead of
 * waiting for the sender's window to pass.
 *
 * @module
 */
import type { LevelLogger } from '../core/logger.js';
import { paymentFingerprint } from '../journal/fingerprint.js';
import type { PaymentRecord } from '../journal/journal.js';
import { normalizeZambianMobileNumber } from './phone-number.js';
import { unsealPhoneNumber } from './sealed-number.js';

/** The default of `duplicateMemoryMs`: how long the service is taken to remember a reference (24 h). */
export const DEFAULT_DUPLICATE_MEMORY_MS = 24 * 60 * 60 * 1000;

/** What deciding a resend needs from the client. */
export interface ResendRule {
  /**
   * Why `record`'s push went to another deployment than this client's (another base URL or account), or `undefined`
   * when this client's answers are evidence about it (see `ClientDeployment.mismatch`): a resend goes only there.
   */
  readonly deploymentMismatch: (record: PaymentRecord) => Promise<Error | undefined>;
  /** How long the service remembers a reference (`duplicateMemoryMs`). */
  readonly duplicateMemoryMs: number;
  /** The API key the client sends (the key the number was sealed under, unless it was rotated). */
  readonly apiKey: () => Promise<string>;
  /** Where a record that cannot be resent says why (never with the number or the key). */
  readonly logger: LevelLogger;
}

/**
 * Until when (this process's monotonic clock) the service still remembers `record`'s reference: `duplicateMemoryMs`
 * after the record was first written, its age read on the journal's clock (`journalNow`, read at `readAt`, a
 * monotonic reading taken before that read was issued). The resend's own retries leave only before it.
 */
export function rememberedUntil(
  record: PaymentRecord,
  rule: Pick<ResendRule, 'duplicateMemoryMs'>,
  journalNow: string,
  readAt: number,
): number {
  return readAt + rule.duplicateMemoryMs - (Date.parse(journalNow) - Date.parse(record.createdAt));
}

/** The create of a record, rebuilt byte for byte as its push sent it. */
export type RebuiltCreate = Readonly<Record<string, unknown>> & { readonly referenceId: string };

/**
 * The create `record`'s push sent, when this client may send it again: the record is open (`initiating` or
 * `unknown`), keeps a sealed number that this client's key opens, was first written less than `duplicateMemoryMs`
 * ago by the journal's clock (`journalNow`), names no other deployment, and the rebuilt payment matches its
 * fingerprint. Otherwise `undefined`: the record is judged by the `'unknown'` rule (wait for window + grace).
 */
export async function rebuildCreate(record: PaymentRecord, rule: ResendRule, journalNow: string): Promise<RebuiltCreate | undefined> {
  if ((record.state !== 'initiating' && record.state !== 'unknown') || record.sealedPhoneNumber === undefined) return undefined;
  const ageMs = Date.parse(journalNow) - Date.parse(record.createdAt);
  if (!Number.isFinite(ageMs) || ageMs >= rule.duplicateMemoryMs) return undefined;
  const mismatch = await rule.deploymentMismatch(record);
  if (mismatch !== undefined) {
    rule.logger.error(`payment ${record.referenceId}: not resending it here: ${mismatch.message}`);
    return undefined;
  }
  let apiKey: string;
  try {
    apiKey = await rule.apiKey();
  } catch {
    // A key function that fails or takes too long now: judged without a resend this time (the next check tries again).
    rule.logger.warn(`payment ${record.referenceId}: the API key could not be read to open its sealed number; judged without a resend`);
    return undefined;
  }
  const phoneNumber = await unsealPhoneNumber(apiKey, record.referenceId, record.sealedPhoneNumber);
  if (phoneNumber === undefined) {
    rule.logger.warn(
      `payment ${record.referenceId}: its sealed number does not open with this API key (rotated?); judged without a resend`,
    );
    return undefined;
  }
  const fingerprint = await paymentFingerprint({
    referenceId: record.referenceId,
    productId: record.productId,
    amount: record.amount,
    currency: record.currency,
    phoneNumber: normalizeZambianMobileNumber(phoneNumber, 'international'),
    narration: record.narration,
  });
  if (fingerprint !== record.fingerprint) {
    rule.logger.error(`payment ${record.referenceId}: the rebuilt create does not match the record's fingerprint; not resending it`);
    return undefined;
  }
  // The order and the fields of initiate's own body: the resend is the same create, byte for byte.
  return {
    productId: record.productId,
    referenceId: record.referenceId,
    phoneNumber,
    currency: record.currency,
    amount: record.amount,
    ...(record.narration === undefined ? {} : { narration: record.narration }),
  };
}
