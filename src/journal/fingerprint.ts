/**
 * The payment fingerprint: what tells a retry of a payment from a different payment reusing its `referenceId`,
 * without letting a reader of the journal recover the customer's number.
 *
 * The journal keeps product, amount, currency and narration in clear, and the number masked (`260*******56`):
 * those are compared field by field. What the fingerprint adds is the masked middle of the number, and that is the
 * part a plain hash would give away: a Zambian mobile number has nine digits after 260, starting with 7 or 9, and
 * the mask shows the last two, which leaves about two million candidates, hashed in well under a second.
 *
 * So the fingerprint keeps only **12 bits** of an HMAC-SHA-256 keyed by the `referenceId` (no table serves two
 * records): brute force leaves a reader with about 500 equally likely numbers per record, never the number.
 * The price: a different number that shares the last two digits, on a reused `referenceId`, with the same product,
 * amount and narration, passes for the same payment once in about 400 000 such mistakes (then the call resolves
 * with the existing collection instead of refusing locally; the service refuses the duplicate either way).
 *
 * @module
 */

const VERSION = 'v1';
const encoder = new TextEncoder();

/** What identifies a payment; `phoneNumber` in its international form (`260977123456`). */
export interface FingerprintedPayment {
  readonly referenceId: string;
  readonly productId: string;
  readonly amount: number;
  readonly currency: string;
  readonly phoneNumber: string;
  readonly narration?: string | undefined;
}

/** The fingerprint of `payment`: `v1:` and three hex digits. Uses Web Crypto (`globalThis.crypto.subtle`). */
export async function paymentFingerprint(payment: FingerprintedPayment): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(payment.referenceId.toLowerCase()),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const canonical = JSON.stringify([
    payment.productId.toLowerCase(),
    payment.amount,
    payment.currency,
    payment.phoneNumber,
    payment.narration ?? null,
  ]);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(canonical)));
  // biome-ignore lint/style/noNonNullAssertion: a SHA-256 MAC has 32 bytes.
  const twelveBits = (mac[0]! << 4) | (mac[1]! >> 4);
  return `${VERSION}:${twelveBits.toString(16).padStart(3, '0')}`;
}
