/**
 * The customer's number as a journal record keeps it for a resend (`PaymentRecord.sealedPhoneNumber`): AES-GCM
 * under a key derived (HKDF-SHA-256) from the API key and bound to the record's `referenceId`, so the journal, a
 * backup of it, or a reader of another record learns nothing, and a sealed number cannot be moved to another record.
 * Web Crypto only (`globalThis.crypto.subtle`): the main entry imports no `node:` module.
 *
 * After the API key changes, a sealed number cannot be opened: {@link unsealPhoneNumber} answers `undefined`, and
 * the record is judged as if it had none (see docs/guide/assumptions.md and docs/internals/assumptions-rationale.md, "When your provider refuses duplicate references").
 *
 * @module
 */

const VERSION = 'v1';
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Separates this derivation from every other use of the key. */
const SALT = encoder.encode('tap-collections-sdk sealed phone number v1');

async function sealingKey(apiKey: string, referenceId: string): Promise<CryptoKey> {
  const material = await globalThis.crypto.subtle.importKey('raw', encoder.encode(apiKey), 'HKDF', false, ['deriveKey']);
  return globalThis.crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: SALT, info: encoder.encode(referenceId.toLowerCase()) },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** Seals `phoneNumber` (as sent) for the record of `referenceId`: `v1.<iv>.<ciphertext>`, base64url. */
export async function sealPhoneNumber(apiKey: string, referenceId: string, phoneNumber: string): Promise<string> {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(12));
  const key = await sealingKey(apiKey, referenceId);
  const additionalData = encoder.encode(referenceId.toLowerCase());
  const sealed = await globalThis.crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData }, key, encoder.encode(phoneNumber));
  return `${VERSION}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

/**
 * Opens a number sealed by {@link sealPhoneNumber}; `undefined` when it cannot be (another API key, another record,
 * a damaged or unknown form). Never throws.
 */
export async function unsealPhoneNumber(apiKey: string, referenceId: string, sealed: string): Promise<string | undefined> {
  const parts = sealed.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
  const [, iv, data] = parts as [string, string, string];
  try {
    const key = await sealingKey(apiKey, referenceId);
    const additionalData = encoder.encode(referenceId.toLowerCase());
    const opened = await globalThis.crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64Url(iv), additionalData },
      key,
      fromBase64Url(data),
    );
    return decoder.decode(opened);
  } catch {
    return undefined;
  }
}

function toBase64Url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (char) => char.charCodeAt(0));
}
