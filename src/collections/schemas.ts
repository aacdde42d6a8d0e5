/**
 * The Collections Gateway API's shapes: zod schemas (exported, so partners can validate stored data)
 * and the types inferred from them. Response objects keep fields the document does not list.
 *
 * @module
 */
import * as z from 'zod/mini';
import { exactText, type OpenEnum, openEnum, uuidText } from '../core/validation.js';
import { checkCollectionAmount } from './amount.js';
import { isZambianMobileNumber, ZAMBIAN_MOBILE_NUMBER_MESSAGE } from './phone-number.js';

/** The collection statuses the document names: `pending`, then `successful` or `failed`. @group Collections */
export type KnownCollectionStatus = 'pending' | 'successful' | 'failed';

/** Validates a {@link CollectionInput} by the SDK's input rules (before anything is sent); unknown fields are dropped. @group Schemas */
export const CollectionInputSchema: z.ZodMiniType<CollectionInput> = z.object({
  productId: uuidText(),
  phoneNumber: z.string().check(z.refine(isZambianMobileNumber, ZAMBIAN_MOBILE_NUMBER_MESSAGE)),
  amount: z.number().check(
    z.check((context) => {
      const check = checkCollectionAmount(context.value);
      if (!check.ok) context.issues.push({ code: 'custom', message: check.message, input: context.value });
    }),
    // Float noise within 1e-9 of a whole ngwee is that ngwee: what is sent and journaled is the rounded value.
    z.overwrite((amount) => {
      const check = checkCollectionAmount(amount);
      return check.ok ? check.amount : amount;
    }),
  ),
  narration: z.optional(
    z.string().check(
      z.refine((text) => text.trim() !== '', 'must not be empty'),
      z.refine((text) => text.length <= 100, 'must be at most 100 characters'),
    ),
  ),
  referenceId: z.optional(uuidText()),
  currency: z.optional(exactText('ZMW')),
});

/** What {@link CollectionsClient.initiate} takes. @group Collections */
export interface CollectionInput {
  /** The product receiving the funds (UUID). */
  productId: string;
  /** The customer's Zambian mobile number, in any usual form (`+260 97 712 3456`, `0977123456`, …). */
  phoneNumber: string;
  /**
   * From 1 to 10 000 ZMW, at most two decimals (a value within 1e-9 of a whole ngwee is rounded to it). Check it
   * before the Tap query with {@link checkCollectionAmount}; build it from integer ngwee with {@link amountFromNgwee}.
   */
  amount: number;
  /** Text shown with the payment, at most 100 characters. @defaultValue none (not sent) */
  narration?: string | undefined;
  /** The collection's idempotency key (UUID), kept for every attempt. @defaultValue a new UUID v4 */
  referenceId?: string | undefined;
  /** The only currency: `'ZMW'`. @defaultValue `'ZMW'` */
  currency?: 'ZMW' | undefined;
}

/** @internal The 202 answer to a creation: `{ success: true, data: { referenceId, status } }`. */
export const InitiateCollectionResponseSchema = z.looseObject({
  data: z.looseObject({ referenceId: z.string(), status: openEnum(['pending']) }),
});

/**
 * A collection accepted for processing: every field of the 202's `data`, including those the document does
 * not list. (When the SDK had to read the collection back by its reference, only these two are known.)
 * @group Collections
 */
export interface InitiatedCollection {
  /** The reference to check the collection by; keep it. */
  referenceId: string;
  /** `pending` on creation. */
  status: string;
  /**
   * The service's own identifier of the collection, for {@link CollectionsClient.getById}, when the 202 carries one
   * (a number is given as its decimal text). The Collections document lists only `referenceId` and `status` in the
   * 202, so expect it to be absent: then the id comes from outside the API (the gateway's reports or support), and
   * `checkStatus(referenceId)` is how a payment is followed.
   * @defaultValue absent
   */
  id?: string;
  [field: string]: unknown;
}

/** A collection's status, as `checkStatus` returns it. Fields the document does not list are kept. @group Collections */
export interface CollectionStatus {
  /** The collection's reference. */
  referenceId: string;
  /**
   * `pending`, then `successful` or `failed` (the service's own word; what it means is the client option
   * `statusWords`). Read from `status` when the answer has no `statusText`.
   */
  statusText: OpenEnum<KnownCollectionStatus>;
  /** The outcome code, e.g. `INTERNAL_SYSTEM_ERROR`; absent or null while pending. */
  transactionCode?: string | null;
  /** Explanatory text; absent or null while pending. */
  reason?: string | null;
  [field: string]: unknown;
}

/** Validates a {@link CollectionStatus} (e.g. one you stored); unlisted fields are kept, unknown statuses accepted. @group Schemas */
export const CollectionStatusSchema: z.ZodMiniType<CollectionStatus> = z.looseObject({
  referenceId: z.string(),
  statusText: openEnum(['pending', 'successful', 'failed']),
  transactionCode: z.optional(z.nullable(z.string())),
  reason: z.optional(z.nullable(z.string())),
});

/**
 * A status answer that names its word `status` rather than `statusText` is read from `status` (kept too), so
 * callers see one field; `statusText` wins when both are there. See docs/internals/assumptions-rationale.md.
 */
const statusTextFromStatus = z.transform((data: unknown) => {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return data;
  const fields = data as Record<string, unknown>;
  return fields.statusText == null && typeof fields.status === 'string' ? { ...fields, statusText: fields.status } : data;
});

/** @internal The status check's body: `{ success: true, data: <status> }`. */
export const CheckStatusResponseSchema = z.looseObject({ data: z.pipe(statusTextFromStatus, CollectionStatusSchema) });

/** A collection's details record. Its fields are not documented, so its shape is open. @group Collections */
export type CollectionDetails = Record<string, unknown>;

/** Validates a {@link CollectionDetails} record: any JSON object. @group Schemas */
export const CollectionDetailsSchema: z.ZodMiniType<CollectionDetails> = z.looseObject({});

/** @internal The details body: `{ success: true, data: <record> }`. */
export const GetCollectionResponseSchema = z.looseObject({ data: CollectionDetailsSchema });

/** The body of `GET /health`, undocumented: the parsed JSON, or the text when it is not JSON. @group Collections */
export type HealthStatus = unknown;
