/**
 * Zambian mobile numbers, accepted the way people type them and sent in one form.
 *
 * A Zambian mobile number is the country code 260 and nine digits beginning with 7 or 9 (Airtel 97/77,
 * MTN 96/76, Zamtel 95/75 today; every 7x and 9x range is accepted so a new range or a ported number
 * is never refused by the SDK before the service can decide).
 *
 * @module
 */
import { RequestValidationError } from '../core/errors.js';
import { compactSpelling } from '../core/mobile-number-grammar.js';

/** The form a number is sent in: `'international'` → `260977123456`, `'local'` → `0977123456`. @group Configuration */
export type PhoneNumberFormat = 'international' | 'local';

const SUBSCRIBER = /^[79][0-9]{8}$/;

/**
 * The nine subscriber digits of a Zambian mobile number, or `undefined` when `value` is not one. Its spellings are
 * those of the one grammar masking also finds numbers by (`core/mobile-number-grammar`).
 */
function subscriberDigits(value: string): string | undefined {
  const match = /^(?:\+260|00260|260|0)([0-9]{9})$/.exec(compactSpelling(value));
  return match?.[1] && SUBSCRIBER.test(match[1]) ? match[1] : undefined;
}

/** True when `value` is a Zambian mobile number in any accepted form. @group Utilities */
export function isZambianMobileNumber(value: unknown): boolean {
  return typeof value === 'string' && subscriberDigits(value) !== undefined;
}

/**
 * Normalizes a Zambian mobile number typed in any usual form — `+260 97 712 3456`, `260977123456`,
 * `0977123456`, `097-712-3456`, `(097) 712-3456`, `0977.123.456`, `00260977123456`, with any Unicode space or dash
 * between digits and digits of any decimal script — to one form. Every form it accepts is also masked wherever the
 * SDK logs, journals or traces text.
 *
 * @param format - `'international'` (the form the Tap API returns) or `'local'`. @defaultValue `'international'`
 * @throws {@link RequestValidationError} (path `phoneNumber`) when it is not a Zambian mobile number.
 *
 * @group Utilities
 */
export function normalizeZambianMobileNumber(value: string, format: PhoneNumberFormat = 'international'): string {
  const subscriber = typeof value === 'string' ? subscriberDigits(value) : undefined;
  if (subscriber === undefined) {
    throw new RequestValidationError([{ path: 'phoneNumber', message: ZAMBIAN_MOBILE_NUMBER_MESSAGE }]);
  }
  return format === 'local' ? `0${subscriber}` : `260${subscriber}`;
}

/** The message for a number that is not a Zambian mobile number (it never echoes the number). */
export const ZAMBIAN_MOBILE_NUMBER_MESSAGE = 'must be a Zambian mobile number: 260 (or 0) and nine digits beginning with 7 or 9';
