/**
 * The Tap Resolution Partner API's shapes: the zod schemas (exported, so partners can validate stored
 * data) and the types inferred from them. Response objects keep fields the document does not list;
 * enum-like fields accept values beyond the known ones.
 *
 * @module
 */
import * as z from 'zod/mini';
import { type OpenEnum, openEnum, requiredText, uuidText } from '../core/validation.js';

/** A mobile money number registered on a tag. Fields the document does not list are kept. @group Tap */
export interface MobileNumber {
  /** The mobile money provider; `airtel_money` is the one the document names. */
  operator: OpenEnum<'airtel_money'>;
  /** Digits, international form without a plus sign, e.g. `260977123456`. */
  mobileNumber: string;
  /** The number's status on the tag; only an `active` number should be charged. */
  status: OpenEnum<'active'>;
  [field: string]: unknown;
}

/** A customer query: a tapped tag resolved into its holder and their mobile money numbers. Unlisted fields are kept. @group Tap */
export interface CustomerQuery {
  /** The query's identifier (a UUID). */
  id: string;
  /** The partner, derived from the API key. */
  partner: {
    /** The partner's identifier (a UUID). */
    partnerId: string;
    /** The partner organization's name. */
    partnerName: string;
    [field: string]: unknown;
  };
  /** The tag holder. Personal data: the SDK never logs it. */
  customer: {
    /** The holder's first name. */
    firstName: string;
    /** The holder's last name. */
    lastName: string;
    [field: string]: unknown;
  };
  /** The tapped tag and its numbers. */
  tag: {
    /** Echoes the request. */
    tagId: string;
    /** The number printed on the tag. */
    tagNumber: string;
    /** The mobile money numbers on the tag; pick one with {@link mobileNumberFor}. */
    mobileNumbers: MobileNumber[];
    /** The tag's status; a tag must be `active` to be resolved. */
    status: OpenEnum<'active'>;
    [field: string]: unknown;
  };
  /** The transaction, echoing the request, with the service's charge. */
  transaction: {
    /** Echoes the request. */
    merchantId: string;
    /** Echoes the request. */
    merchantName: string;
    /** Echoes the request. */
    terminalId: string;
    /** The query's idempotency key. */
    referenceId: string;
    /** Always `ZMW`. */
    currency: OpenEnum<'ZMW'>;
    /** The transaction amount in ZMW, echoing the request. */
    amount: number;
    /** Set by the service. */
    serviceCharge: number;
    /** `pending` on creation. */
    status: OpenEnum<'pending'>;
    [field: string]: unknown;
  };
  /** ISO 8601 timestamp with milliseconds and `Z`. */
  createdAt: string;
  /** ISO 8601 timestamp with milliseconds and `Z`. */
  updatedAt: string;
  [field: string]: unknown;
}

/** Validates a {@link MobileNumber}; unlisted fields are kept, unknown operators and statuses accepted. @group Schemas */
export const MobileNumberSchema: z.ZodMiniType<MobileNumber> = z.looseObject({
  operator: openEnum(['airtel_money']),
  mobileNumber: z.string(),
  status: openEnum(['active']),
});

/** Validates a {@link CustomerQuery} (e.g. one you stored); unlisted fields are kept. @group Schemas */
export const CustomerQuerySchema: z.ZodMiniType<CustomerQuery> = z.looseObject({
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

/** @internal The body of a successful submission: `{ success: true, data: <customer query> }`. */
export const SubmitCustomerQueryResponseSchema = z.looseObject({ data: CustomerQuerySchema });

/** @internal The body of the list endpoint (shape not documented; see docs/guide/assumptions.md): `{ data: [...] }`. */
export const ListCustomerQueriesResponseSchema = z.looseObject({ data: z.array(CustomerQuerySchema) });

/** Validates a {@link CustomerQueryInput} by the SDK's input rules; unknown fields are dropped. @group Schemas */
export const CustomerQueryInputSchema: z.ZodMiniType<CustomerQueryInput> = z.object({
  merchantId: requiredText(),
  merchantName: requiredText(),
  terminalId: requiredText(),
  amount: z.number().check(z.refine((amount) => amount > 0, 'must be greater than 0')),
  tagId: requiredText(),
  referenceId: z.optional(uuidText()),
});

/** What {@link TapClient.submitCustomerQuery} takes. `referenceId` is generated when absent. @group Tap */
export interface CustomerQueryInput {
  /** Unique across all the partner's queries. */
  merchantId: string;
  /** The merchant's display name. */
  merchantName: string;
  /** Unique across all the partner's queries. */
  terminalId: string;
  /** The transaction amount in ZMW: finite and greater than 0. */
  amount: number;
  /** The tapped tag's identifier. */
  tagId: string;
  /** The query's idempotency key (UUID-shaped), kept for every attempt. @defaultValue a new UUID v4 */
  referenceId?: string | undefined;
}
