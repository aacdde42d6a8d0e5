/**
 * Property: whatever the services (or a proxy in front of them) answer — any status from 200 to 599,
 * garbage `Retry-After`, odd `Location`s, random JSON, text, bytes, empty or oversized bodies — every
 * call of every method settles, with a typed result or an error that is a `TapCollectionsError`:
 * never a bare TypeError or SyntaxError, and never an unhandled rejection.
 *
 * Responses come from a custom `fetch` returning `new Response(...)`; `maxRetries: 0` keeps it fast
 * (a create whose outcome is unknown still reconciles once, which consumes the next response).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  ApiError,
  CollectionStatusSchema,
  CollectionsClient,
  ConnectionError,
  CustomerQuerySchema,
  type FetchFunction,
  RedirectError,
  ResponseValidationError,
  TapClient,
  TapCollectionsError,
  TimeoutError,
  UnknownOutcomeError,
} from '../../src/index.js';

const RUNS = 200;
const TAP_BASE_URL = 'https://tap.test';
const COLLECTIONS_BASE_URL = 'https://collections.test';
const API_KEY = 'prop_response_key_a1b2c3d4e5';
const REFERENCE_ID = '3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0f';
/** Small enough that the oversized bodies below exceed it. */
const MAX_RESPONSE_BYTES = 8 * 1024;
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

interface ResponseSpec {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array<ArrayBuffer> | null;
}

// ─── Arbitrary responses ────────────────────────────────────────────────────────────────────────────

const headerValue = (text: string) => /^[\x20-\x7e\t]*$/.test(text) && text.trim() === text;

const status = fc.oneof(
  fc.integer({ min: 200, max: 599 }),
  fc.constantFrom(200, 201, 202, 204, 205, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504),
);

const headers = fc.record(
  {
    'retry-after': fc.oneof(
      fc.constantFrom('0', '1', '120', '-1', '1.5', 'abc', '', '99999999999999999999', 'NaN', '1e3', 'Wed, 21 Oct 2015 07:28:00 GMT'),
      fc.date({ noInvalidDate: true }).map((date) => date.toUTCString()),
      fc.string({ maxLength: 12 }).filter(headerValue),
    ),
    'x-request-id': fc.oneof(fc.uuid(), fc.string({ maxLength: 20 }).filter(headerValue)),
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/html',
      'text/plain',
      'application/octet-stream',
    ),
    location: fc.constantFrom(
      '/v1/elsewhere',
      'https://evil.test/steal',
      '//evil.test/x',
      'http://[not a url',
      '',
      `${TAP_BASE_URL}/v1/tap/partners/customer-queries`,
      `${COLLECTIONS_BASE_URL}/health`,
    ),
    'content-length': fc.constantFrom('0', '5', '99999999', 'garbage'),
  },
  { requiredKeys: [] },
);

/** Replaces or removes one key somewhere in a JSON value (or leaves it whole). */
function mutated(base: unknown): fc.Arbitrary<unknown> {
  const paths: string[][] = [];
  const walk = (value: unknown, path: string[]) => {
    if (value === null || typeof value !== 'object') return;
    for (const [key, child] of Object.entries(value)) {
      paths.push([...path, key]);
      walk(child, [...path, key]);
    }
  };
  walk(base, []);
  return fc.oneof(
    fc.constant(base),
    fc.tuple(fc.constantFrom(...paths), fc.option(fc.jsonValue({ maxDepth: 2 }), { nil: undefined })).map(([path, replacement]) => {
      const copy = structuredClone(base) as Record<string, unknown>;
      let node: Record<string, unknown> = copy;
      for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
      const last = path.at(-1) as string;
      if (replacement === undefined) delete node[last];
      else node[last] = replacement;
      return copy;
    }),
  );
}

const QUERY = {
  id: '9b2e4c1a-0d3f-4e5a-8b6c-7d8e9f0a1b2c',
  partner: { partnerId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', partnerName: 'Kabwe Retail Ltd' },
  customer: { firstName: 'Mwila', lastName: 'Banda' },
  tag: {
    tagId: 'TAG-0001',
    tagNumber: '0001-2345',
    status: 'active',
    mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260977123456', status: 'active' }],
  },
  transaction: {
    merchantId: 'merchant-001',
    merchantName: 'Kabwe Groceries',
    terminalId: 'terminal-001',
    referenceId: REFERENCE_ID,
    currency: 'ZMW',
    amount: 125.5,
    serviceCharge: 2.5,
    status: 'pending',
  },
  createdAt: '2026-11-21T10:15:30.123Z',
  updatedAt: '2026-11-21T10:15:30.123Z',
};

/** Bodies shaped like the services' own, valid or with one part broken. */
const shaped = fc
  .oneof(
    mutated({ success: true, data: QUERY }),
    mutated({ success: true, data: [QUERY] }),
    mutated([QUERY]),
    mutated({ success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } }),
    mutated({ success: true, data: { referenceId: REFERENCE_ID, statusText: 'successful', transactionCode: null, reason: null } }),
    mutated({ success: true, data: { id: 'abc', amount: 10 } }),
    mutated({ success: false, message: 'exists', code: 409, error: 'resource/already-exists-error' }),
    mutated({
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      status: 422,
      errors: [{ message: 'not unique', rule: 'unique', field: 'referenceId' }],
      requestId: 'req-1',
    }),
    mutated({ success: false, code: 'E_VALIDATION_ERROR', errors: 'not an array' }),
  )
  .map((value) => JSON.stringify(value));

const body: fc.Arbitrary<string | Uint8Array<ArrayBuffer> | null> = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '{', '[1,', '{"data":', 'null', 'true', '"text"', '<html><body>502</body></html>') },
  { weight: 3, arbitrary: shaped },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? '') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => new Uint8Array(bytes)) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_RESPONSE_BYTES, max: 100_000 }).map((size) => 'x'.repeat(size)) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 100, max: 1_500 })
      .map((count) => JSON.stringify({ success: true, data: Array.from({ length: count }, () => QUERY) })),
  },
);

const response: fc.Arbitrary<ResponseSpec> = fc.record({ status, headers, body });

/** The answers to successive requests of one call (the last repeats); one in four is the method's own success. */
function responsesFor(success: { status: number; body: unknown }): fc.Arbitrary<ResponseSpec[]> {
  const good = headers.map((extra) => ({ status: success.status, headers: extra, body: JSON.stringify(success.body) }));
  return fc.array(fc.oneof({ weight: 3, arbitrary: response }, { weight: 1, arbitrary: good }), { minLength: 1, maxLength: 3 });
}

/** A `fetch` serving `specs` in order, recording the statuses it served. */
function scriptedFetch(specs: readonly ResponseSpec[]): { fetch: FetchFunction; served: number[] } {
  const served: number[] = [];
  const fetch: FetchFunction = async (input, init) => {
    await new Request(input, init).arrayBuffer();
    const spec = specs[Math.min(served.length, specs.length - 1)] as ResponseSpec;
    served.push(spec.status);
    return new Response(NULL_BODY_STATUSES.has(spec.status) ? null : spec.body, { status: spec.status, headers: spec.headers });
  };
  return { fetch, served };
}

// ─── The methods ────────────────────────────────────────────────────────────────────────────────────

type Call = (fetch: FetchFunction) => Promise<unknown>;
const options = { apiKey: API_KEY, logLevel: 'off', maxRetries: 0, maxResponseBytes: MAX_RESPONSE_BYTES } as const;
const tap = (fetch: FetchFunction) => new TapClient({ ...options, baseUrl: TAP_BASE_URL, fetch });
const collections = (fetch: FetchFunction) => new CollectionsClient({ ...options, baseUrl: COLLECTIONS_BASE_URL, fetch });

interface Method {
  readonly call: Call;
  /** The method's documented success. */
  readonly success: { status: number; body: unknown };
  /** Checks what the call resolved with. */
  readonly check: (value: unknown) => void;
  readonly isCreate: boolean;
}

/** Each method, its success, and a check of what it resolves with. */
const METHODS: Record<string, Method> = {
  submitCustomerQuery: {
    isCreate: true,
    success: { status: 201, body: { success: true, data: QUERY } },
    call: (fetch) =>
      tap(fetch).submitCustomerQuery({
        merchantId: 'merchant-001',
        merchantName: 'Kabwe Groceries',
        terminalId: 'terminal-001',
        referenceId: REFERENCE_ID,
        amount: 125.5,
        tagId: 'TAG-0001',
      }),
    check: (value) => expect(CustomerQuerySchema.safeParse(value).success).toBe(true),
  },
  listCustomerQueries: {
    isCreate: false,
    success: { status: 200, body: { success: true, data: [QUERY] } },
    call: (fetch) => tap(fetch).listCustomerQueries(),
    check: (value) => {
      expect(Array.isArray(value)).toBe(true);
      for (const query of value as unknown[]) expect(CustomerQuerySchema.safeParse(query).success).toBe(true);
    },
  },
  initiate: {
    isCreate: true,
    success: { status: 202, body: { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } } },
    call: (fetch) =>
      collections(fetch).initiate({ productId: REFERENCE_ID, phoneNumber: '0977123456', amount: 25, referenceId: REFERENCE_ID }),
    check: (value) => expect(value).toEqual({ referenceId: expect.any(String), status: expect.any(String) }),
  },
  checkStatus: {
    isCreate: false,
    success: {
      status: 200,
      body: { success: true, data: { referenceId: REFERENCE_ID, statusText: 'pending', transactionCode: null, reason: null } },
    },
    call: (fetch) => collections(fetch).checkStatus(REFERENCE_ID),
    check: (value) => expect(CollectionStatusSchema.safeParse(value).success).toBe(true),
  },
  getById: {
    isCreate: false,
    success: { status: 200, body: { success: true, data: { id: 'collection-1', amount: 25 } } },
    call: (fetch) => collections(fetch).getById('collection-1'),
    check: (value) => expect(value !== null && typeof value === 'object' && !Array.isArray(value)).toBe(true),
  },
  health: {
    isCreate: false,
    success: { status: 200, body: { status: 'ok' } },
    call: (fetch) => collections(fetch).health(),
    check: () => undefined,
  },
};

// ─── The property ───────────────────────────────────────────────────────────────────────────────────

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** Lets any rejection nobody handled surface as an `unhandledRejection` event. */
const settleEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('responses: every answer settles as a typed result or a TapCollectionsError', () => {
  test.for(Object.keys(METHODS))(`%s (${RUNS} runs)`, async (name) => {
    const method = METHODS[name] as Method;
    const tally = { resolved: 0, apiError: 0, responseValidation: 0, other: 0 };
    await fc.assert(
      fc.asyncProperty(responsesFor(method.success), async (specs) => {
        const { fetch, served } = scriptedFetch(specs);
        let settled: { ok: true; value: unknown } | { ok: false; error: unknown };
        try {
          settled = { ok: true, value: await method.call(fetch) };
        } catch (error) {
          settled = { ok: false, error };
        }
        await settleEventLoop();
        expect(unhandled).toEqual([]);
        expect(served.length).toBeGreaterThanOrEqual(1);

        if (settled.ok) {
          tally.resolved++;
          // Only a 2xx resolves a call.
          expect(served.some((code) => code >= 200 && code < 300)).toBe(true);
          method.check(settled.value);
          return;
        }
        const { error } = settled;
        expect(error).toBeInstanceOf(TapCollectionsError);
        // Every request got a response, so no failure may pass for a network one (which would mask a bug as "retry me").
        expect(error).not.toBeInstanceOf(ConnectionError);
        expect(error).not.toBeInstanceOf(TimeoutError);
        if (error instanceof UnknownOutcomeError) expect(error.cause).not.toBeInstanceOf(ConnectionError);
        expect(String(error)).not.toContain(API_KEY);
        if (error instanceof ApiError) {
          tally.apiError++;
          // The status is one the service sent, and not a success.
          expect(served).toContain(error.status);
          expect(error.status < 200 || error.status >= 300).toBe(true);
          if (error.retryAfterMs !== undefined) expect(Number.isFinite(error.retryAfterMs) && error.retryAfterMs >= 0).toBe(true);
        } else if (error instanceof ResponseValidationError) {
          tally.responseValidation++;
          expect(error.status >= 200 && error.status < 300).toBe(true);
        } else if (error instanceof RedirectError) {
          tally.other++;
          expect(served).toContain(error.status);
        } else {
          tally.other++;
          if (error instanceof UnknownOutcomeError) expect(error.referenceId).toBe(REFERENCE_ID);
        }
      }),
      { numRuns: RUNS },
    );
    // Each branch was actually exercised. (A create reads an unreadable 2xx back, so it seldom ends in ResponseValidationError.)
    expect(tally.resolved).toBeGreaterThanOrEqual(RUNS / 20);
    expect(tally.apiError).toBeGreaterThanOrEqual(RUNS / 20);
    if (!method.isCreate && name !== 'health') expect(tally.responseValidation).toBeGreaterThanOrEqual(RUNS / 20);
  });
});
