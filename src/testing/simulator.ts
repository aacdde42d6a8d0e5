/**
 * The simulator: one in-memory state of both services, and the one entry both faces (msw handlers and the loopback
 * server) call. A face only translates its transport into a {@link SimulatorRequest} and a {@link SimulatorOutcome}
 * back, so the two behave identically by construction. Nothing here touches a socket or msw.
 *
 * This module routes and records; each concern has its own module under `simulator/`:
 *
 * | Module | Concern |
 * |---|---|
 * | `simulator/tap.ts` | the Tap service (customer queries) |
 * | `simulator/collections.ts` | the Collections service (collections, status checks, `/health`) |
 * | `simulator/settlement.ts` | when and how a pending collection settles; the manual clock |
 * | `simulator/faults.ts` | injected latency, error statuses and dropped connections |
 * | `simulator/envelopes.ts` | the two services' error envelopes and the Collections 422 body |
 * | `simulator/auth.ts` | API keys: 401 and 403 |
 * | `simulator/recording.ts` | the record of received requests, API keys redacted |
 * | `simulator/paths.ts` | path patterns of routes and fault routes |
 * | `simulator/records.ts`, `formats.ts`, `exchange.ts` | record shapes, value formats, what faces hand over |
 *
 * **An independent implementation.** Everything here is written from the service documents alone and imports nothing
 * from the SDK (`src/core`, `src/tap`, `src/collections`): no schema, no validation, no phone-number rule. A fake that
 * shares the code under test agrees with its bugs, so the tests could not see them; two implementations of one document
 * disagree where one of them is wrong.
 *
 * @module
 */
import { defaultFixtures, type PlannedOutcome, type SettlementOutcome, type SimulatorFixtures } from './fixtures.js';
import { Authenticator } from './simulator/auth.js';
import { CollectionsService, checkVocabulary, type StatusVocabulary } from './simulator/collections.js';
import { serviceError } from './simulator/envelopes.js';
import { MAX_REQUEST_BODY_BYTES, type SimulatorOutcome, type SimulatorRequest, type SimulatorResponse } from './simulator/exchange.js';
import { FaultInjector, type FaultSpec, faultResponse, type InjectedFault, sleep } from './simulator/faults.js';
import { matchPath, splitPath } from './simulator/paths.js';
import { type ReceivedRequest, RequestLog } from './simulator/recording.js';
import type { StoredCollection, StoredCustomerQuery } from './simulator/records.js';
import { Settlement, type SettlementOptions } from './simulator/settlement.js';
import { TapService } from './simulator/tap.js';

// The simulator's public types live with their concern; the testing entry takes them all from here.
export type { StatusVocabulary } from './simulator/collections.js';
export { MAX_REQUEST_BODY_BYTES, type SimulatorOutcome, type SimulatorRequest, type SimulatorResponse } from './simulator/exchange.js';
export type { FaultSpec, InjectedFault } from './simulator/faults.js';
export type { ReceivedRequest } from './simulator/recording.js';
export type { SimulatedCollection, SimulatedCustomerQuery, StoredCollection, StoredCustomerQuery } from './simulator/records.js';
export { createManualClock, type ManualClock, type SettlementOptions } from './simulator/settlement.js';
export { REQUESTED_PROVIDER } from './simulator/tap.js';

/** Options of {@link createSimulator}; every one optional. @group Simulator */
export interface SimulatorOptions {
  /** Seed data. @defaultValue {@link defaultFixtures}() */
  fixtures?: SimulatorFixtures | undefined;
  /** Settlement rules. @defaultValue each of {@link SettlementOptions}' defaults */
  settlement?: SettlementOptions | undefined;
  /** The clock, in epoch milliseconds; inject one (e.g. {@link createManualClock}) to control time. @defaultValue `Date.now` */
  now?: (() => number) | undefined;
  /** Generates ids of queries, collections and requests. @defaultValue `crypto.randomUUID` */
  generateId?: (() => string) | undefined;
  /** `transaction.serviceCharge` of a customer query, from its amount. @defaultValue 1 % rounded to the ngwee */
  serviceCharge?: ((amount: number) => number) | undefined;
  /**
   * The words the Collections service answers for each status, and the field carrying them, e.g.
   * `{ pending: 'processing', successful: 'COMPLETED', failed: 'cancelled', statusField: 'status' }`: test a
   * client's `statusWords` against a service that speaks another vocabulary. The stored records
   * ({@link Simulator.collections}) keep the document's words.
   * @defaultValue the document's: `pending`, `successful`, `failed` in `statusText`
   */
  statusWords?: StatusVocabulary | undefined;
  /** Called once per request when its outcome is known (with the same redacted entry {@link Simulator.requests} lists). @defaultValue none */
  onRequest?: ((request: ReceivedRequest) => void) | undefined;
}

/**
 * The in-memory state of both services and their logic. Create one with {@link createSimulator}, then expose it
 * through `createSimulatorHandlers` (msw) or `startSimulator` (loopback HTTP server); several faces may share one.
 *
 * @group Simulator
 */
export class Simulator {
  readonly #fixtures: SimulatorFixtures;
  readonly #generateId: () => string;
  readonly #settlement: Settlement;
  readonly #log: RequestLog;
  readonly #faults = new FaultInjector();
  readonly #tap: TapService;
  readonly #collections: CollectionsService;

  /** Prefer {@link createSimulator}. */
  constructor(options: SimulatorOptions = {}) {
    this.#fixtures = structuredClone(options.fixtures ?? defaultFixtures());
    const now = options.now ?? Date.now;
    this.#generateId = options.generateId ?? (() => globalThis.crypto.randomUUID());
    const generateId = () => this.#generateId();
    this.#settlement = new Settlement(now, this.#fixtures.phoneOutcomes, options.settlement ?? {});
    const auth = new Authenticator(this.#fixtures);
    this.#log = new RequestLog(now, (key) => auth.partnerIdOf(key), options.onRequest);
    this.#tap = new TapService({
      auth,
      tags: this.#fixtures.tags,
      now,
      generateId,
      serviceCharge: options.serviceCharge ?? ((amount) => Math.round(amount) / 100),
    });
    if (options.statusWords !== undefined) checkVocabulary(options.statusWords);
    this.#collections = new CollectionsService({
      auth,
      products: this.#fixtures.products,
      settlement: this.#settlement,
      now,
      generateId,
      ...(options.statusWords === undefined ? {} : { vocabulary: { ...options.statusWords } }),
    });
  }

  /** The fixtures this simulator was seeded with (a copy). */
  get fixtures(): SimulatorFixtures {
    return structuredClone(this.#fixtures);
  }

  // ── Handling ──

  /**
   * Handles one request: records it, applies the first matching fault, then answers as the service would.
   * Both faces call only this, so they share every rule.
   */
  async handle(request: SimulatorRequest): Promise<SimulatorOutcome> {
    const requestId = this.#generateId();
    const { path, query } = splitPath(request.path);
    const received = this.#log.record(request, requestId, path, query);
    const fault = this.#faults.take(request.service, request.method.toUpperCase(), path);
    if (fault) received.faulted = true;
    if (fault?.latencyMs) {
      const completed = await sleep(fault.latencyMs, request.signal);
      if (!completed) return this.#log.drop(received);
    }
    if (fault?.drop === 'before') return this.#log.drop(received);
    if (fault?.status !== undefined) return this.#log.respond(received, faultResponse(request.service, fault, requestId, path));
    const response = this.#route(request, requestId, path);
    if (fault?.drop === 'after') return this.#log.drop(received);
    return this.#log.respond(received, response);
  }

  #route(request: SimulatorRequest, requestId: string, path: string): SimulatorResponse {
    const { service } = request;
    const method = request.method.toUpperCase();
    if (request.bodyTooLarge) {
      const message = `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`;
      return serviceError(service, 413, { tap: 'request/payload-too-large-error', collections: 'E_PAYLOAD_TOO_LARGE' }, message, requestId);
    }
    const routes = service === 'tap' ? this.#tap.routes : this.#collections.routes;
    const allowed: string[] = [];
    for (const route of routes) {
      const params = matchPath(route.pattern, path);
      if (params === undefined) continue;
      if (route.method === method) return route.handle({ request, requestId, path, params });
      allowed.push(route.method);
    }
    if (allowed.length > 0) {
      const message = `Method ${method} is not allowed on ${path}`;
      const codes = { tap: 'route/method-not-allowed-error', collections: 'E_METHOD_NOT_ALLOWED' };
      const response = serviceError(service, 405, codes, message, requestId);
      return { ...response, headers: { ...response.headers, allow: allowed.join(', ') } };
    }
    const message = `No route for ${method} ${path}`;
    return serviceError(service, 404, { tap: 'route/not-found-error', collections: 'E_ROUTE_NOT_FOUND' }, message, requestId);
  }

  // ── Settlement ──

  /**
   * Settles pending collections with this `referenceId` now (of every partner, unless `partnerId` is given).
   * @param outcome `'successful'`, `'failed'` (as `INTERNAL_SYSTEM_ERROR`) or a full outcome. Default: the collection's
   *   planned outcome (by phone number), or `successful` for a number planned to never settle.
   * @throws Error when no pending collection has this `referenceId`.
   */
  settle(referenceId: string, outcome?: 'successful' | 'failed' | SettlementOutcome, partnerId?: string): void {
    this.#settlement.settleNow(this.#collections.withReference(referenceId, partnerId), referenceId, outcome);
  }

  /**
   * Changes when collections settle, from now on (also for collections already pending).
   * @throws RangeError for a negative or non-integer `pendingPolls`, or a negative `pendingMs`.
   */
  configureSettlement(settlement: SettlementOptions): void {
    this.#settlement.configure(settlement);
  }

  /**
   * Plans the outcome of collections created from now on for a phone number (any accepted form), or `'never'` to keep them
   * pending until {@link Simulator.settle}. Undone by {@link Simulator.reset}.
   */
  planOutcome(phoneNumber: string, outcome: PlannedOutcome): void {
    this.#settlement.plan(phoneNumber, outcome);
  }

  // ── Faults ──

  /**
   * Injects a fault on a route; the first matching fault (in injection order) applies to each request.
   * @throws TypeError for a spec that is malformed or does nothing.
   */
  injectFault(spec: FaultSpec): InjectedFault {
    return this.#faults.inject(spec);
  }

  /** Removes every injected fault. */
  clearFaults(): void {
    this.#faults.clear();
  }

  // ── Inspection ──

  /** Every request received since creation or the last {@link Simulator.reset}, oldest first (copies; keys redacted). */
  get requests(): readonly ReceivedRequest[] {
    return this.#log.entries;
  }

  /** Forgets the recorded requests only. */
  clearRequests(): void {
    this.#log.clear();
  }

  /** Stored customer queries, oldest first, of one partner or of all (copies). */
  customerQueries(partnerId?: string): StoredCustomerQuery[] {
    return this.#tap.customerQueries(partnerId);
  }

  /** Stored collections, oldest first, of one partner or of all (copies; time-based settlement applied). */
  collections(partnerId?: string): StoredCollection[] {
    return this.#collections.collections(partnerId);
  }

  /**
   * Forgets all queries, collections, recorded requests, faults and planned outcomes; keeps the fixtures and the
   * settlement options.
   */
  reset(): void {
    this.#tap.reset();
    this.#collections.reset();
    this.#log.clear();
    this.#faults.clear();
    this.#settlement.resetPlans();
  }
}

/**
 * Creates a simulator of both services over one in-memory state.
 * @param options all optional: `fixtures` (default {@link defaultFixtures}()), `settlement` (default: the second status
 *   check, or 3000 ms after creation, sees `successful`), `now` (default `Date.now`), `generateId` (default
 *   `crypto.randomUUID`), `serviceCharge` (default 1 % of the amount, rounded to the ngwee).
 *
 * @group Simulator
 */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  return new Simulator(options);
}
