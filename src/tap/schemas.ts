/**
 * The Tap Resolution Partner API's shapes: the zod schemas (exported, so partners can validate stored
 * data) and the types inferred from them. Response objects keep fields the document does not list;
 * enum-like fields accept values beyond the known ones.
 *
 * @module
 */
import * as z from 'zod/mini';
import { UUID_PATTERN } from '../core/uuid.js';
import { openEnum, requiredText } from '../core/validation.js';

/** A mobile money number registered on a tag. */
export const MobileNumberSchema = z.looseObject({
  /** The mobile money provider; `airtel_money` is the one the document names. */
  operator: openEnum(['airtel_money']),
  /** Digits, international form without a plus sign, e.g. `260977123456`. */
  mobileNumber: z.string(),
  /** The number's status on the tag; `active` is the one the document names. */
  status: openEnum(['active']),
});
/** A mobile money number registered on a tag. */
export type MobileNumber = z.infer<typeof MobileNumberSchema>;

/** A customer query: a tapped tag resolved into its holder and their mobile money numbers. */
export const CustomerQuerySchema = z.looseObject({
  id: z.string(),
  partner: z.looseObject({ partnerId: z.string(), partnerName: z.string() }),
  customer: z.looseObject({ firstName: z.string(), lastName: z.string() }),
  tag: z.looseObject({
    tagId: z.string(),
    tagNumber: z.string(),
    mobileNumbers: z.array(MobileNumberSchema),
    status: openEnum(['active']),
  }),
  transaction: z.looseObject({
    merchantId: z.string(),
    merchantName: z.string(),
    terminalId: z.string(),
    referenceId: z.string(),
    currency: openEnum(['ZMW']),
    amount: z.number(),
    serviceCharge: z.number(),
    status: openEnum(['pending']),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** A customer query: a tapped tag resolved into its holder and their mobile money numbers. */
export type CustomerQuery = z.infer<typeof CustomerQuerySchema>;

/** The body of a successful submission: `{ success: true, data: <customer query> }`. */
export const SubmitCustomerQueryResponseSchema = z.looseObject({ data: CustomerQuerySchema });

/** The body of the list endpoint (shape not documented; see docs/assumptions.md): `{ data: [...] }`. */
export const ListCustomerQueriesResponseSchema = z.looseObject({ data: z.array(CustomerQuerySchema) });

/** What {@link TapClient.submitCustomerQuery} takes. */
export const CustomerQueryInputSchema = z.object({
  /** Unique across all the partner's queries. */
  merchantId: requiredText(),
  merchantName: requiredText(),
  /** Unique across all the partner's queries. */
  terminalId: requiredText(),
  /** The transaction amount in ZMW: finite and greater than 0. */
  amount: z.number().check(z.refine((amount) => amount > 0, 'must be greater than 0')),
  /** The tapped tag's identifier. */
  tagId: requiredText(),
  /** The query's idempotency key, UUID-shaped; generated (UUID v4) when absent. */
  referenceId: z.optional(z.string().check(z.regex(UUID_PATTERN, 'must be a UUID'))),
});

/** What {@link TapClient.submitCustomerQuery} takes. `referenceId` is generated when absent. */
export interface CustomerQueryInput {
  /** Unique across all the partner's queries. */
  merchantId: string;
  merchantName: string;
  /** Unique across all the partner's queries. */
  terminalId: string;
  /** The transaction amount in ZMW: finite and greater than 0. */
  amount: number;
  /** The tapped tag's identifier. */
  tagId: string;
  /** The query's idempotency key (UUID-shaped). A UUID v4 is generated when absent and kept for every attempt. */
  referenceId?: string;
}
