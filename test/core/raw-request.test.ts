/** `request(method, path, options)` on both clients, and the `onResponse` option: the same pipeline as every method. */
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  CollectionsClient,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  RequestValidationError,
  type ResponseEvent,
  TapClient,
  TimeoutError,
} from '../../src/index.js';
import { COLLECTIONS_BASE_URL, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { rejectionOf } from '../helpers/tap.js';

const KEY = 'raw_key_7d3e9a2c4b1f8e6d';
const { server, requests } = useMswServer();
const UNLISTED = `${COLLECTIONS_BASE_URL}/v1/collections/summary`;

const collections = (options: Partial<ConstructorParameters<typeof CollectionsClient>[0]> = {}) =>
  new CollectionsClient({ apiKey: KEY, baseUrl: COLLECTIONS_BASE_URL, logLevel: 'off', ...options });
const tap = () => new TapClient({ apiKey: KEY, baseUrl: TAP_BASE_URL, logLevel: 'off' });

describe('request(): raw access', () => {
  it('sends through the pipeline (auth, query encoded) and resolves with status, headers, parsed body, requestId', async () => {
    server.use(http.get(UNLISTED, () => HttpResponse.json({ total: 3 }, { headers: { 'x-request-id': 'req-raw-1', 'x-page': '1' } })));
    const response = await collections().request('GET', '/v1/collections/summary', {
      query: { from: '2026-11-01', all: true, page: 2, q: 'a b&c' },
    });
    expect(response).toMatchObject({ status: 200, body: { total: 3 }, requestId: 'req-raw-1' });
    expect(response.headers['x-page']).toBe('1');
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(requests[0]?.path).toBe('/v1/collections/summary');
    const url = new URL(`${COLLECTIONS_BASE_URL}/x?from=2026-11-01&all=true&page=2&q=a+b%26c`);
    expect(url.searchParams.get('q')).toBe('a b&c');
  });

  it('sends a body as JSON on the Tap client too, with its own authentication', async () => {
    server.use(
      http.put(`${TAP_BASE_URL}/v1/tap/partners/settings`, async ({ request }) =>
        HttpResponse.text(`got ${JSON.stringify(await request.json())}`),
      ),
    );
    const response = await tap().request('PUT', '/v1/tap/partners/settings', { body: { notify: true } });
    expect(response.body).toBe('got {"notify":true}');
    expect(requests[0]?.headers['x-api-key']).toBe(KEY);
    expect(requests[0]?.headers['content-type']).toBe('application/json');
  });

  it.for([
    ['an absolute URL', 'https://evil.test/v1'],
    ['a protocol-relative URL', '//evil.test/v1'],
    ['no leading slash', 'v1/collections'],
    ['a .. segment', '/v1/../admin'],
    ['an encoded .. segment', '/v1/%2E%2e/admin'],
    ['a . segment', '/v1/./x'],
    ['a backslash', '/v1\\..\\admin'],
    ['a query in the path', '/v1/x?y=1'],
    ['a fragment', '/v1/x#y'],
    ['a space', '/v1/x y'],
    ['a lone surrogate', '/v1/\ud800'],
  ])('refuses a path with %s (RequestValidationError on path, nothing sent)', async ([, path]) => {
    const error = await rejectionOf(collections().request('GET', path as string));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual(['path']);
    expect(requests).toHaveLength(0);
  });

  it.for([
    ['a GET with a body', 'GET', { body: {} }, 'options.body'],
    ['a body that is not JSON', 'POST', { body: { amount: 1n } }, 'options.body'],
    ['a query value that is an object', 'GET', { query: { a: {} } }, 'options.query.a'],
    ['an unknown method', 'HEAD', {}, 'method'],
  ] as const)('refuses %s', async ([, method, options, path]) => {
    const error = await rejectionOf(collections().request(method as never, '/v1/x', options as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    expect(requests).toHaveLength(0);
  });

  it('logs the path without its query (a query may carry personal data)', async () => {
    server.use(http.get(UNLISTED, () => HttpResponse.json({})));
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    await collections({ logger, logLevel: 'debug' }).request('GET', '/v1/collections/summary', { query: { phone: '260977123456' } });
    const logged = JSON.stringify(logger.debug.mock.calls);
    expect(logged).toContain('GET /v1/collections/summary');
    expect(logged).not.toContain('260977123456');
  });

  it('maps a non-2xx answer to its typed error, the key scrubbed from it', async () => {
    server.use(http.get(UNLISTED, () => HttpResponse.json({ code: 'E_NOT_FOUND', message: `no route for ${KEY}` }, { status: 404 })));
    const error = await rejectionOf(collections().request('GET', '/v1/collections/summary'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(JSON.stringify(error)).not.toContain(KEY);
  });

  it('retries a GET like every read', async () => {
    let calls = 0;
    server.use(
      http.get(UNLISTED, () =>
        ++calls === 1 ? new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } }) : HttpResponse.json({}),
      ),
    );
    expect((await collections().request('GET', '/v1/collections/summary')).status).toBe(200);
    expect(calls).toBe(2);
  });

  it.for([
    ['a 503', () => new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } }), InternalServerError],
    ['a 408', () => new HttpResponse(null, { status: 408 }), undefined],
    ['a dropped connection', () => HttpResponse.error(), ConnectionError],
  ] as const)('never resends a POST after %s (its outcome is unknown)', async ([, reply, errorClass]) => {
    let received = 0;
    server.use(
      http.post(UNLISTED, () => {
        received++;
        return reply();
      }),
    );
    const error = await rejectionOf(collections({ maxRetries: 3 }).request('POST', '/v1/collections/summary', { body: {} }));
    if (errorClass) expect(error).toBeInstanceOf(errorClass);
    expect(received).toBe(1);
  });

  it('never resends a DELETE that timed out', async () => {
    let received = 0;
    server.use(
      http.delete(UNLISTED, () => {
        received++;
        return new Promise<never>(() => undefined);
      }),
    );
    const error = await rejectionOf(collections({ maxRetries: 3, timeoutMs: 20 }).request('DELETE', '/v1/collections/summary'));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(received).toBe(1);
  });

  it('resends a POST answered 429 (it was not processed)', async () => {
    let calls = 0;
    server.use(
      http.post(UNLISTED, () =>
        ++calls === 1 ? HttpResponse.json({}, { status: 429, headers: { 'retry-after': '0' } }) : HttpResponse.json({ ok: 1 }),
      ),
    );
    expect((await collections().request('POST', '/v1/collections/summary', { body: {} })).body).toEqual({ ok: 1 });
    expect(calls).toBe(2);
  });

  it('gives up on a POST answered 429 every time with RateLimitError', async () => {
    let calls = 0;
    server.use(
      http.post(UNLISTED, () => {
        calls++;
        return HttpResponse.json({}, { status: 429, headers: { 'retry-after': '0' } });
      }),
    );
    expect(await rejectionOf(collections({ maxRetries: 1 }).request('POST', '/v1/collections/summary', { body: {} }))).toBeInstanceOf(
      RateLimitError,
    );
    expect(calls).toBe(2);
  });
});

describe('onResponse', () => {
  it('is called once per response, every attempt, errors included, without the key or a body', async () => {
    let calls = 0;
    server.use(
      http.get(UNLISTED, () =>
        ++calls === 1
          ? new HttpResponse(null, { status: 503, headers: { 'retry-after': '0', 'x-request-id': `req-${KEY}` } })
          : HttpResponse.json({ secret: KEY }, { headers: { 'x-request-id': 'req-2' } }),
      ),
    );
    const events: ResponseEvent[] = [];
    await collections({ onResponse: (event) => events.push(event) }).request('GET', '/v1/collections/summary', { query: { a: 1 } });
    expect(events.map(({ durationMs, ...rest }) => rest)).toEqual([
      { service: 'collections', method: 'GET', path: '/v1/collections/summary', status: 503, requestId: 'req-[redacted]', attempt: 1 },
      { service: 'collections', method: 'GET', path: '/v1/collections/summary', status: 200, requestId: 'req-2', attempt: 2 },
    ]);
    for (const event of events) expect(event.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it('counts the attempts of a create, its lookups included', async () => {
    server.use(
      http.post(
        `${COLLECTIONS_BASE_URL}/v1/collections/mobile-money`,
        () => new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } }),
      ),
      http.get(`${COLLECTIONS_BASE_URL}/v1/collections/check/:ref`, ({ params }) =>
        HttpResponse.json({ success: true, data: { referenceId: params.ref, statusText: 'pending' } }),
      ),
    );
    const events: ResponseEvent[] = [];
    await collections({ onResponse: (event) => events.push(event) }).initiate({
      productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b',
      phoneNumber: '0977123456',
      amount: 5,
    });
    expect(events.map((event) => [event.method, event.status, event.attempt])).toEqual([
      ['POST', 503, 1],
      ['GET', 200, 2],
    ]);
  });

  it('an exception it throws (or a rejection it returns) is logged and ignored', async () => {
    server.use(http.get(UNLISTED, () => HttpResponse.json({})));
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const client = collections({
      logger,
      logLevel: 'warn',
      onResponse: () => {
        throw new Error('metrics down');
      },
    });
    expect((await client.request('GET', '/v1/collections/summary')).status).toBe(200);
    const asyncClient = collections({
      logger,
      logLevel: 'warn',
      onResponse: (async () => {
        throw new Error('async metrics down');
      }) as never,
    });
    expect((await asyncClient.request('GET', '/v1/collections/summary')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(logger.warn.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining('the onResponse hook failed'),
      expect.stringContaining('the onResponse hook failed'),
    ]);
  });

  it('must be a function', () => {
    expect(() => collections({ onResponse: 'yes' as never })).toThrow(/onResponse must be a function/);
  });
});
