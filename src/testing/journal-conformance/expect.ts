/** The conformance kit's assertions: each throws an `Error` naming what differs. */

import type { PaymentRecord } from '../../journal/journal.js';
import { ISO_TIME, short } from './kit.js';

/** `value` is a time as `toISOString()` writes it. */
export function expectTime(value: unknown, what: string): void {
  if (typeof value !== 'string' || !ISO_TIME.test(value) || new Date(value).toISOString() !== value) {
    throw new Error(`${what}: expected an ISO 8601 UTC time as toISOString() writes it, got ${JSON.stringify(value)}`);
  }
}

/** `later` is the same time as `earlier` or after it. */
export function expectLater(later: string, earlier: string, what: string): void {
  expectTime(later, what);
  if (Date.parse(later) < Date.parse(earlier)) throw new Error(`${what}: ${later} is earlier than ${earlier}`);
}

/** `time` is within `from` and `to`. */
export function expectBetween(time: string, from: string, to: string, what: string): void {
  expectTime(time, what);
  const [at, low, high] = [Date.parse(time), Date.parse(from), Date.parse(to)];
  if (at < low || at > high) {
    throw new Error(`${what}: ${time} is not between the journal's now() before (${from}) and after (${to}): stamped by another clock?`);
  }
}

/** `records` are oldest first (createdAt, then referenceId). */
export function expectSorted(records: readonly PaymentRecord[], what: string): void {
  for (let index = 1; index < records.length; index++) {
    const [a, b] = [records[index - 1] as PaymentRecord, records[index] as PaymentRecord];
    if (a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.referenceId > b.referenceId)) {
      throw new Error(`${what} is not oldest first at position ${index}`);
    }
  }
}

/** Compares a stored record with the expected one, field by field; an absent field equals `undefined`, never `null`. */
export function expectRecord(actual: PaymentRecord | undefined, expected: PaymentRecord, what: string): void {
  expectEqual(actual === undefined ? undefined : normalize(actual), normalize(expected), what);
}

/** `value` with absent fields dropped and keys sorted, for comparison. */
export function normalize(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(normalize);
  const entries = Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries.map(([key, field]) => [key, normalize(field)]));
}

/** `actual` equals `expected` once normalized. */
export function expectEqual(actual: unknown, expected: unknown, what: string): void {
  const [a, e] = [JSON.stringify(normalize(actual)), JSON.stringify(normalize(expected))];
  if (a !== e) throw new Error(`${what}: expected ${short(e)}, got ${short(a)}`);
}
