/**
 * Reference ids: generation (UUID v4 from the platform's CSPRNG) and the shape check.
 *
 * @module
 */

/** UUID-shaped: 8-4-4-4-12 hex digits, any version, either case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A new random UUID v4, the idempotency key of a create when the caller gave none. */
export function newReferenceId(): string {
  return globalThis.crypto.randomUUID();
}
