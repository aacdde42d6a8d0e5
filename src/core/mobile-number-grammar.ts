/**
 * The one grammar for a Zambian mobile number in any spelling people type, shared by the normalizer (which reads a
 * value that should be one number) and by masking (which finds numbers inside free text), so that every spelling the
 * SDK accepts as a customer's number is also one it masks.
 *
 * A spelling is digits of any script Unicode calls decimal (`\p{Nd}`: ASCII, Arabic-Indic, fullwidth, …) with
 * separators anywhere between them: any white space (every `\p{Zs}` space, tabs, line breaks), hyphens and dashes
 * (`-`, U+2010–U+2015, U+2212), dots and brackets; optionally after a `+`. `+260 (97) 712 3456`, `0977.123.456`,
 * `(097) 712-3456` and `0977 123 456` (with non-breaking or thin spaces) are all one number.
 *
 * In free text, a digit run that is part of a longer identifier is not a phone number: a UUID, and a word of letters,
 * digits and underscores (hyphens joining such words: `req-81`, `3f1b…-0001`, `TX9`) that holds a letter or an
 * underscore, are left exactly as written.
 *
 * @module
 */

/** The separators a number may be written with, between any two of its digits (a character class's inside). */
const SEPARATOR = String.raw`\s\-.()\u2010-\u2015\u2212`;
const SEPARATORS = new RegExp(`[${SEPARATOR}]`, 'gu');
const DECIMAL_DIGIT = /\p{Nd}/gu;
const NON_ASCII_DIGIT = /[^\P{Nd}0-9]/u;

/**
 * A word and the words hyphens join to it (`req-81`, a UUID): the unit that is either an identifier (kept) or, when
 * it is digits only, part of the text a number is looked for in.
 */
const WORD = /[\p{L}\p{N}_]+(?:-[\p{L}\p{N}_]+)*/gu;
const IDENTIFIER_CHARACTER = /[^\p{N}]/u;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A `+` (then maybe separators) or a digit, then digits with separators between them. */
const CANDIDATE = new RegExp(`(?:\\+[${SEPARATOR}]*)?\\p{Nd}(?:[${SEPARATOR}]*\\p{Nd})*`, 'gu');
/** How many digits make a run that is masked in free text: every Zambian mobile number has at least ten. */
const MASKED_DIGITS = 9;

/** How far back a digit's run may start: the longest run of decimal digits Unicode encodes in a row is 50. */
const LONGEST_DIGIT_RUN = 50;
const ONE_DIGIT = /^\p{Nd}$/u;

/**
 * The value (0–9) of a decimal digit of any script. Unicode encodes each script's digits as a run from 0 to 9 (and
 * the mathematical digits as five such runs in a row), so the value is how many digits precede it in its run, mod 10.
 */
function digitValue(codePoint: number): number {
  let before = 0;
  while (before < LONGEST_DIGIT_RUN && ONE_DIGIT.test(String.fromCodePoint(codePoint - before - 1))) before++;
  return before % 10;
}

/** `text` with every decimal digit of any script written as its ASCII digit. */
export function asciiDigits(text: string): string {
  if (!NON_ASCII_DIGIT.test(text)) return text;
  return text.replace(DECIMAL_DIGIT, (digit) => (digit <= '9' ? digit : String(digitValue(digit.codePointAt(0) as number))));
}

/** The digits of a spelling, in ASCII, without any separator, `+` or other character. */
export function digitsOf(spelling: string): string {
  return asciiDigits(spelling).replace(/[^0-9]/g, '');
}

/** A spelling without its separators, digits in ASCII (what the normalizer matches against `+260…`, `0…`). */
export function compactSpelling(value: string): string {
  return asciiDigits(value.replace(SEPARATORS, ''));
}

/** Masks a number's digits, keeping the first three and last two: `+260 97 712 3456` → `260*******56`. */
export function maskDigits(spelling: string): string {
  const digits = digitsOf(spelling);
  if (digits.length < 6) return '*'.repeat(digits.length);
  return `${digits.slice(0, 3)}${'*'.repeat(digits.length - 5)}${digits.slice(-2)}`;
}

/**
 * `text` with every phone number in it masked: each run of {@link MASKED_DIGITS} or more digits in any spelling of
 * the grammar (so every Zambian mobile number the normalizer accepts), outside identifiers, which are never altered.
 */
export function maskNumbersInText(text: string): string {
  let masked = '';
  let gapStart = 0;
  for (const word of text.matchAll(WORD)) {
    const value = word[0];
    if (!IDENTIFIER_CHARACTER.test(value.replaceAll('-', '')) && !UUID.test(value)) continue;
    masked += maskGap(text.slice(gapStart, word.index)) + value;
    gapStart = word.index + value.length;
  }
  return masked + maskGap(text.slice(gapStart));
}

/** Masks the numbers of text that holds no identifier. */
function maskGap(gap: string): string {
  if (!/\p{Nd}/u.test(gap)) return gap;
  return gap.replace(CANDIDATE, (run) => (digitsOf(run).length >= MASKED_DIGITS ? maskDigits(run) : run));
}
