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
 * @param operator - The mobile money provider. @defaultValue `'airtel_money'`
 */
export function mobileNumberFor(query: Pick<CustomerQuery, 'tag'>, operator = 'airtel_money'): string | undefined {
  return query.tag.mobileNumbers.find((number) => number.operator === operator && number.status === 'active')?.mobileNumber;
}
