/**
 * The Collections amount rule (1 to 10 000 ZMW, whole ngwee) as one pure check, shared by
 * `CollectionInputSchema` and tills that check a sale before the Tap query.
 *
 * @module
 */
import { RequestValidationError } from '../core/errors.js';

/** The smallest amount Collections accepts, in ZMW. */
const MIN_AMOUNT = 1;
/** The largest amount Collections accepts, in ZMW. */
const MAX_AMOUNT = 10_000;
/**
 * How far from a whole ngwee a number may be and still count as that ngwee: binary floating point leaves
 * about 1e-12 of noise on sums of ZMW amounts (`10 + 112 / 100` is `11.120000000000001`), while the smallest
 * real excess (a thousandth of a kwacha) is 1e-3 away. 1e-9 sits far from both.
 */
const FLOAT_NOISE = 1e-9;

/** The outcome of {@link checkCollectionAmount}. @group Collections */
export type CollectionAmountCheck =
  | {
      /** The amount can be collected. */
      readonly ok: true;
      /** The amount as the SDK will send and journal it: rounded to the ngwee (float noise removed). */
      readonly amount: number;
    }
  | {
      /** The amount cannot be collected. */
      readonly ok: false;
      /** Why, naming the value and what to do (e.g. `11.125 has more than two decimals; …`). */
      readonly message: string;
    };

const toNgwee = (amount: number): number => Math.round(amount * 100) / 100;

/**
 * Checks an amount against the Collections rule, without sending anything: a finite number from 1 to
 * 10 000 ZMW with at most two decimals. A number within 1e-9 of a whole ngwee (the noise of ordinary float
 * arithmetic, e.g. `10 + 112 / 100`) counts as that ngwee, and `amount` is the rounded value, which is
 * what `initiate` sends and journals. `initiate` applies this same check.
 *
 * Call it at the till before the Tap query, so a sale Collections would refuse never uses up a tag query:
 *
 * ```ts
 * const check = checkCollectionAmount(total);
 * if (!check.ok) return till.show(`Mobile money cannot take this sale: ${check.message}`);
 * ```
 *
 * @param amount - The amount in ZMW (any value: non-numbers are refused, never thrown on).
 * @group Collections
 */
export function checkCollectionAmount(amount: unknown): CollectionAmountCheck {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    return { ok: false, message: `${describe(amount)} is not a finite number of ZMW` };
  }
  const rounded = toNgwee(amount);
  if (Math.abs(amount - rounded) > FLOAT_NOISE) {
    const ngwee = Math.round(amount * 100);
    return {
      ok: false,
      message: `${amount} has more than two decimals; round it to the ngwee (Math.round(amount * 100) / 100 is ${rounded}), or keep money as integer ngwee and pass amountFromNgwee(${ngwee})`,
    };
  }
  if (rounded < MIN_AMOUNT || rounded > MAX_AMOUNT) {
    return { ok: false, message: `${amount} is outside the Collections limits: from ${MIN_AMOUNT} to ${MAX_AMOUNT} ZMW` };
  }
  return { ok: true, amount: rounded };
}

/**
 * An amount in ZMW from a whole number of ngwee (the minor unit, 100 to the kwacha): `amountFromNgwee(1112)`
 * is `11.12`. For code that keeps money as integers, so float noise never reaches a payment.
 *
 * @throws {@link RequestValidationError} (path `ngwee`) when `ngwee` is not a whole number, or is a whole number too
 * large to be exact in a JavaScript number (beyond ±`Number.MAX_SAFE_INTEGER`, 2^53 − 1: it may already be another
 * amount than the one meant).
 * @group Collections
 */
export function amountFromNgwee(ngwee: number): number {
  if (!Number.isInteger(ngwee)) {
    throw new RequestValidationError([{ path: 'ngwee', message: `${describe(ngwee)} is not a whole number of ngwee` }]);
  }
  if (!Number.isSafeInteger(ngwee)) {
    throw new RequestValidationError([
      {
        path: 'ngwee',
        message: `${ngwee} is too large to be exact in a JavaScript number (beyond ±Number.MAX_SAFE_INTEGER, 2^53 − 1): it may already be another amount`,
      },
    ]);
  }
  // One correctly rounded division: the nearest double to the two-decimal value, printed as written.
  return ngwee / 100;
}

/** A number as written; any other value only by its type (a mistaken string could be a phone number). */
function describe(value: unknown): string {
  return typeof value === 'number' ? String(value) : `a ${value === null ? 'null' : typeof value}`;
}
