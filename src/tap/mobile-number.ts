/**
 * Picking the number to charge from a resolved customer query.
 *
 * @module
 */
import type { CustomerQuery } from './schemas.js';

/**
 * The first `active` mobile money number on the query's tag for `operator`, or `undefined` when the tag
 * has none. The number is in international digits (`260…`), ready for `CollectionsClient.initiate`.
 *
 * The two services accept different amounts: Tap any amount above 0, Collections 1 to 10 000 ZMW with at
 * most two decimals. Check in this order, so a sale Collections would refuse never uses up a tag query:
 *
 * 1. the amount, against the Collections limits: `checkCollectionAmount(amount)` (nothing sent);
 * 2. `tap.submitCustomerQuery(…)`: the holder and their numbers;
 * 3. `mobileNumberFor(query)`: `undefined` means another payment method;
 * 4. `collections.initiate({ phoneNumber, amount, … })`, then `pollUntilSettled`.
 *
 * ```ts
 * // The Collections rule, as initiate() checks it: 1–10 000 ZMW, whole ngwee (nothing is sent).
 * const check = checkCollectionAmount(amount);
 * if (!check.ok) return till.show(`Mobile money cannot take this sale: ${check.message}`);
 * const query = await tap.submitCustomerQuery({ merchantId, merchantName, terminalId, amount, tagId });
 * const phoneNumber = mobileNumberFor(query);
 * if (phoneNumber === undefined) return till.show('No mobile money number on this card');
 * const { referenceId } = await collections.initiate({ productId, phoneNumber, amount });
 * ```
 *
 * @param operator - The mobile money provider. @defaultValue `'airtel_money'`
 *
 * @group Tap
 */
export function mobileNumberFor(query: Pick<CustomerQuery, 'tag'>, operator = 'airtel_money'): string | undefined {
  return query.tag.mobileNumbers.find((number) => number.operator === operator && number.status === 'active')?.mobileNumber;
}
