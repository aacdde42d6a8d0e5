/**
 * Both services as the fault suite serves them: their state and their answers, with no fault and no socket in
 * sight (`fault-server.ts` puts them behind a real server and breaks the wire).
 *
 * The Collections service is the simulator (its keys, creates, status checks, details, `/health`, envelopes), seeded
 * with the suite's key and product, where nothing settles by itself; this module adds only what the suite varies: a
 * repeated `referenceId` answered by the 422 problem body instead of the simulator's 409 (by option), and a read side
 * that lags behind the create (`lagMs`: the simulator's own 404 until then). Tap customer queries are unique per
 * partner by `merchantId`, `terminalId` and `referenceId` (a repeat answers 409 `resource/already-exists-error`).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CustomerQuery } from '../../src/index.js';
import { defaultFixtures, PARTNERS as SIMULATED_PARTNERS, type SimulatedCollection, Simulator } from '../../src/testing/index.js';
import { collectionsError as simulatorError } from '../../src/testing/simulator/envelopes.js';
import { faultResponse } from '../../src/testing/simulator/faults.js';
import { validationProblem as documentedValidationProblem } from '../helpers/collections.js';
import { customerQuery } from '../helpers/fixtures.js';

export const TAP_KEY = 'tap_fault_key_1a2b3c4d5e6f';
export const OTHER_PARTNER_TAP_KEY = 'tap_fault_key_other_partner_9z8y';
export const COLLECTIONS_KEY = 'col_fault_key_6f5e4d3c2b1a';
/** The product the suite's collections credit, owned by the partner of {@link COLLECTIONS_KEY}. */
export const COLLECTIONS_PRODUCT_ID = '5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170';

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

/** A collection as the service holds it (and answers it on `GET /v1/collections/:id`). */
export type StoredCollection = SimulatedCollection;

/** A collection to seed: as if initiated earlier, and settled with `status` when given. */
export interface SeededCollectionInput {
  referenceId: string;
  productId: string;
  phoneNumber: string;
  amount: number;
  narration?: string;
  status?: 'pending' | 'successful' | 'failed';
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
const COLLECTIONS_PATH = '/v1/collections/mobile-money';

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

/** The route's service failing with `status`, in that service's own error envelope (a fault's JSON answer, the simulator's). */
export function serviceFailure(route: Route, status: number, path: string): Reply {
  const answer = faultResponse(serviceOf(route), { route: '*', status }, randomUUID(), path);
  return { status, json: JSON.parse(answer.body) };
}

const tapError = (status: number, error: string, message: string): Reply => ({
  status,
  json: { success: false, message, code: status, error },
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
  /** How many times a create was stored, per `referenceId` (both services): more than 1 is a double record. */
  readonly stores = new Map<string, number>();
  readonly #rawTapRows: StoredQuery[] = [];
  readonly #visibleAt = new Map<unknown, number>();
  readonly #options: FakeServicesOptions;
  readonly #lagMs: () => number;
  readonly #collections: Simulator;
  /** When each collection (by `referenceId`) becomes visible to reads. */
  readonly #collectionVisibleAt = new Map<string, number>();

  constructor(options: FakeServicesOptions = {}) {
    this.#options = options;
    this.#lagMs = typeof options.lagMs === 'function' ? options.lagMs : () => (options.lagMs as number | undefined) ?? 0;
    const fixtures = defaultFixtures();
    const { partnerId } = SIMULATED_PARTNERS.primary;
    this.#collections = new Simulator({
      fixtures: {
        ...fixtures,
        apiKeys: [
          ...fixtures.apiKeys,
          { key: COLLECTIONS_KEY, service: 'collections', partnerId, state: 'active', permissions: ['collections'] },
        ],
        products: [...fixtures.products, { productId: COLLECTIONS_PRODUCT_ID, partnerId, name: 'Fault suite' }],
      },
      // Nothing settles by itself: a status check answers what was stored, as the suite's expectations read it.
      settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY },
    });
  }

  /** Every collection held, by `referenceId` (read anew at each access). */
  get collections(): ReadonlyMap<string, StoredCollection> {
    return new Map(this.#collections.collections().map(({ partnerId: _p, statusChecks: _s, ...record }) => [record.referenceId, record]));
  }

  /** Processes a request (a create is stored) and gives the service's answer. */
  async serve(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Promise<Reply> {
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

  /**
   * Stores a collection, as if initiated earlier (through the simulator, whose create commits synchronously), settled
   * with `input.status` when given.
   */
  seedCollection({ status, ...input }: SeededCollectionInput): StoredCollection {
    const body = JSON.stringify({ currency: 'ZMW', ...input });
    void this.#collections.handle({
      service: 'collections',
      method: 'POST',
      path: COLLECTIONS_PATH,
      headers: { authorization: `Bearer ${COLLECTIONS_KEY}`, 'content-type': 'application/json' },
      body,
    });
    if (status !== undefined && status !== 'pending') this.#collections.settle(input.referenceId, status);
    const stored = this.collections.get(input.referenceId);
    if (stored === undefined) throw new Error(`the simulator refused the seeded collection ${input.referenceId}`);
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

  async #serveCollections(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Promise<Reply> {
    const hidden = this.#hiddenByLag(route, path);
    if (hidden !== undefined) return hidden;
    const outcome = await this.#collections.handle({
      service: 'collections',
      method: route === 'POST mobile-money' ? 'POST' : 'GET',
      path,
      headers: flatten(headers),
      body: body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body),
    });
    if (outcome.kind !== 'respond') throw new Error('the simulator dropped a request the fault suite did not break');
    const { status, body: text } = outcome.response;
    const reply: Reply = { status, json: text === '' ? undefined : JSON.parse(text) };
    if (route !== 'POST mobile-money') return reply;
    const referenceId = (body as { referenceId?: unknown } | undefined)?.referenceId;
    if (status === 409 && (this.#options.duplicateCollectionAnswer ?? 409) === 422) {
      return validationProblem(path, [{ message: 'The referenceId has already been taken', rule: 'unique', field: 'referenceId' }]);
    }
    if (status === 202 && typeof referenceId === 'string') {
      this.#collectionVisibleAt.set(referenceId, Date.now() + this.#lagMs());
      this.stores.set(referenceId, (this.stores.get(referenceId) ?? 0) + 1);
    }
    return reply;
  }

  /** The simulator's own 404 for a read of a collection created less than its lag ago; `undefined` when visible. */
  #hiddenByLag(route: Route, path: string): Reply | undefined {
    if (route !== 'GET check' && route !== 'GET collection') return undefined;
    const key = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1));
    const referenceId = route === 'GET check' ? key : [...this.collections.values()].find((stored) => stored.id === key)?.referenceId;
    if (referenceId === undefined || (this.#collectionVisibleAt.get(referenceId) ?? 0) <= Date.now()) return undefined;
    const what = route === 'GET check' ? `referenceId ${key}` : `id ${key}`;
    const answer = simulatorError(404, 'E_NOT_FOUND', `No collection with ${what}`, randomUUID());
    return { status: 404, json: JSON.parse(answer.body) };
  }
}

function flatten(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}
