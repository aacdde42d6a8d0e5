/**
 * The one redaction rule for everything the SDK writes to a log: phone numbers masked, personal names
 * and secrets dropped. Applied to every structured log field, so no call site can forget it.
 *
 * @module
 */

const PHONE_FIELD = /phone|mobile|msisdn/i;
const DROPPED_FIELD = /^(firstName|lastName|merchantName|partnerName|name|apiKey|authorization|x-api-key|token|secret)$/i;
// Nine or more digits in a row, optionally after a plus: any phone-shaped run inside free text.
const DIGIT_RUN = /\+?\d[\d -]{7,}\d/g;

/** Masks a phone number, keeping the first three and last two digits: `260977123456` → `260*******56`. @group Utilities */
export function maskPhoneNumber(value: string): string {
  const digits = value.replace(/\D/g, '');
  if (digits.length < 6) return '*'.repeat(digits.length);
  return `${digits.slice(0, 3)}${'*'.repeat(digits.length - 5)}${digits.slice(-2)}`;
}

/** A copy of `value` that is safe to log: phone numbers masked, names and secrets replaced by `[redacted]`. */
export function redactForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.replace(DIGIT_RUN, (run) => maskPhoneNumber(run));
  if (value === null || typeof value !== 'object') return value;
  if (depth > 6) return '[…]';
  if (Array.isArray(value)) return value.map((item) => redactForLog(item, depth + 1));
  const safe: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (DROPPED_FIELD.test(key)) safe[key] = '[redacted]';
    else if (PHONE_FIELD.test(key) && typeof field === 'string') safe[key] = maskPhoneNumber(field);
    else safe[key] = redactForLog(field, depth + 1);
  }
  return safe;
}

/** Replaces every occurrence of `secret` in `text` (a server that echoes the key must not leak it into an error). */
export function scrubSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4 || !text.includes(secret)) return text;
  return text.split(secret).join('[redacted]');
}
