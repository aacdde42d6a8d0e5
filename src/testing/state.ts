/**
 * The simulator's one state and the logic of both services. Both faces (msw handlers and the loopback
 * server) only translate their transport into a {@link SimulatorRequest} and a {@link SimulatorOutcome}
 * back, so they behave identically by construction. Nothing here touches a socket or msw.
 *
 * @module
 */
import {
  type ApiKeyFixture,
  defaultFixtures,
  OUTCOMES,
  type PartnerFixture,
  type PlannedOutcome,
  type SettlementOutcome,
  type SimulatedService,
  type SimulatorFixtures,
  type TagFixture,
} from './fixtures.js';

/** Request bodies above this many bytes are refused with 413 (1 MiB). */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** The provider a customer query resolves: the request has no provider field, so the simulator assumes this one. */
export const REQUESTED_PROVIDER = 'airtel_money';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ZAMBIAN_MOBILE = /^(?:\+?260|0)([79]\d{8})$/;
const REDACTED = '[REDACTED]';
const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie']);

// ─── Public types ───────────────────────────────────────────────────────────────────────────────

/** One request as a face hands it to the simulator. */
export interface SimulatorRequest {
  /** Which service the request was addressed to (decided by the face from the base URL). */
  readonly service: SimulatedService;
  /** HTTP method, any case. */
  readonly method: string;
  /** The path below the service's base URL, starting with `/`, query string included (e.g. `/v1/collections/check/…`). */
  readonly path: string;
  /** Request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text; `undefined` or `''` when there is none. */
  readonly body?: string | undefined;
  /** Set by a face that stopped reading a body larger than {@link MAX_REQUEST_BODY_BYTES}; answered 413. */
  readonly bodyTooLarge?: boolean | undefined;
  /** Aborted when the client or the face goes away; cuts injected latency short. */
  readonly signal?: AbortSignal | undefined;
}

/** An HTTP response for a face to send. */
export interface SimulatorResponse {
  /** HTTP status. */
  readonly status: number;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body text; `''` for none. */
  readonly body: string;
}

/** What a face must do with a request: send a response, or drop the connection without one. */
export type SimulatorOutcome =
  | {
      /** Send `response`. */
      readonly kind: 'respond';
      /** What to send. */
      readonly response: SimulatorResponse;
    }
  | {
      /** Destroy the connection (loopback) or answer `HttpResponse.error()` (msw). */
      readonly kind: 'drop';
    };

/** What the simulator received, as {@link Simulator.requests} lists it. API keys never appear in it. */
export interface ReceivedRequest {
  /** The request id the simulator answered with (`x-request-id`, and `requestId` in Collections bodies). */
  readonly requestId: string;
  /** The service addressed. */
  readonly service: SimulatedService;
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path below the base URL, without the query string. */
  readonly path: string;
  /** The query string with its `?`, or `''`. */
  readonly query: string;
  /** Headers, names in lower case; `x-api-key`, `authorization`, `proxy-authorization` and `cookie` redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, the raw text when it is not JSON, `undefined` when empty or too large. */
  readonly body: unknown;
  /** When it arrived, by the simulator's clock (ISO 8601). */
  readonly receivedAt: string;
  /** The partner the presented key belongs to, if the key is known (whatever its state). */
  readonly partnerId: string | undefined;
  /** The status answered, `'dropped'` for a dropped connection, `undefined` while still in progress. */
  readonly outcome: number | 'dropped' | undefined;
  /** Whether an injected fault applied to it. */
  readonly faulted: boolean;
}

/** A customer query, every field of section 2 of the Tap document. */
export interface SimulatedCustomerQuery {
  /** UUID of the query. */
  id: string;
  /** The calling partner, from its API key. */
  partner: {
    /** UUID of the partner. */
    partnerId: string;
    /** Name of the partner organization. */
    partnerName: string;
  };
  /** The tag holder. */
  customer: {
    /** First name. */
    firstName: string;
    /** Last name. */
    lastName: string;
  };
  /** The tapped tag. */
  tag: {
    /** Echoes the request's `tagId`. */
    tagId: string;
    /** Printed number of the tag. */
    tagNumber: string;
    /** Every mobile money number on the tag. */
    mobileNumbers: {
      /** Provider, e.g. `airtel_money`. */
      operator: string;
      /** International digits without a plus sign. */
      mobileNumber: string;
      /** `active` or `inactive`. */
      status: string;
    }[];
    /** `active` (only active tags resolve). */
    status: string;
  };
  /** The transaction, echoing the request. */
  transaction: {
    /** Echoes the request. */
    merchantId: string;
    /** Echoes the request. */
    merchantName: string;
    /** Echoes the request. */
    terminalId: string;
    /** Echoes the request. */
    referenceId: string;
    /** Always `ZMW`. */
    currency: 'ZMW';
    /** Echoes the request. */
    amount: number;
    /** Set by the simulator (default 1 % of the amount, rounded to the ngwee). */
    serviceCharge: number;
    /** `pending`, and never changes (the document shows no transitions). */
    status: string;
  };
  /** ISO 8601 with milliseconds and `Z`. */
  createdAt: string;
  /** ISO 8601 with milliseconds and `Z`; equals `createdAt`. */
  updatedAt: string;
}

/** A collection record as `GET /v1/collections/:id` returns it. */
export interface SimulatedCollection {
  /** UUID assigned by the simulator; the `:id` of `GET /v1/collections/:id`. */
  id: string;
  /** The caller's external reference (UUID). */
  referenceId: string;
  /** The credited product (UUID). */
  productId: string;
  /** As sent (any accepted form). */
  phoneNumber: string;
  /** As sent. */
  amount: number;
  /** Always `ZMW`. */
  currency: 'ZMW';
  /** As sent, or `null` when absent. */
  narration: string | null;
  /** `pending`, then `successful` or `failed`. */
  status: 'pending' | 'successful' | 'failed';
  /** `null` while pending, then e.g. `SUCCESS` or `INTERNAL_SYSTEM_ERROR`. */
  transactionCode: string | null;
  /** `null` while pending, then explanatory text. */
  reason: string | null;
  /** ISO 8601 with milliseconds and `Z`. */
  createdAt: string;
  /** ISO 8601 with milliseconds and `Z`; the settlement moment once settled. */
  updatedAt: string;
}

/** A stored collection as {@link Simulator.collections} lists it: the record plus simulator bookkeeping. */
export interface StoredCollection extends SimulatedCollection {
  /** The owning partner (from the key that created it). */
  readonly partnerId: string;
  /** How many status checks (`GET /v1/collections/check/:referenceId`) it has answered. */
  readonly statusChecks: number;
}

/** A stored customer query as {@link Simulator.customerQueries} lists it. */
export interface StoredCustomerQuery extends SimulatedCustomerQuery {
  /** The owning partner. */
  readonly partnerId: string;
}

/**
 * When pending collections settle. A collection settles at the first of the two conditions;
 * `Infinity` turns a condition off (both `Infinity`: only {@link Simulator.settle} settles).
 */
export interface SettlementOptions {
  /** Status checks that still answer `pending`; the next one sees the final status. Default 1. */
  pendingPolls?: number;
  /** Milliseconds after creation (by the simulator's clock) after which the collection is settled. Default 3000. */
  pendingMs?: number;
  /** The outcome of collections whose phone number has none planned. Default {@link OUTCOMES}`.successful`. */
  defaultOutcome?: SettlementOutcome;
}

/** Options of {@link createSimulator}; every one optional. */
export interface SimulatorOptions {
  /** Seed data. Default {@link defaultFixtures}(). */
  fixtures?: SimulatorFixtures;
  /** Settlement rules. Defaults: see {@link SettlementOptions}. */
  settlement?: SettlementOptions;
  /** The clock, in epoch milliseconds; inject one (e.g. {@link createManualClock}) to control time. Default `Date.now`. */
  now?: () => number;
  /** Generates ids of queries, collections and requests. Default `crypto.randomUUID`. */
  generateId?: () => string;
  /** `transaction.serviceCharge` of a customer query, from its amount. Default 1 % rounded to the ngwee. */
  serviceCharge?: (amount: number) => number;
  /** Called once per request when its outcome is known (with the same redacted entry {@link Simulator.requests} lists). Default: none. */
  onRequest?: (request: ReceivedRequest) => void;
}

/** What an injected fault does. At least one of `latencyMs`, `status` or `drop` must be given. */
export interface FaultSpec {
  /**
   * The route it applies to: `'METHOD /path'` (method `*` for any; `:name` matches one segment, a final `*` the rest),
   * a bare `'/path'` (any method), or `'*'` (every request). Paths are the documented ones, below the base URL,
   * e.g. `'POST /v1/collections/mobile-money'` or `'GET /v1/collections/check/:referenceId'`.
   */
  route: string;
  /** Limits the fault to one service. Default: both. */
  service?: SimulatedService;
  /** How many requests it applies to before it removes itself. Default `Infinity`. */
  times?: number;
  /** Delay before anything else happens, in ms. Default 0. */
  latencyMs?: number;
  /** Answer with this status (400–599, e.g. 429, 500, 503) instead of processing the request. */
  status?: number;
  /** The `Retry-After` header sent with `status` (seconds or an HTTP date). Default: none. */
  retryAfter?: string | number;
  /** Body sent with `status`: the service's JSON error envelope, an HTML proxy page, or nothing. Default `'json'`. */
  body?: 'json' | 'html' | 'empty';
  /**
   * Drop the connection without a response: `'before'` processing (nothing is stored) or `'after'`
   * (the request is processed and committed, then the answer is lost). Not combinable with `status`.
   */
  drop?: 'before' | 'after';
}

/** An injected fault, as {@link Simulator.injectFault} returns it. */
export interface InjectedFault {
  /** The spec it was created from. */
  readonly spec: Readonly<FaultSpec>;
  /** How many more requests it applies to. */
  readonly remaining: number;
  /** How many requests it has applied to. */
  readonly hits: number;
  /** Removes it; requests already delayed by it are not affected. */
  remove(): void;
}

/** A manual clock for {@link SimulatorOptions.now}. */
export interface ManualClock {
  /** The current time, epoch ms. */
  now(): number;
  /** Moves time forward by `ms`. */
  advance(ms: number): void;
  /** Sets the time, epoch ms. */
  set(epochMs: number): void;
}

/**
 * A clock that moves only when told, so tests of time-based settlement need no waiting.
 * @param startMs the initial time in epoch ms. Default `2026-01-01T00:00:00.000Z`.
 */
export function createManualClock(startMs: number = Date.UTC(2026, 0, 1)): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (epochMs) => {
      current = epochMs;
    },
  };
}

// ─── Internal shapes ────────────────────────────────────────────────────────────────────────────

interface CollectionEntry {
  readonly partnerId: string;
  readonly createdMs: number;
  readonly record: SimulatedCollection;
  planned: PlannedOutcome;
  statusChecks: number;
}

interface FaultEntry {
  readonly spec: Readonly<FaultSpec>;
  readonly service: SimulatedService | undefined;
  readonly method: string;
  readonly pattern: string;
  remaining: number;
  hits: number;
}

type MutableReceived = { -readonly [K in keyof ReceivedRequest]: ReceivedRequest[K] };

interface Context {
  readonly request: SimulatorRequest;
  readonly requestId: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly received: MutableReceived;
}

interface Route {
  readonly method: string;
  readonly pattern: string;
  readonly handle: (context: Context) => SimulatorResponse;
}

/** One field error of the Collections 422 body. */
interface FieldError {
  message: string;
  rule: string;
  field: string;
}

type Resolved<T> = { ok: true; value: T } | { ok: false; response: SimulatorResponse };

// ─── The simulator ──────────────────────────────────────────────────────────────────────────────

/**
 * The in-memory state of both services and their logic. Create one with {@link createSimulator}, then expose it
 * through `createSimulatorHandlers` (msw) or `startSimulator` (loopback HTTP server); several faces may share one.
 */
export class Simulator {
  readonly #fixtures: SimulatorFixtures;
  readonly #now: () => number;
  readonly #generateId: () => string;
  readonly #serviceCharge: (amount: number) => number;
  readonly #onRequest: ((request: ReceivedRequest) => void) | undefined;
  readonly #settlement: Required<SettlementOptions>;
  readonly #partners = new Map<string, PartnerFixture>();
  readonly #keys = new Map<string, ApiKeyFixture>();
  readonly #tags = new Map<string, TagFixture>();
  readonly #phoneOutcomes = new Map<string, PlannedOutcome>();
  #queries: { partnerId: string; query: SimulatedCustomerQuery }[] = [];
  #collections: CollectionEntry[] = [];
  #received: MutableReceived[] = [];
  #faults: FaultEntry[] = [];
  readonly #routes: Record<SimulatedService, Route[]>;

  /** Prefer {@link createSimulator}. */
  constructor(options: SimulatorOptions = {}) {
    this.#fixtures = structuredClone(options.fixtures ?? defaultFixtures());
    this.#now = options.now ?? Date.now;
    this.#generateId = options.generateId ?? (() => globalThis.crypto.randomUUID());
    this.#serviceCharge = options.serviceCharge ?? ((amount) => Math.round(amount) / 100);
    this.#onRequest = options.onRequest;
    this.#settlement = { pendingPolls: 1, pendingMs: 3000, defaultOutcome: OUTCOMES.successful };
    this.configureSettlement(options.settlement ?? {});
    for (const partner of this.#fixtures.partners) this.#partners.set(partner.partnerId, partner);
    for (const key of this.#fixtures.apiKeys) this.#keys.set(key.key, key);
    for (const tag of this.#fixtures.tags) this.#tags.set(tag.tagId, tag);
    this.#resetPhoneOutcomes();
    this.#routes = {
      tap: [
        { method: 'POST', pattern: '/v1/tap/partners/customer-queries', handle: (c) => this.#submitCustomerQuery(c) },
        { method: 'GET', pattern: '/v1/tap/partners/customer-queries', handle: (c) => this.#listCustomerQueries(c) },
      ],
      collections: [
        { method: 'POST', pattern: '/v1/collections/mobile-money', handle: (c) => this.#initiateCollection(c) },
        { method: 'GET', pattern: '/v1/collections/check/:referenceId', handle: (c) => this.#checkStatus(c) },
        { method: 'GET', pattern: '/v1/collections/:id', handle: (c) => this.#getCollection(c) },
        { method: 'GET', pattern: '/health', handle: (c) => this.#health(c) },
      ],
    };
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
    const received = this.#record(request, requestId, path, query);
    const fault = this.#takeFault(request.service, request.method.toUpperCase(), path);
    if (fault) received.faulted = true;
    if (fault?.latencyMs) {
      const completed = await sleep(fault.latencyMs, request.signal);
      if (!completed) return this.#drop(received);
    }
    if (fault?.drop === 'before') return this.#drop(received);
    if (fault?.status !== undefined) return this.#respond(received, faultResponse(request.service, fault, requestId, path));
    const response = this.#process(request, requestId, path, received);
    if (fault?.drop === 'after') return this.#drop(received);
    return this.#respond(received, response);
  }

  #process(request: SimulatorRequest, requestId: string, path: string, received: MutableReceived): SimulatorResponse {
    const { service } = request;
    const method = request.method.toUpperCase();
    if (request.bodyTooLarge) {
      const message = `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`;
      return service === 'tap'
        ? tapError(413, 'request/payload-too-large-error', message, requestId)
        : collectionsError(413, 'E_PAYLOAD_TOO_LARGE', message, requestId);
    }
    const allowed: string[] = [];
    for (const route of this.#routes[service]) {
      const params = matchPath(route.pattern, path);
      if (params === undefined) continue;
      if (route.method === method) return route.handle({ request, requestId, path, params, received });
      allowed.push(route.method);
    }
    if (allowed.length > 0) {
      const message = `Method ${method} is not allowed on ${path}`;
      const response =
        service === 'tap'
          ? tapError(405, 'route/method-not-allowed-error', message, requestId)
          : collectionsError(405, 'E_METHOD_NOT_ALLOWED', message, requestId);
      return { ...response, headers: { ...response.headers, allow: allowed.join(', ') } };
    }
    const message = `No route for ${method} ${path}`;
    return service === 'tap'
      ? tapError(404, 'route/not-found-error', message, requestId)
      : collectionsError(404, 'E_ROUTE_NOT_FOUND', message, requestId);
  }

  #record(request: SimulatorRequest, requestId: string, path: string, query: string): MutableReceived {
    const presentedKey = presentedApiKey(request.service, request.headers);
    const entry: MutableReceived = {
      requestId,
      service: request.service,
      method: request.method.toUpperCase(),
      path,
      query,
      headers: redactHeaders(request.headers),
      body: request.bodyTooLarge ? undefined : parseRecordedBody(request.body, presentedKey),
      receivedAt: new Date(this.#now()).toISOString(),
      partnerId: presentedKey === undefined ? undefined : this.#keys.get(presentedKey)?.partnerId,
      outcome: undefined,
      faulted: false,
    };
    this.#received.push(entry);
    return entry;
  }

  #drop(received: MutableReceived): SimulatorOutcome {
    received.outcome = 'dropped';
    this.#notify(received);
    return { kind: 'drop' };
  }

  #respond(received: MutableReceived, response: SimulatorResponse): SimulatorOutcome {
    received.outcome = response.status;
    this.#notify(received);
    return { kind: 'respond', response };
  }

  #notify(received: MutableReceived): void {
    try {
      this.#onRequest?.(structuredClone(received));
    } catch {
      // A listener's bug must not change what the client receives.
    }
  }

  // ── Authentication ──

  #authenticate(context: Context, permission: 'customer-queries' | 'collections' | undefined): Resolved<PartnerFixture> {
    const { service } = context.request;
    const key = presentedApiKey(service, context.request.headers);
    const fixture = key === undefined ? undefined : this.#keys.get(key);
    const fail = (status: 401 | 403, message: string): Resolved<PartnerFixture> => ({
      ok: false,
      response:
        service === 'tap'
          ? tapError(status, status === 401 ? 'auth/unauthorized-error' : 'auth/forbidden-error', message, context.requestId)
          : collectionsError(status, status === 401 ? 'E_UNAUTHORIZED' : 'E_FORBIDDEN', message, context.requestId),
    });
    if (key === undefined) {
      return fail(
        401,
        service === 'tap' ? 'The x-api-key header is missing' : 'The Authorization header is missing or is not a Bearer token',
      );
    }
    if (fixture === undefined || fixture.service !== service) return fail(401, 'The API key is invalid');
    if (fixture.state === 'revoked') return fail(401, 'The API key has been revoked');
    if (fixture.state === 'expired') return fail(401, 'The API key has expired');
    const partner = this.#partners.get(fixture.partnerId);
    if (partner === undefined) return fail(401, 'The API key is invalid');
    if (permission !== undefined && !fixture.permissions.includes(permission)) {
      return fail(
        403,
        permission === 'customer-queries'
          ? 'The API key is not authorized for customer queries'
          : 'The API key is not authorized for collections',
      );
    }
    return { ok: true, value: partner };
  }

  // ── Tap ──

  #submitCustomerQuery(context: Context): SimulatorResponse {
    const auth = this.#authenticate(context, 'customer-queries');
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

    const timestamp = new Date(this.#now()).toISOString();
    const query: SimulatedCustomerQuery = {
      id: this.#generateId(),
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
        serviceCharge: this.#serviceCharge(amount),
        status: 'pending',
      },
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    this.#queries.push({ partnerId: partner.partnerId, query });
    return json(201, { success: true, data: query }, requestId);
  }

  #listCustomerQueries(context: Context): SimulatorResponse {
    const auth = this.#authenticate(context, 'customer-queries');
    if (!auth.ok) return auth.response;
    const data = this.#queries.filter((stored) => stored.partnerId === auth.value.partnerId).map((stored) => stored.query);
    return json(200, { success: true, data }, context.requestId);
  }

  // ── Collections ──

  #initiateCollection(context: Context): SimulatorResponse {
    const auth = this.#authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const partnerId = auth.value.partnerId;
    const { requestId, path } = context;
    const parsed = parseJsonBody(context.request.body);
    if (!parsed.ok) return collectionsError(400, 'E_BAD_REQUEST', 'The request body is not valid JSON', requestId);
    const validated = this.#validateCollectionInput(parsed.value, partnerId);
    if (!validated.ok) return validationProblem(path, validated.errors, requestId);
    const input = validated.value;
    if (this.#collections.some((entry) => entry.partnerId === partnerId && entry.record.referenceId === input.referenceId)) {
      return collectionsError(409, 'E_DUPLICATE_REFERENCE', `A collection with referenceId ${input.referenceId} already exists`, requestId);
    }
    const nowMs = this.#now();
    const timestamp = new Date(nowMs).toISOString();
    const record: SimulatedCollection = {
      id: this.#generateId(),
      referenceId: input.referenceId,
      productId: input.productId,
      phoneNumber: input.phoneNumber,
      amount: input.amount,
      currency: 'ZMW',
      narration: input.narration,
      status: 'pending',
      transactionCode: null,
      reason: null,
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    const planned = this.#phoneOutcomes.get(internationalPhone(input.phoneNumber)) ?? this.#settlement.defaultOutcome;
    this.#collections.push({ partnerId, createdMs: nowMs, record, planned, statusChecks: 0 });
    return json(202, { success: true, data: { referenceId: record.referenceId, status: record.status } }, requestId);
  }

  #checkStatus(context: Context): SimulatorResponse {
    const auth = this.#authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const referenceId = context.params.referenceId ?? '';
    if (!UUID_PATTERN.test(referenceId)) {
      return validationProblem(
        context.path,
        [{ message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'params.referenceId' }],
        context.requestId,
      );
    }
    const entry = this.#collections.find(
      (candidate) => candidate.partnerId === auth.value.partnerId && candidate.record.referenceId === referenceId,
    );
    if (entry === undefined) {
      return collectionsError(404, 'E_NOT_FOUND', `No collection with referenceId ${referenceId}`, context.requestId);
    }
    entry.statusChecks++;
    this.#settleIfDue(entry);
    const { record } = entry;
    return json(
      200,
      {
        success: true,
        data: {
          referenceId: record.referenceId,
          statusText: record.status,
          transactionCode: record.transactionCode,
          reason: record.reason,
        },
      },
      context.requestId,
    );
  }

  #getCollection(context: Context): SimulatorResponse {
    const auth = this.#authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const id = context.params.id ?? '';
    const entry = this.#collections.find((candidate) => candidate.partnerId === auth.value.partnerId && candidate.record.id === id);
    if (entry === undefined) return collectionsError(404, 'E_NOT_FOUND', `No collection with id ${id}`, context.requestId);
    this.#settleIfDue(entry);
    return json(200, { success: true, data: entry.record }, context.requestId);
  }

  #health(context: Context): SimulatorResponse {
    // Any authenticated key may check health: it verifies credentials, not permissions.
    const auth = this.#authenticate(context, undefined);
    if (!auth.ok) return auth.response;
    return json(200, { status: 'ok' }, context.requestId);
  }

  #validateCollectionInput(
    body: unknown,
    partnerId: string,
  ):
    | { ok: true; value: { productId: string; referenceId: string; phoneNumber: string; amount: number; narration: string | null } }
    | { ok: false; errors: FieldError[] } {
    if (body === undefined) body = {};
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return { ok: false, errors: [{ message: 'The request body must be a JSON object', rule: 'object', field: 'body' }] };
    }
    const fields = body as Record<string, unknown>;
    const errors: FieldError[] = [];
    const fail = (name: string, rule: string, message: string) => {
      errors.push({ message, rule, field: `body.${name}` });
    };
    const requiredString = (name: string): string | undefined => {
      const value = fields[name];
      if (value === undefined || value === null) fail(name, 'required', `The ${name} field must be defined`);
      else if (typeof value !== 'string') fail(name, 'string', `The ${name} field must be a string`);
      else return value;
      return undefined;
    };

    const productId = requiredString('productId');
    if (productId !== undefined) {
      if (!UUID_PATTERN.test(productId)) fail('productId', 'uuid', 'The productId field must be a valid UUID');
      else if (
        !this.#fixtures.products.some(
          (product) => product.productId.toLowerCase() === productId.toLowerCase() && product.partnerId === partnerId,
        )
      ) {
        fail('productId', 'exists', 'The selected productId is invalid');
      }
    }
    const referenceId = requiredString('referenceId');
    if (referenceId !== undefined && !UUID_PATTERN.test(referenceId))
      fail('referenceId', 'uuid', 'The referenceId field must be a valid UUID');
    const phoneNumber = requiredString('phoneNumber');
    if (phoneNumber !== undefined && !ZAMBIAN_MOBILE.test(phoneNumber)) {
      fail('phoneNumber', 'mobile', 'The phoneNumber field must be a valid Zambian mobile number');
    }
    const currency = requiredString('currency');
    if (currency !== undefined && currency !== 'ZMW') fail('currency', 'enum', 'The selected currency is invalid; it must be ZMW');

    const amount = fields.amount;
    if (amount === undefined || amount === null) fail('amount', 'required', 'The amount field must be defined');
    else if (typeof amount !== 'number' || !Number.isFinite(amount)) fail('amount', 'number', 'The amount field must be a number');
    else if (amount < 1) fail('amount', 'min', 'The amount field must be at least 1');
    else if (amount > 10_000) fail('amount', 'max', 'The amount field must not be greater than 10000');
    else if (!hasAtMostTwoDecimals(amount)) fail('amount', 'decimal', 'The amount field must have at most 2 decimal places');

    const narration = fields.narration;
    if (narration !== undefined && narration !== null) {
      if (typeof narration !== 'string') fail('narration', 'string', 'The narration field must be a string');
      else if (narration.length > 100) fail('narration', 'maxLength', 'The narration field must not be greater than 100 characters');
    }

    if (errors.length > 0) return { ok: false, errors };
    return {
      ok: true,
      value: {
        productId: productId as string,
        referenceId: referenceId as string,
        phoneNumber: phoneNumber as string,
        amount: amount as number,
        narration: typeof narration === 'string' ? narration : null,
      },
    };
  }

  // ── Settlement ──

  #settleIfDue(entry: CollectionEntry): void {
    if (entry.record.status !== 'pending' || entry.planned === 'never') return;
    const { pendingPolls, pendingMs } = this.#settlement;
    const nowMs = this.#now();
    const dueByPolls = entry.statusChecks > pendingPolls;
    const dueByTime = nowMs - entry.createdMs >= pendingMs;
    if (!dueByPolls && !dueByTime) return;
    // A time-based settlement happened at its due moment, not when someone happened to look.
    const atMs = dueByPolls ? nowMs : entry.createdMs + pendingMs;
    applyOutcome(entry.record, entry.planned, atMs);
  }

  /**
   * Settles pending collections with this `referenceId` now (of every partner, unless `partnerId` is given).
   * @param outcome `'successful'`, `'failed'` (as `INTERNAL_SYSTEM_ERROR`) or a full outcome. Default: the collection's
   *   planned outcome (by phone number), or `successful` for a number planned to never settle.
   * @throws Error when no pending collection has this `referenceId`.
   */
  settle(referenceId: string, outcome?: 'successful' | 'failed' | SettlementOutcome, partnerId?: string): void {
    const entries = this.#collections.filter(
      (entry) => entry.record.referenceId === referenceId && (partnerId === undefined || entry.partnerId === partnerId),
    );
    const pending = entries.filter((entry) => {
      this.#settleIfDue(entry);
      return entry.record.status === 'pending';
    });
    if (pending.length === 0) {
      throw new Error(
        entries.length === 0 ? `No collection with referenceId ${referenceId}` : `The collection ${referenceId} has already settled`,
      );
    }
    for (const entry of pending) {
      const chosen =
        outcome === 'successful'
          ? OUTCOMES.successful
          : outcome === 'failed'
            ? OUTCOMES.systemError
            : (outcome ?? (entry.planned === 'never' ? OUTCOMES.successful : entry.planned));
      applyOutcome(entry.record, chosen, this.#now());
    }
  }

  /**
   * Changes when collections settle, from now on (also for collections already pending).
   * @throws RangeError for a negative or non-integer `pendingPolls`, or a negative `pendingMs`.
   */
  configureSettlement(settlement: SettlementOptions): void {
    const { pendingPolls, pendingMs, defaultOutcome } = settlement;
    if (
      pendingPolls !== undefined &&
      !(pendingPolls === Number.POSITIVE_INFINITY || (Number.isInteger(pendingPolls) && pendingPolls >= 0))
    ) {
      throw new RangeError('settlement.pendingPolls must be a whole number ≥ 0 or Infinity');
    }
    if (pendingMs !== undefined && !(pendingMs >= 0)) throw new RangeError('settlement.pendingMs must be ≥ 0 or Infinity');
    if (pendingPolls !== undefined) this.#settlement.pendingPolls = pendingPolls;
    if (pendingMs !== undefined) this.#settlement.pendingMs = pendingMs;
    if (defaultOutcome !== undefined) this.#settlement.defaultOutcome = defaultOutcome;
  }

  /**
   * Plans the outcome of collections created from now on for a phone number (any accepted form), or `'never'` to keep them
   * pending until {@link Simulator.settle}. Undone by {@link Simulator.reset}.
   */
  planOutcome(phoneNumber: string, outcome: PlannedOutcome): void {
    this.#phoneOutcomes.set(internationalPhone(phoneNumber), outcome);
  }

  #resetPhoneOutcomes(): void {
    this.#phoneOutcomes.clear();
    for (const [phone, outcome] of Object.entries(this.#fixtures.phoneOutcomes))
      this.#phoneOutcomes.set(internationalPhone(phone), outcome);
  }

  // ── Faults ──

  /**
   * Injects a fault on a route; the first matching fault (in injection order) applies to each request.
   * @throws TypeError for a spec that is malformed or does nothing.
   */
  injectFault(spec: FaultSpec): InjectedFault {
    const { method, pattern } = parseRoute(spec.route);
    const times = spec.times ?? Number.POSITIVE_INFINITY;
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times > 0)))
      throw new TypeError('times must be a whole number ≥ 1');
    if (spec.latencyMs !== undefined && !(Number.isFinite(spec.latencyMs) && spec.latencyMs >= 0)) {
      throw new TypeError('latencyMs must be a finite number ≥ 0');
    }
    if (spec.status !== undefined && !(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599)) {
      throw new TypeError('status must be an HTTP error status from 400 to 599');
    }
    if (spec.status !== undefined && spec.drop !== undefined) throw new TypeError('status and drop cannot be combined');
    if (spec.drop !== undefined && spec.drop !== 'before' && spec.drop !== 'after') throw new TypeError("drop must be 'before' or 'after'");
    if (spec.status === undefined && (spec.retryAfter !== undefined || spec.body !== undefined)) {
      throw new TypeError('retryAfter and body apply only with status');
    }
    if (spec.status === undefined && spec.drop === undefined && !spec.latencyMs)
      throw new TypeError('a fault needs latencyMs, status or drop');
    const entry: FaultEntry = { spec: Object.freeze({ ...spec }), service: spec.service, method, pattern, remaining: times, hits: 0 };
    this.#faults.push(entry);
    return {
      spec: entry.spec,
      get remaining() {
        return entry.remaining;
      },
      get hits() {
        return entry.hits;
      },
      remove: () => {
        this.#faults = this.#faults.filter((candidate) => candidate !== entry);
      },
    };
  }

  /** Removes every injected fault. */
  clearFaults(): void {
    this.#faults = [];
  }

  #takeFault(service: SimulatedService, method: string, path: string): Readonly<FaultSpec> | undefined {
    const entry = this.#faults.find(
      (fault) =>
        fault.remaining > 0 &&
        (fault.service === undefined || fault.service === service) &&
        (fault.method === '*' || fault.method === method) &&
        (fault.pattern === '*' || matchPath(fault.pattern, path) !== undefined),
    );
    if (entry === undefined) return undefined;
    entry.remaining--;
    entry.hits++;
    if (entry.remaining <= 0) this.#faults = this.#faults.filter((candidate) => candidate !== entry);
    return entry.spec;
  }

  // ── Inspection ──

  /** Every request received since creation or the last {@link Simulator.reset}, oldest first (copies; keys redacted). */
  get requests(): readonly ReceivedRequest[] {
    return this.#received.map((entry) => structuredClone(entry));
  }

  /** Forgets the recorded requests only. */
  clearRequests(): void {
    this.#received = [];
  }

  /** Stored customer queries, oldest first, of one partner or of all (copies). */
  customerQueries(partnerId?: string): StoredCustomerQuery[] {
    return this.#queries
      .filter((stored) => partnerId === undefined || stored.partnerId === partnerId)
      .map((stored) => ({ ...structuredClone(stored.query), partnerId: stored.partnerId }));
  }

  /** Stored collections, oldest first, of one partner or of all (copies; time-based settlement applied). */
  collections(partnerId?: string): StoredCollection[] {
    return this.#collections
      .filter((entry) => partnerId === undefined || entry.partnerId === partnerId)
      .map((entry) => {
        this.#settleIfDue(entry);
        return { ...structuredClone(entry.record), partnerId: entry.partnerId, statusChecks: entry.statusChecks };
      });
  }

  /**
   * Forgets all queries, collections, recorded requests, faults and planned outcomes; keeps the fixtures and the
   * settlement options.
   */
  reset(): void {
    this.#queries = [];
    this.#collections = [];
    this.#received = [];
    this.#faults = [];
    this.#resetPhoneOutcomes();
  }
}

/**
 * Creates a simulator of both services over one in-memory state.
 * @param options all optional: `fixtures` (default {@link defaultFixtures}()), `settlement` (default: the second status
 *   check, or 3000 ms after creation, sees `successful`), `now` (default `Date.now`), `generateId` (default
 *   `crypto.randomUUID`), `serviceCharge` (default 1 % of the amount, rounded to the ngwee).
 */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  return new Simulator(options);
}

// ─── Helpers ────────────────────────────────────────────────────────────────────────────────────

function applyOutcome(record: SimulatedCollection, outcome: SettlementOutcome, atMs: number): void {
  record.status = outcome.status;
  record.transactionCode = outcome.transactionCode;
  record.reason = outcome.reason;
  record.updatedAt = new Date(atMs).toISOString();
}

function json(status: number, body: unknown, requestId: string): SimulatorResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId },
    body: JSON.stringify(body),
  };
}

function tapError(status: number, error: string, message: string, requestId: string): SimulatorResponse {
  return json(status, { success: false, message, code: status, error }, requestId);
}

function collectionsError(status: number, code: string, message: string, requestId: string): SimulatorResponse {
  return json(status, { success: false, data: null, code, message, requestId }, requestId);
}

function validationProblem(instance: string, errors: FieldError[], requestId: string): SimulatorResponse {
  return json(
    422,
    {
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      type: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/422',
      title: 'Validation Error',
      status: 422,
      detail: 'Validation failure',
      instance,
      errors,
      requestId,
    },
    requestId,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const FAULT_TAP_IDENTIFIERS: Record<number, string> = {
  429: 'rate-limit/exceeded-error',
  500: 'server/internal-error',
  502: 'server/bad-gateway-error',
  503: 'server/unavailable-error',
  504: 'server/gateway-timeout-error',
};

const FAULT_COLLECTIONS_CODES: Record<number, string> = {
  429: 'E_RATE_LIMIT_EXCEEDED',
  500: 'E_INTERNAL_SERVER_ERROR',
  502: 'E_BAD_GATEWAY',
  503: 'E_SERVICE_UNAVAILABLE',
  504: 'E_GATEWAY_TIMEOUT',
};

function faultResponse(service: SimulatedService, fault: Readonly<FaultSpec>, requestId: string, path: string): SimulatorResponse {
  const status = fault.status ?? 500;
  const text = STATUS_TEXT[status] ?? 'Error';
  const extra: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) };
  const kind = fault.body ?? 'json';
  if (kind === 'empty') return { status, headers: { 'x-request-id': requestId, ...extra }, body: '' };
  if (kind === 'html') {
    return {
      status,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, ...extra },
      body: `<!DOCTYPE html>\n<html><head><title>${status} ${text}</title></head><body><center><h1>${status} ${text}</h1></center><hr><center>simulated proxy</center></body></html>\n`,
    };
  }
  const message = `${text} (simulated fault on ${path})`;
  const response =
    service === 'tap'
      ? tapError(status, FAULT_TAP_IDENTIFIERS[status] ?? (status >= 500 ? 'server/error' : 'request/error'), message, requestId)
      : collectionsError(
          status,
          FAULT_COLLECTIONS_CODES[status] ?? (status >= 500 ? 'E_SERVER_ERROR' : 'E_REQUEST_ERROR'),
          message,
          requestId,
        );
  return { ...response, headers: { ...response.headers, ...extra } };
}

function splitPath(raw: string): { path: string; query: string } {
  const index = raw.indexOf('?');
  return index === -1 ? { path: raw, query: '' } : { path: raw.slice(0, index), query: raw.slice(index) };
}

/** Matches `path` against a pattern of literal segments, `:name` (one segment) and a final `*` (the rest). */
function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const wanted = pattern.split('/');
  const actual = path.split('/');
  const params: Record<string, string> = {};
  for (let index = 0; index < wanted.length; index++) {
    const segment = wanted[index] as string;
    if (segment === '*' && index === wanted.length - 1) return params;
    const value = actual[index];
    if (value === undefined) return undefined;
    if (segment.startsWith(':')) {
      if (value === '') return undefined;
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) {
      return undefined;
    }
  }
  return actual.length === wanted.length ? params : undefined;
}

function parseRoute(route: string): { method: string; pattern: string } {
  if (typeof route !== 'string' || route.trim() === '') throw new TypeError('route must be a non-empty string');
  const trimmed = route.trim();
  if (trimmed === '*') return { method: '*', pattern: '*' };
  const parts = trimmed.split(/\s+/);
  const [first, second] = parts;
  if (parts.length === 1 && first?.startsWith('/')) return { method: '*', pattern: first };
  if (parts.length === 2 && first !== undefined && second !== undefined && (second.startsWith('/') || second === '*')) {
    return { method: first.toUpperCase(), pattern: second };
  }
  throw new TypeError(`route must look like 'POST /v1/collections/mobile-money', '/health' or '*', got '${route}'`);
}

function presentedApiKey(service: SimulatedService, headers: Readonly<Record<string, string>>): string | undefined {
  if (service === 'tap') {
    const key = headers['x-api-key']?.trim();
    return key ? key : undefined;
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!SECRET_HEADERS.has(lower)) redacted[lower] = value;
    else if (lower === 'authorization' || lower === 'proxy-authorization') {
      const scheme = /^(\S+)\s+\S/.exec(value)?.[1];
      redacted[lower] = scheme ? `${scheme} ${REDACTED}` : REDACTED;
    } else redacted[lower] = REDACTED;
  }
  return redacted;
}

function parseRecordedBody(body: string | undefined, key: string | undefined): unknown {
  if (body === undefined || body === '') return undefined;
  // A key pasted into a body by mistake must not survive into what tests print.
  const text = key !== undefined && key.length >= 8 ? body.split(key).join(REDACTED) : body;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function parseJsonBody(body: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (body === undefined || body.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
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

function hasAtMostTwoDecimals(amount: number): boolean {
  const cents = amount * 100;
  return Math.abs(cents - Math.round(cents)) < 1e-6;
}

/** `0977…`, `+260977…` and `260977…` all become `260977…`; anything else is returned unchanged. */
function internationalPhone(phone: string): string {
  const match = ZAMBIAN_MOBILE.exec(phone.replace(/[\s-]/g, ''));
  return match ? `260${match[1]}` : phone;
}

/** Resolves `true` after `ms`, or `false` as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
