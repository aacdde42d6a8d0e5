/**
 * Both services as the fault suite fakes them: their state and their answers, with no fault and no socket in
 * sight (`fault-server.ts` puts them behind a real server and breaks the wire).
 *
 * State follows the service documents: Tap customer queries are unique per partner by `merchantId`,
 * `terminalId` and `referenceId` (a repeat answers 409 `resource/already-exists-error`); collections are
 * unique by `referenceId` (a repeat answers 409, or the 422 problem body flagging `referenceId`, by
 * option). A new record may stay invisible to reads for a while (`lagMs`), as a read side that lags behind.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CustomerQuery } from '../../src/index.js';
import { validationProblem as documentedValidationProblem } from '../helpers/collections.js';
import { customerQuery } from '../helpers/fixtures.js';

export const TAP_KEY = 'tap_fault_key_1a2b3c4d5e6f';
export const OTHER_PARTNER_TAP_KEY = 'tap_fault_key_other_partner_9z8y';
export const COLLECTIONS_KEY = 'col_fault_key_6f5e4d3c2b1a';

/** The routes of both services, as the request log and the fault queue name them. */
export const ROUTES = ['POST queries', 'GET queries', 'POST mobile-money', 'GET check', 'GET collection', 'GET health', 'unknown'] as const;
export type Route = (typeof ROUTES)[number];

/** A Tap customer query as stored: the response's `data`, and the partner it belongs to. */
export interface StoredQuery {
  readonly partnerId: string;
  readonly query: TapQuery;
}

/** A Tap customer query as the service answers it (the SDK's own type of it). */
export type TapQuery = CustomerQuery;

export interface StoredCollection {
  id: string;
  referenceId: string;
  productId: string;
  phoneNumber: string;
  currency: string;
  amount: number;
  narration?: string;
  status: string;
  createdAt: string;
}

export interface TapQueryInput {
  merchantId: string;
  merchantName: string;
  terminalId: string;
  referenceId: string;
  amount: number;
  tagId: string;
}

/** How the fake services behave where the documents leave room. */
export interface FakeServicesOptions {
  /** How a repeated collection `referenceId` is refused. @defaultValue 409 */
  readonly duplicateCollectionAnswer?: 409 | 422;
  /**
   * How long a new record stays invisible to reads (the Collections status check and details, the Tap
   * list) after it was stored: a read side that lags behind the create. A function is asked per record.
   * @defaultValue 0
   */
  readonly lagMs?: number | (() => number);
  /** Store Tap amounts rounded to the cent, half up (10.005 → 10.01), as a service may. @defaultValue false */
  readonly roundTapAmounts?: boolean;
}

/** A service's answer: status and JSON body. */
export interface Reply {
  readonly status: number;
  readonly json: unknown;
}

const QUERIES_PATH = '/v1/tap/partners/customer-queries';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PARTNERS: Record<string, { partnerId: string; partnerName: string }> = {
  [TAP_KEY]: { partnerId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', partnerName: 'Kabwe Retail Ltd' },
  [OTHER_PARTNER_TAP_KEY]: { partnerId: 'f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f', partnerName: 'Ndola Fuel Co' },
};
const FIXED_TIME = '2026-11-21T10:15:30.123Z';
const TAP_FAULT_CODES: Record<number, string> = { 404: 'resource/not-found-error', 429: 'rate-limit/exceeded' };
const COLLECTIONS_FAULT_CODES: Record<number, string> = { 404: 'E_NOT_FOUND', 429: 'E_TOO_MANY_REQUESTS' };

/** The route a request is for. */
export function routeOf(method: string, path: string): Route {
  if (path === QUERIES_PATH) return method === 'POST' ? 'POST queries' : method === 'GET' ? 'GET queries' : 'unknown';
  if (method === 'POST' && path === '/v1/collections/mobile-money') return 'POST mobile-money';
  if (method === 'GET' && path.startsWith('/v1/collections/check/')) return 'GET check';
  if (method === 'GET' && /^\/v1\/collections\/[^/]+$/.test(path)) return 'GET collection';
  if (method === 'GET' && path === '/health') return 'GET health';
  return 'unknown';
}

function serviceOf(route: Route): 'tap' | 'collections' {
  return route === 'POST queries' || route === 'GET queries' ? 'tap' : 'collections';
}

/** The route's service failing with `status`, in that service's own error envelope (a fault's JSON answer). */
export function serviceFailure(route: Route, status: number): Reply {
  return serviceOf(route) === 'tap'
    ? tapError(status, TAP_FAULT_CODES[status] ?? 'server/internal-error', 'The service failed')
    : collectionsError(status, COLLECTIONS_FAULT_CODES[status] ?? 'E_INTERNAL_ERROR', 'The service failed');
}

const tapError = (status: number, error: string, message: string): Reply => ({
  status,
  json: { success: false, message, code: status, error },
});

const collectionsError = (status: number, code: string, message: string): Reply => ({
  status,
  json: { success: false, code, message, requestId: `req-${status}` },
});

function validationProblem(instance: string, errors: { message: string; rule: string; field: string }[]): Reply {
  return { status: 422, json: documentedValidationProblem(instance, errors) };
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function buildQuery(input: TapQueryInput, partner: { partnerId: string; partnerName: string }): TapQuery {
  return customerQuery(input, { id: randomUUID(), partner: { ...partner }, createdAt: FIXED_TIME, updatedAt: FIXED_TIME });
}

function partnerOf(apiKey: string): { partnerId: string; partnerName: string } {
  const partner = PARTNERS[apiKey];
  if (partner === undefined) throw new Error('unknown partner key');
  return partner;
}

/** The state of both services and how they answer a request that reached them. */
export class FakeServices {
  /** Every customer query held, every partner's. */
  readonly tapQueries: StoredQuery[] = [];
  /** Every collection held, by `referenceId`. */
  readonly collections = new Map<string, StoredCollection>();
  /** How many times a create was stored, per `referenceId` (both services): more than 1 is a double record. */
  readonly stores = new Map<string, number>();
  readonly #rawTapRows: StoredQuery[] = [];
  readonly #visibleAt = new Map<unknown, number>();
  readonly #options: FakeServicesOptions;
  readonly #lagMs: () => number;

  constructor(options: FakeServicesOptions = {}) {
    this.#options = options;
    this.#lagMs = typeof options.lagMs === 'function' ? options.lagMs : () => (options.lagMs as number | undefined) ?? 0;
  }

  /** Processes a request (a create is stored) and gives the service's answer. */
  serve(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Reply {
    if (route === 'unknown') return { status: 404, json: { success: false, message: 'no such route' } };
    return serviceOf(route) === 'tap' ? this.#serveTap(route, headers, body) : this.#serveCollections(route, path, headers, body);
  }

  /** Adds a raw row to a partner's Tap list, as the service might return one it cannot describe well. */
  seedRawTapRow(row: unknown, apiKey = TAP_KEY): void {
    this.#rawTapRows.push({ partnerId: partnerOf(apiKey).partnerId, query: row as TapQuery });
  }

  /** Stores a customer query for a partner, as if submitted earlier. */
  seedTapQuery(input: TapQueryInput, apiKey = TAP_KEY): TapQuery {
    const partner = partnerOf(apiKey);
    const query = buildQuery(input, partner);
    this.tapQueries.push({ partnerId: partner.partnerId, query });
    return query;
  }

  /** Stores a collection, as if initiated earlier. */
  seedCollection(input: Omit<StoredCollection, 'id' | 'status' | 'createdAt' | 'currency'> & { status?: string }): StoredCollection {
    const stored: StoredCollection = { id: randomUUID(), currency: 'ZMW', status: 'pending', createdAt: FIXED_TIME, ...input };
    this.collections.set(stored.referenceId, stored);
    return stored;
  }

  #visible(record: unknown): boolean {
    return (this.#visibleAt.get(record) ?? 0) <= Date.now();
  }

  #storeQuery(input: TapQueryInput, partner: { partnerId: string; partnerName: string }): Reply {
    const taken = this.tapQueries.some(
      ({ partnerId, query: { transaction } }) =>
        partnerId === partner.partnerId &&
        (transaction.merchantId === input.merchantId ||
          transaction.terminalId === input.terminalId ||
          transaction.referenceId === input.referenceId),
    );
    if (taken) {
      return tapError(409, 'resource/already-exists-error', 'merchantId, terminalId or referenceId was used in an earlier query');
    }
    const amount = this.#options.roundTapAmounts ? Math.round((input.amount + 1e-9) * 100) / 100 : input.amount;
    const query = buildQuery({ ...input, amount }, partner);
    this.tapQueries.push({ partnerId: partner.partnerId, query });
    this.#visibleAt.set(query, Date.now() + this.#lagMs());
    this.stores.set(input.referenceId, (this.stores.get(input.referenceId) ?? 0) + 1);
    return { status: 201, json: { success: true, data: query } };
  }

  #serveTap(route: Route, headers: IncomingMessage['headers'], body: unknown): Reply {
    const key = headers['x-api-key'];
    const partner = typeof key === 'string' ? PARTNERS[key] : undefined;
    if (partner === undefined) return tapError(401, 'auth/invalid-api-key', 'The API key is missing or invalid');
    if (route === 'GET queries') {
      const data = [...this.tapQueries, ...this.#rawTapRows]
        .filter((stored) => stored.partnerId === partner.partnerId && this.#visible(stored.query))
        .map((stored) => stored.query);
      return { status: 200, json: { success: true, data } };
    }
    const input = body as Partial<TapQueryInput> | undefined;
    if (
      !input ||
      !isText(input.merchantId) ||
      !isText(input.merchantName) ||
      !isText(input.terminalId) ||
      !isText(input.tagId) ||
      typeof input.referenceId !== 'string' ||
      !UUID.test(input.referenceId) ||
      typeof input.amount !== 'number'
    ) {
      return tapError(400, 'validation/invalid-request', 'The request body is invalid');
    }
    return this.#storeQuery(input as TapQueryInput, partner);
  }

  #serveCollections(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Reply {
    if (route === 'GET health') {
      return headers.authorization === `Bearer ${COLLECTIONS_KEY}`
        ? { status: 200, json: { status: 'ok' } }
        : collectionsError(401, 'E_UNAUTHORIZED', 'Unauthorized');
    }
    if (headers.authorization !== `Bearer ${COLLECTIONS_KEY}`) return collectionsError(401, 'E_UNAUTHORIZED', 'Unauthorized');
    if (route === 'GET check') {
      const referenceId = decodeURIComponent(path.slice('/v1/collections/check/'.length));
      if (!UUID.test(referenceId)) {
        return validationProblem(path, [
          { message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'params.referenceId' },
        ]);
      }
      const found = this.collections.get(referenceId);
      if (found === undefined || !this.#visible(found)) return collectionsError(404, 'E_NOT_FOUND', 'Collection not found');
      return { status: 200, json: { success: true, data: { referenceId, statusText: found.status, transactionCode: null, reason: null } } };
    }
    if (route === 'GET collection') {
      const id = decodeURIComponent(path.slice('/v1/collections/'.length));
      const found = [...this.collections.values()].find((collection) => collection.id === id && this.#visible(collection));
      return found === undefined
        ? collectionsError(404, 'E_NOT_FOUND', 'Collection not found')
        : { status: 200, json: { success: true, data: found } };
    }
    if (route !== 'POST mobile-money') return collectionsError(404, 'E_ROUTE_NOT_FOUND', 'Cannot find route');
    const input = body as Partial<StoredCollection> | undefined;
    if (!input || typeof input.referenceId !== 'string' || !UUID.test(input.referenceId) || typeof input.productId !== 'string') {
      return validationProblem(path, [{ message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'referenceId' }]);
    }
    if (this.collections.has(input.referenceId)) {
      return (this.#options.duplicateCollectionAnswer ?? 409) === 409
        ? collectionsError(409, 'E_DUPLICATE_REFERENCE', 'referenceId already exists')
        : validationProblem(path, [{ message: 'The referenceId has already been taken', rule: 'unique', field: 'referenceId' }]);
    }
    const stored: StoredCollection = {
      id: randomUUID(),
      referenceId: input.referenceId,
      productId: input.productId,
      phoneNumber: String(input.phoneNumber),
      currency: String(input.currency),
      amount: Number(input.amount),
      ...(input.narration === undefined ? {} : { narration: input.narration }),
      status: 'pending',
      createdAt: FIXED_TIME,
    };
    this.collections.set(stored.referenceId, stored);
    this.#visibleAt.set(stored, Date.now() + this.#lagMs());
    this.stores.set(stored.referenceId, (this.stores.get(stored.referenceId) ?? 0) + 1);
    return { status: 202, json: { success: true, data: { referenceId: stored.referenceId, status: stored.status } } };
  }
}
