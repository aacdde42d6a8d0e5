/**
 * The simulated Tap Resolution Partner API: `POST` and `GET /v1/tap/partners/customer-queries`, written from section 2
 * of the Tap document.
 *
 * @module
 */
import type { SimulatorFixtures, TagFixture } from '../fixtures.js';
import type { Authenticator } from './auth.js';
import { json, tapError } from './envelopes.js';
import { parseJsonBody, type Route, type RouteContext, type SimulatorResponse } from './exchange.js';
import { UUID_PATTERN } from './formats.js';
import type { SimulatedCustomerQuery, StoredCustomerQuery } from './records.js';

/** The provider a customer query resolves: the request has no provider field, so the simulator assumes this one. @group Simulator */
export const REQUESTED_PROVIDER = 'airtel_money';

/** What the Tap service needs from the simulator. */
export interface TapServiceOptions {
  /** Authenticates requests. */
  readonly auth: Authenticator;
  /** The seeded tags. */
  readonly tags: SimulatorFixtures['tags'];
  /** The clock, epoch ms. */
  readonly now: () => number;
  /** Generates query ids. */
  readonly generateId: () => string;
  /** `transaction.serviceCharge` from the amount. */
  readonly serviceCharge: (amount: number) => number;
}

/** The customer queries of every partner and the Tap routes over them. */
export class TapService {
  /** The Tap endpoints. */
  readonly routes: readonly Route[] = [
    { method: 'POST', pattern: '/v1/tap/partners/customer-queries', handle: (c) => this.#submitCustomerQuery(c) },
    { method: 'GET', pattern: '/v1/tap/partners/customer-queries', handle: (c) => this.#listCustomerQueries(c) },
  ];
  readonly #options: TapServiceOptions;
  readonly #tags = new Map<string, TagFixture>();
  #queries: { partnerId: string; query: SimulatedCustomerQuery }[] = [];

  constructor(options: TapServiceOptions) {
    this.#options = options;
    for (const tag of options.tags) this.#tags.set(tag.tagId, tag);
  }

  /** Stored customer queries, oldest first, of one partner or of all (copies). */
  customerQueries(partnerId?: string): StoredCustomerQuery[] {
    return this.#queries
      .filter((stored) => partnerId === undefined || stored.partnerId === partnerId)
      .map((stored) => ({ ...structuredClone(stored.query), partnerId: stored.partnerId }));
  }

  /** Forgets every customer query. */
  reset(): void {
    this.#queries = [];
  }

  #submitCustomerQuery(context: RouteContext): SimulatorResponse {
    const auth = this.#options.auth.authenticate(context, 'customer-queries');
    if (!auth.ok) return auth.response;
    const partner = auth.value;
    const { requestId } = context;
    const parsed = parseJsonBody(context.request.body);
    if (!parsed.ok) return tapError(400, 'request/malformed-json-error', 'The request body is not valid JSON', requestId);
    const input = validateTapInput(parsed.value);
    if (!input.ok) return tapError(400, 'request/validation-error', `Invalid request body: ${input.issues.join('; ')}`, requestId);
    const { merchantId, merchantName, terminalId, referenceId, amount, tagId } = input.value;

    const tag = this.#tags.get(tagId);
    if (tag === undefined) return tapError(404, 'resource/not-found-error', `Tag ${tagId} does not exist`, requestId);
    if (tag.status !== 'active') return tapError(400, 'tag/inactive-error', `Tag ${tagId} is not active`, requestId);
    if (!tag.mobileNumbers.some((number) => number.operator === REQUESTED_PROVIDER)) {
      return tapError(
        404,
        'tag/mobile-number-not-found-error',
        `Tag ${tagId} has no mobile money number registered for ${REQUESTED_PROVIDER}`,
        requestId,
      );
    }

    // Uniqueness is checked last, as a database constraint would be at insert time.
    const own = this.#queries.filter((stored) => stored.partnerId === partner.partnerId).map((stored) => stored.query.transaction);
    const clashes = [
      own.some((t) => t.merchantId === merchantId) && 'merchantId',
      own.some((t) => t.terminalId === terminalId) && 'terminalId',
      own.some((t) => t.referenceId === referenceId) && 'referenceId',
    ].filter((field): field is string => typeof field === 'string');
    if (clashes.length > 0) {
      return tapError(
        409,
        'resource/already-exists-error',
        `A customer query with the same ${clashes.join(', ')} already exists`,
        requestId,
      );
    }

    const timestamp = new Date(this.#options.now()).toISOString();
    const query: SimulatedCustomerQuery = {
      id: this.#options.generateId(),
      partner: { partnerId: partner.partnerId, partnerName: partner.partnerName },
      customer: { firstName: tag.customer.firstName, lastName: tag.customer.lastName },
      tag: {
        tagId: tag.tagId,
        tagNumber: tag.tagNumber,
        mobileNumbers: tag.mobileNumbers.map((number) => ({ ...number })),
        status: tag.status,
      },
      transaction: {
        merchantId,
        merchantName,
        terminalId,
        referenceId,
        currency: 'ZMW',
        amount,
        serviceCharge: this.#options.serviceCharge(amount),
        status: 'pending',
      },
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    this.#queries.push({ partnerId: partner.partnerId, query });
    return json(201, { success: true, data: query }, requestId);
  }

  #listCustomerQueries(context: RouteContext): SimulatorResponse {
    const auth = this.#options.auth.authenticate(context, 'customer-queries');
    if (!auth.ok) return auth.response;
    const data = this.#queries.filter((stored) => stored.partnerId === auth.value.partnerId).map((stored) => stored.query);
    return json(200, { success: true, data }, context.requestId);
  }
}

function validateTapInput(body: unknown):
  | {
      ok: true;
      value: { merchantId: string; merchantName: string; terminalId: string; referenceId: string; amount: number; tagId: string };
    }
  | { ok: false; issues: string[] } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, issues: ['the body must be a JSON object'] };
  const fields = body as Record<string, unknown>;
  const issues: string[] = [];
  for (const name of ['merchantId', 'merchantName', 'terminalId', 'tagId', 'referenceId']) {
    const value = fields[name];
    if (value === undefined || value === null) issues.push(`${name} is required`);
    else if (typeof value !== 'string' || value.trim() === '') issues.push(`${name} must be a non-empty string`);
  }
  if (typeof fields.referenceId === 'string' && fields.referenceId.trim() !== '' && !UUID_PATTERN.test(fields.referenceId)) {
    issues.push('referenceId must be a UUID');
  }
  const amount = fields.amount;
  if (amount === undefined || amount === null) issues.push('amount is required');
  else if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) issues.push('amount must be a number greater than 0');
  if ('partnerId' in fields) issues.push('partnerId cannot be sent; the partner is identified by the API key');
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: {
      merchantId: fields.merchantId as string,
      merchantName: fields.merchantName as string,
      terminalId: fields.terminalId as string,
      referenceId: fields.referenceId as string,
      amount: amount as number,
      tagId: fields.tagId as string,
    },
  };
}
