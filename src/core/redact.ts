/**
 * The one redaction rule for everything the SDK writes to a log: phone numbers masked, personal names
 * and secrets dropped. Applied to every structured log field, so no call site can forget it.
 *
 * @module
 */

import { maskDigits, maskNumbersInText } from './mobile-number-grammar.js';

const PHONE_FIELD = /phone|mobile|msisdn/i;
const DROPPED_FIELD = /^(firstName|lastName|merchantName|partnerName|name|apiKey|authorization|x-api-key|token|secret)$/i;

/**
 * Masks a phone number, keeping the first three and last two digits: `260977123456` → `260*******56`; any spelling
 * {@link normalizeZambianMobileNumber} accepts (`+260 (97) 712 3456`, other digit scripts) gives the same mask.
 * @group Utilities
 */
export function maskPhoneNumber(value: string): string {
  return maskDigits(value);
}

/**
 * A copy of `value` that is safe to log: phone numbers masked, names and secrets replaced by `[redacted]`. In text,
 * every run of nine or more digits in any spelling of the phone-number grammar is masked; identifiers (UUIDs, request
 * ids, words holding a letter) are never altered.
 */
export function redactForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskNumbersInText(value);
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

/** The shortest API key accepted: a shorter one could not be scrubbed without corrupting ordinary text. */
export const MIN_API_KEY_LENGTH = 8;
/** How many keys a rotating key function returned are remembered for scrubbing (the newest). */
export const REMEMBERED_KEYS = 8;
/** A key's beginning left at the very end of a text (a body cut at its size limit) is scrubbed from this length on. */
const MIN_KEY_TAIL = 4;

/**
 * The one key-scrubbing rule: every string the SDK keeps from a response for an error, a log line or an
 * event (bodies, parsed values, headers such as `x-request-id`, redirect locations) passes through
 * {@link SecretRedactor.scrub} or {@link SecretRedactor.scrubValue}. The data a caller asked for (a 2xx
 * body it reads) is left as the service sent it.
 *
 * It remembers the client's key and the newest {@link REMEMBERED_KEYS} keys a key function returned, and
 * matches each written as is, JSON-escaped and percent-encoded, in any letter case (hosts are lower-cased
 * by URL parsing). Parsed values are scrubbed after decoding, so an echo escaped in some other way
 * (`\u002d`) is caught too.
 */
export class SecretRedactor {
  #keys: string[] = [];
  #pattern: RegExp | undefined;

  /** Adds `key` to the remembered keys (the newest first; the oldest beyond the bound is forgotten). */
  remember(key: string): void {
    if (this.#keys[0] === key) return;
    this.#keys = [key, ...this.#keys.filter((known) => known !== key)].slice(0, REMEMBERED_KEYS);
    const forms = new Set<string>();
    for (const known of this.#keys) {
      forms.add(known);
      forms.add(JSON.stringify(known).slice(1, -1));
      forms.add(JSON.stringify(known).slice(1, -1).replaceAll('/', '\\/'));
      forms.add(encodeURIComponent(known));
    }
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#pattern = new RegExp(alternatives.join('|'), 'gi');
  }

  /** `text` with every remembered key replaced by `[redacted]`. */
  scrub(text: string): string {
    if (this.#pattern === undefined || text === '') return text;
    return text.replace(this.#pattern, REDACTED);
  }

  /** {@link scrub}, and a key's beginning left at the very end of `text` (a body cut at its size limit) replaced too. */
  scrubCut(text: string): string {
    let scrubbed = this.scrub(text);
    const lower = scrubbed.toLowerCase();
    for (const key of this.#keys) {
      const prefix = key.toLowerCase();
      for (let length = Math.min(prefix.length - 1, lower.length); length >= MIN_KEY_TAIL; length--) {
        if (lower.endsWith(prefix.slice(0, length))) {
          scrubbed = `${scrubbed.slice(0, scrubbed.length - length)}${REDACTED}`;
          break;
        }
      }
    }
    return scrubbed;
  }

  /** A copy of a parsed value with every string (and property name) scrubbed. */
  scrubValue(value: unknown, depth = 0): unknown {
    if (typeof value === 'string') return this.scrub(value);
    if (value === null || typeof value !== 'object' || this.#pattern === undefined) return value;
    if (depth > 64) return '[…]';
    if (Array.isArray(value)) return value.map((item) => this.scrubValue(item, depth + 1));
    const copy: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(value)) copy[this.scrub(name)] = this.scrubValue(field, depth + 1);
    return copy;
  }
}

const REDACTED = '[redacted]';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
