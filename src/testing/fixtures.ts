/**
 * The simulator's seeded data: partners, API keys, tags, products and the phone numbers whose collections
 * settle in a known way. Every value is exported so tests can name the case they exercise instead of
 * repeating literals.
 *
 * | Fixture | Value | What the simulator does with it |
 * |---|---|---|
 * | `PARTNERS.primary` | `Kabwe Retail Ltd` (`a1b2c3d4-…`) | owner of the `primary` keys and of `PRODUCTS.primary` |
 * | `PARTNERS.second` | `Ndola Fuel Stations Ltd` (`b2c3d4e5-…`) | a second partner, for scoping tests |
 * | `TAP_API_KEYS.primary` | `tap_sim_primary_9c1f4b7e2a` | valid Tap key of the primary partner |
 * | `TAP_API_KEYS.second` | `tap_sim_second_3e8d5a1c6f` | valid Tap key of the second partner |
 * | `TAP_API_KEYS.revoked` | `tap_sim_revoked_7b2e9f4a1d` | revoked → 401 |
 * | `TAP_API_KEYS.expired` | `tap_sim_expired_5d3c8b2e9a` | expired → 401 |
 * | `TAP_API_KEYS.noQueryPermission` | `tap_sim_noperm_2f6a9d4c8b` | valid but not authorized for customer queries → 403 |
 * | `COLLECTIONS_API_KEYS.primary` | `col_sim_primary_8e4b1f7c3a` | valid Collections key of the primary partner |
 * | `COLLECTIONS_API_KEYS.second` | `col_sim_second_6c2d9a5e1f` | valid Collections key of the second partner |
 * | `COLLECTIONS_API_KEYS.revoked` | `col_sim_revoked_4a7e2c9b5d` | revoked → 401 |
 * | `COLLECTIONS_API_KEYS.noPermission` | `col_sim_noperm_9b5f3e1a7c` | valid but without the collections permission → 403 (`/health` still 200) |
 * | `TAGS.active` | `TAG-0001` | active, one active `airtel_money` number `260977123456` → 201 |
 * | `TAGS.multipleNumbers` | `TAG-0006` | active; an `mtn_money` number, an inactive and an active `airtel_money` number → 201 |
 * | `TAGS.inactiveNumber` | `TAG-0004` | active; its only `airtel_money` number is `inactive` → 201, the number listed with its status |
 * | `TAGS.inactive` | `TAG-0002` | tag status `inactive` → 400 `tag/inactive-error` |
 * | `TAGS.noNumbers` | `TAG-0003` | active, no numbers at all → 404 `tag/mobile-number-not-found-error` |
 * | `TAGS.otherOperatorOnly` | `TAG-0005` | active, only an `mtn_money` number → 404 `tag/mobile-number-not-found-error` |
 * | `TAGS.unknown` | `TAG-9999` | not seeded → 404 `resource/not-found-error` |
 * | `PRODUCTS.primary` | `6f1e2d3c-…` | product of the primary partner |
 * | `PRODUCTS.second` | `7a8b9c0d-…` | product of the second partner (another partner using it → 422 `exists`) |
 * | `PRODUCTS.unknown` | `0e0e0e0e-…` | a UUID no partner owns → 422 `exists` |
 * | `PHONES.succeeds` | `260977123456` | settles `successful` / `SUCCESS` (any unlisted number does too) |
 * | `PHONES.insufficientFunds` | `260977000001` | settles `failed` / `INSUFFICIENT_FUNDS` |
 * | `PHONES.systemError` | `260977000002` | settles `failed` / `INTERNAL_SYSTEM_ERROR` |
 * | `PHONES.declined` | `260977000003` | settles `failed` / `TRANSACTION_DECLINED` |
 * | `PHONES.neverSettles` | `260977000009` | stays `pending` until `simulator.settle()` |
 *
 * Phone numbers match in any accepted form (`260…`, `+260…`, `0…`).
 *
 * @module
 */

/** A permission an API key can carry. `customer-queries` is the Tap one, `collections` the Collections one. @group Fixtures */
export type Permission = 'customer-queries' | 'collections';

/** The service an API key belongs to; a key works only on its own service (another service answers 401). @group Fixtures */
export type SimulatedService = 'tap' | 'collections';

/** A partner organization. @group Fixtures */
export interface PartnerFixture {
  /** UUID, returned as `partner.partnerId` of each customer query. */
  readonly partnerId: string;
  /** Returned as `partner.partnerName`. */
  readonly partnerName: string;
}

/** An API key issued to a partner. @group Fixtures */
export interface ApiKeyFixture {
  /** The secret sent as `x-api-key` (Tap) or `Authorization: Bearer` (Collections). */
  readonly key: string;
  /** The service that accepts it. */
  readonly service: SimulatedService;
  /** The partner the key identifies. */
  readonly partnerId: string;
  /** `revoked` and `expired` keys answer 401, like unknown ones. */
  readonly state: 'active' | 'revoked' | 'expired';
  /** A key without the permission its service requires answers 403. */
  readonly permissions: readonly Permission[];
}

/** A mobile money number registered on a tag, exactly as a customer query returns it. @group Fixtures */
export interface MobileNumberFixture {
  /** The provider, e.g. `airtel_money`. */
  readonly operator: string;
  /** International digits without a plus sign, e.g. `260977123456`. */
  readonly mobileNumber: string;
  /** `active` or `inactive`. */
  readonly status: string;
}

/** A tag (card or wristband) and its holder. Tags are shared by all partners: any partner may resolve any tag. @group Fixtures */
export interface TagFixture {
  /** The identifier a partner sends as `tagId`. */
  readonly tagId: string;
  /** The printed number, returned as `tag.tagNumber`. */
  readonly tagNumber: string;
  /** `active` resolves; anything else answers 400 `tag/inactive-error`. */
  readonly status: string;
  /** The holder, returned as `customer`. */
  readonly customer: {
    /** Returned as `customer.firstName`. */
    readonly firstName: string;
    /** Returned as `customer.lastName`. */
    readonly lastName: string;
  };
  /** Every number on the tag, returned in full as `tag.mobileNumbers`. */
  readonly mobileNumbers: readonly MobileNumberFixture[];
}

/** A product that receives collected funds. A product is usable only by the partner that owns it. @group Fixtures */
export interface ProductFixture {
  /** UUID sent as `productId`. */
  readonly productId: string;
  /** The owning partner. */
  readonly partnerId: string;
  /** For people reading the fixtures; never on the wire. */
  readonly name: string;
}

/** How a collection ends: its final `statusText`, `transactionCode` and `reason`. @group Fixtures */
export interface SettlementOutcome {
  /** `successful` or `failed`. */
  readonly status: 'successful' | 'failed';
  /** E.g. `SUCCESS`, `INSUFFICIENT_FUNDS`, `INTERNAL_SYSTEM_ERROR`. */
  readonly transactionCode: string;
  /** Explanatory text. */
  readonly reason: string;
}

/** A phone number's planned ending: an outcome, or `'never'` to stay `pending` until settled by hand. @group Fixtures */
export type PlannedOutcome = SettlementOutcome | 'never';

/** Everything the simulator is seeded with. @group Fixtures */
export interface SimulatorFixtures {
  /** Partner organizations. */
  readonly partners: readonly PartnerFixture[];
  /** API keys of both services. */
  readonly apiKeys: readonly ApiKeyFixture[];
  /** Tags any partner can resolve. */
  readonly tags: readonly TagFixture[];
  /** Products collections can credit. */
  readonly products: readonly ProductFixture[];
  /** Outcome by phone number (international digits `260XXXXXXXXX`); unlisted numbers use the default outcome. */
  readonly phoneOutcomes: Readonly<Record<string, PlannedOutcome>>;
}

/** The seeded partners. @group Fixtures */
export const PARTNERS: {
  /** `Kabwe Retail Ltd`: owns the `primary` keys and `PRODUCTS.primary`. */
  readonly primary: PartnerFixture;
  /** `Ndola Fuel Stations Ltd`: owns the `second` keys and `PRODUCTS.second`. */
  readonly second: PartnerFixture;
} = {
  primary: { partnerId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', partnerName: 'Kabwe Retail Ltd' },
  second: { partnerId: 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e', partnerName: 'Ndola Fuel Stations Ltd' },
};

/** The seeded Tap keys (header `x-api-key`); see the table at the top of this module. @group Fixtures */
export const TAP_API_KEYS = {
  /** Valid, of `PARTNERS.primary`. */
  primary: 'tap_sim_primary_9c1f4b7e2a',
  /** Valid, of `PARTNERS.second`. */
  second: 'tap_sim_second_3e8d5a1c6f',
  /** Revoked → 401. */
  revoked: 'tap_sim_revoked_7b2e9f4a1d',
  /** Expired → 401. */
  expired: 'tap_sim_expired_5d3c8b2e9a',
  /** Valid but not authorized for customer queries → 403. */
  noQueryPermission: 'tap_sim_noperm_2f6a9d4c8b',
} as const;

/** The seeded Collections keys (header `Authorization: Bearer`); see the table at the top of this module. @group Fixtures */
export const COLLECTIONS_API_KEYS = {
  /** Valid, of `PARTNERS.primary`. */
  primary: 'col_sim_primary_8e4b1f7c3a',
  /** Valid, of `PARTNERS.second`. */
  second: 'col_sim_second_6c2d9a5e1f',
  /** Revoked → 401. */
  revoked: 'col_sim_revoked_4a7e2c9b5d',
  /** Valid but without the collections permission → 403 (`/health` still answers 200). */
  noPermission: 'col_sim_noperm_9b5f3e1a7c',
} as const;

/** The seeded tag identifiers, by the case each exercises. `unknown` is deliberately not seeded. @group Fixtures */
export const TAGS = {
  /** Active, one active `airtel_money` number → 201. */
  active: 'TAG-0001',
  /** Not active → 400. */
  inactive: 'TAG-0002',
  /** Active, no numbers → 404. */
  noNumbers: 'TAG-0003',
  /** Active, its only `airtel_money` number inactive → 201 (the number listed as `inactive`). */
  inactiveNumber: 'TAG-0004',
  /** Active, only an `mtn_money` number → 404. */
  otherOperatorOnly: 'TAG-0005',
  /** Active; `mtn_money`, inactive and active `airtel_money` numbers → 201. */
  multipleNumbers: 'TAG-0006',
  /** Not seeded → 404. */
  unknown: 'TAG-9999',
} as const;

/** The seeded product ids. `unknown` is a UUID no partner owns. @group Fixtures */
export const PRODUCTS = {
  /** Product of `PARTNERS.primary`. */
  primary: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b',
  /** Product of `PARTNERS.second`. */
  second: '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d',
  /** Owned by nobody → 422 `exists`. */
  unknown: '0e0e0e0e-0e0e-4e0e-8e0e-0e0e0e0e0e0e',
} as const;

/** Phone numbers with a known ending (international form; `0…` and `+260…` forms match too). @group Fixtures */
export const PHONES = {
  /** Settles `successful` / `SUCCESS`; also the `airtel_money` number of `TAGS.active`. */
  succeeds: '260977123456',
  /** Settles `failed` / `INSUFFICIENT_FUNDS`. */
  insufficientFunds: '260977000001',
  /** Settles `failed` / `INTERNAL_SYSTEM_ERROR`. */
  systemError: '260977000002',
  /** Settles `failed` / `TRANSACTION_DECLINED`. */
  declined: '260977000003',
  /** Stays `pending` until `simulator.settle()`. */
  neverSettles: '260977000009',
} as const;

/** The outcomes the simulator uses. `successful` is the default for numbers without a planned outcome. @group Fixtures */
export const OUTCOMES: {
  /** `successful` / `SUCCESS`. */
  readonly successful: SettlementOutcome;
  /** `failed` / `INSUFFICIENT_FUNDS`. */
  readonly insufficientFunds: SettlementOutcome;
  /** `failed` / `INTERNAL_SYSTEM_ERROR` (the value the Collections document names). */
  readonly systemError: SettlementOutcome;
  /** `failed` / `TRANSACTION_DECLINED`. */
  readonly declined: SettlementOutcome;
} = {
  successful: { status: 'successful', transactionCode: 'SUCCESS', reason: 'Transaction completed successfully' },
  insufficientFunds: { status: 'failed', transactionCode: 'INSUFFICIENT_FUNDS', reason: 'Insufficient funds in the customer wallet' },
  systemError: { status: 'failed', transactionCode: 'INTERNAL_SYSTEM_ERROR', reason: 'The mobile money provider reported a system error' },
  declined: { status: 'failed', transactionCode: 'TRANSACTION_DECLINED', reason: 'The customer declined the payment request' },
};

const TAG_FIXTURES: readonly TagFixture[] = [
  {
    tagId: TAGS.active,
    tagNumber: '0001-2345',
    status: 'active',
    customer: { firstName: 'Mwila', lastName: 'Banda' },
    mobileNumbers: [{ operator: 'airtel_money', mobileNumber: PHONES.succeeds, status: 'active' }],
  },
  {
    tagId: TAGS.inactive,
    tagNumber: '0002-3456',
    status: 'inactive',
    customer: { firstName: 'Chanda', lastName: 'Mulenga' },
    mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260971234567', status: 'active' }],
  },
  {
    tagId: TAGS.noNumbers,
    tagNumber: '0003-4567',
    status: 'active',
    customer: { firstName: 'Bwalya', lastName: 'Phiri' },
    mobileNumbers: [],
  },
  {
    tagId: TAGS.inactiveNumber,
    tagNumber: '0004-5678',
    status: 'active',
    customer: { firstName: 'Natasha', lastName: 'Zulu' },
    mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260976543210', status: 'inactive' }],
  },
  {
    tagId: TAGS.otherOperatorOnly,
    tagNumber: '0005-6789',
    status: 'active',
    customer: { firstName: 'Musonda', lastName: 'Tembo' },
    mobileNumbers: [{ operator: 'mtn_money', mobileNumber: '260961234567', status: 'active' }],
  },
  {
    tagId: TAGS.multipleNumbers,
    tagNumber: '0006-7890',
    status: 'active',
    customer: { firstName: 'Kondwani', lastName: 'Lungu' },
    mobileNumbers: [
      { operator: 'mtn_money', mobileNumber: '260962345678', status: 'active' },
      { operator: 'airtel_money', mobileNumber: '260972345678', status: 'inactive' },
      { operator: 'airtel_money', mobileNumber: '260973456789', status: 'active' },
    ],
  },
];

/**
 * A fresh copy of the default fixtures (the table at the top of this module). Pass a modified copy as
 * `createSimulator({ fixtures })` to add tags, keys or products of your own.
 *
 * @group Fixtures
 */
export function defaultFixtures(): SimulatorFixtures {
  const { primary, second } = PARTNERS;
  return structuredClone({
    partners: [primary, second],
    apiKeys: [
      { key: TAP_API_KEYS.primary, service: 'tap', partnerId: primary.partnerId, state: 'active', permissions: ['customer-queries'] },
      { key: TAP_API_KEYS.second, service: 'tap', partnerId: second.partnerId, state: 'active', permissions: ['customer-queries'] },
      { key: TAP_API_KEYS.revoked, service: 'tap', partnerId: primary.partnerId, state: 'revoked', permissions: ['customer-queries'] },
      { key: TAP_API_KEYS.expired, service: 'tap', partnerId: primary.partnerId, state: 'expired', permissions: ['customer-queries'] },
      { key: TAP_API_KEYS.noQueryPermission, service: 'tap', partnerId: primary.partnerId, state: 'active', permissions: [] },
      {
        key: COLLECTIONS_API_KEYS.primary,
        service: 'collections',
        partnerId: primary.partnerId,
        state: 'active',
        permissions: ['collections'],
      },
      {
        key: COLLECTIONS_API_KEYS.second,
        service: 'collections',
        partnerId: second.partnerId,
        state: 'active',
        permissions: ['collections'],
      },
      {
        key: COLLECTIONS_API_KEYS.revoked,
        service: 'collections',
        partnerId: primary.partnerId,
        state: 'revoked',
        permissions: ['collections'],
      },
      { key: COLLECTIONS_API_KEYS.noPermission, service: 'collections', partnerId: primary.partnerId, state: 'active', permissions: [] },
    ],
    tags: TAG_FIXTURES,
    products: [
      { productId: PRODUCTS.primary, partnerId: primary.partnerId, name: 'Kabwe Retail wallet' },
      { productId: PRODUCTS.second, partnerId: second.partnerId, name: 'Ndola Fuel wallet' },
    ],
    phoneOutcomes: {
      [PHONES.insufficientFunds]: OUTCOMES.insufficientFunds,
      [PHONES.systemError]: OUTCOMES.systemError,
      [PHONES.declined]: OUTCOMES.declined,
      [PHONES.neverSettles]: 'never',
    },
  } satisfies SimulatorFixtures);
}
