/** The two faces over one state: msw handlers and the loopback server behave alike; inspection, reset, 413, close. */
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  COLLECTIONS_API_KEYS,
  createSimulator,
  createSimulatorHandlers,
  MAX_REQUEST_BODY_BYTES,
  PARTNERS,
  type RunningSimulator,
  startSimulator,
  TAP_API_KEYS,
} from '../../src/testing/index.js';
import { call, collectionInput, collectionsApi, queryInput, tapApi } from './harness.js';

const MSW_TAP = 'https://tap.test';
const MSW_COLLECTIONS = 'https://gateway.test/api';

const simulator = createSimulator();
const mswServer = setupServer(
  ...(await createSimulatorHandlers(simulator, { tapBaseUrl: MSW_TAP, collectionsBaseUrl: `${MSW_COLLECTIONS}/` })),
  http.all('https://gateway.test/*', () => HttpResponse.text('fallback', { status: 418 })),
);
let running: RunningSimulator;

// Loopback fetches go through the same global fetch msw intercepts: let only those pass.
beforeAll(async () => {
  mswServer.listen({
    onUnhandledFrame: ({ frame, defaults }) => {
      const url = (frame as { data?: { request?: Request } }).data?.request?.url ?? '';
      if (!url.startsWith('http://127.0.0.1:')) defaults.error();
    },
  });
  running = await startSimulator({ simulator });
});
afterEach(() => simulator.reset());
afterAll(async () => {
  mswServer.close();
  await running.close();
});

const viaMsw = { tap: tapApi(() => MSW_TAP), collections: collectionsApi(() => MSW_COLLECTIONS) };
const viaLoopback = { tap: tapApi(() => running.tapBaseUrl), collections: collectionsApi(() => running.collectionsBaseUrl) };

describe('msw handlers', () => {
  it('answer the Tap API like the loopback server does, over the same state', async () => {
    const input = queryInput();
    const created = await viaMsw.tap.submit(input);
    expect(created.status).toBe(201);
    expect(created.headers.get('x-request-id')).toBeTruthy();
    expect((await viaLoopback.tap.list()).body.data).toEqual([created.body.data]);
    const conflict = await viaLoopback.tap.submit(input);
    const conflictMsw = await viaMsw.tap.submit(input);
    expect(conflictMsw.status).toBe(409);
    expect(conflictMsw.body).toEqual(conflict.body);
  });

  it('answer the Collections API under a base path, with the same 422 body', async () => {
    const bad = collectionInput({ amount: 0 });
    const fromMsw = await viaMsw.collections.initiate(bad);
    const fromLoopback = await viaLoopback.collections.initiate(bad);
    expect(fromMsw.status).toBe(422);
    expect({ ...fromMsw.body, requestId: '' }).toEqual({ ...fromLoopback.body, requestId: '' });
    expect(fromMsw.body.instance).toBe('/v1/collections/mobile-money');
    expect((await viaMsw.collections.health()).body).toEqual({ status: 'ok' });
  });

  it('settle a collection created through the other face', async () => {
    const input = collectionInput();
    expect((await viaLoopback.collections.initiate(input)).status).toBe(202);
    simulator.settle(input.referenceId as string, 'successful');
    expect((await viaMsw.collections.check(input.referenceId as string)).body.data.statusText).toBe('successful');
  });

  it('leave requests outside the base URLs to other handlers', async () => {
    const answer = await call('https://gateway.test/elsewhere');
    expect(answer.status).toBe(418);
    expect(simulator.requests).toEqual([]);
  });

  it('drop a connection as a network error, before or after commit', async () => {
    simulator.injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'before', times: 1 });
    await expect(viaMsw.collections.initiate(collectionInput())).rejects.toThrow(TypeError);
    expect(simulator.collections()).toEqual([]);
    simulator.injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'after', times: 1 });
    const input = collectionInput();
    await expect(viaMsw.collections.initiate(input)).rejects.toThrow(TypeError);
    expect(simulator.collections().map((record) => record.referenceId)).toEqual([input.referenceId]);
  });

  it('apply status faults with each body kind and Retry-After', async () => {
    simulator.injectFault({ route: '*', status: 429, retryAfter: 1, times: 1 });
    simulator.injectFault({ route: '*', status: 502, body: 'html', times: 1 });
    simulator.injectFault({ route: '*', status: 503, body: 'empty', times: 1 });
    const limited = await viaMsw.tap.list();
    expect([limited.status, limited.headers.get('retry-after'), limited.body.error]).toEqual([429, '1', 'rate-limit/exceeded-error']);
    const html = await viaMsw.tap.list();
    expect([html.status, html.headers.get('content-type')]).toEqual([502, 'text/html; charset=utf-8']);
    const empty = await viaMsw.tap.list();
    expect([empty.status, empty.text]).toEqual([503, '']);
  });

  it('refuse the same base URL for both services', async () => {
    await expect(createSimulatorHandlers(simulator, { tapBaseUrl: MSW_TAP, collectionsBaseUrl: `${MSW_TAP}/` })).rejects.toThrow(TypeError);
    await expect(createSimulatorHandlers(simulator, { tapBaseUrl: 'tap.test', collectionsBaseUrl: MSW_COLLECTIONS })).rejects.toThrow(
      TypeError,
    );
  });
});

describe('inspection', () => {
  it('records method, path, query, headers and body, with every key redacted', async () => {
    await viaLoopback.tap.submit(queryInput({ merchantName: `pasted ${TAP_API_KEYS.primary}` }));
    await call(`${running.collectionsBaseUrl}/v1/collections/check/${globalThis.crypto.randomUUID()}?verbose=1`, {
      headers: viaLoopback.collections.headers(COLLECTIONS_API_KEYS.primary),
    });
    const [submitted, checked] = simulator.requests;
    expect(submitted).toMatchObject({
      service: 'tap',
      method: 'POST',
      path: '/v1/tap/partners/customer-queries',
      query: '',
      partnerId: PARTNERS.primary.partnerId,
      outcome: 201,
      faulted: false,
      body: { merchantName: 'pasted [REDACTED]' },
    });
    expect(submitted?.headers['x-api-key']).toBe('[REDACTED]');
    expect(checked).toMatchObject({ service: 'collections', method: 'GET', query: '?verbose=1', outcome: 404 });
    expect(checked?.headers.authorization).toBe('Bearer [REDACTED]');
    const dump = JSON.stringify(simulator.requests);
    expect(dump).not.toContain(TAP_API_KEYS.primary);
    expect(dump).not.toContain(COLLECTIONS_API_KEYS.primary);
  });

  it('hands out copies that cannot change the state', async () => {
    await viaLoopback.tap.submit(queryInput());
    const [query] = simulator.customerQueries();
    if (query) query.customer.firstName = 'Changed';
    expect(simulator.customerQueries()[0]?.customer.firstName).toBe('Mwila');
    expect(simulator.customerQueries(PARTNERS.second.partnerId)).toEqual([]);
  });

  it('reports each outcome to onRequest, redacted', async () => {
    const seen: unknown[] = [];
    const observed = await startSimulator({ simulator: createSimulator({ onRequest: (request) => seen.push(request) }) });
    try {
      await tapApi(() => observed.tapBaseUrl).list();
      expect(seen).toEqual([expect.objectContaining({ outcome: 200, headers: expect.objectContaining({ 'x-api-key': '[REDACTED]' }) })]);
    } finally {
      await observed.close();
    }
  });
});

describe('reset', () => {
  it('forgets queries, collections, requests and faults, and keeps the fixtures', async () => {
    const input = queryInput();
    await viaLoopback.tap.submit(input);
    await viaLoopback.collections.initiate(collectionInput());
    simulator.injectFault({ route: '/health', status: 500 });
    simulator.reset();
    expect([simulator.customerQueries(), simulator.collections(), simulator.requests]).toEqual([[], [], []]);
    expect((await viaLoopback.collections.health()).status).toBe(200);
    expect((await viaLoopback.tap.submit(input)).status).toBe(201);
  });
});

describe('request body limit', () => {
  const huge = JSON.stringify(queryInput({ merchantName: 'x'.repeat(MAX_REQUEST_BODY_BYTES) }));

  it('answers 413 in the service envelope on both faces, storing nothing', async () => {
    const fromLoopback = await viaLoopback.tap.submit(huge);
    expect(fromLoopback.status).toBe(413);
    expect(fromLoopback.body).toMatchObject({ success: false, code: 413, error: 'request/payload-too-large-error' });
    const fromMsw = await viaMsw.collections.initiate(huge);
    expect(fromMsw.status).toBe(413);
    expect(fromMsw.body).toMatchObject({ success: false, data: null, code: 'E_PAYLOAD_TOO_LARGE' });
    expect(simulator.customerQueries()).toEqual([]);
    expect(simulator.requests.map((request) => [request.outcome, request.body])).toEqual([
      [413, undefined],
      [413, undefined],
    ]);
  });

  it('accepts a body of exactly the limit', async () => {
    const body = JSON.stringify(queryInput());
    const padded = body + ' '.repeat(MAX_REQUEST_BODY_BYTES - Buffer.byteLength(body));
    expect((await viaLoopback.tap.submit(padded)).status).toBe(201);
  });
});

describe('loopback server', () => {
  it('answers 404 outside the /tap and /collections base paths', async () => {
    const answer = await call(`${running.url}/v1/tap/partners/customer-queries`);
    expect(answer.status).toBe(404);
    expect(answer.body.message).toMatch(/\/tap and \/collections/);
  });

  it('close() resolves promptly with a request in flight, and the port stops answering', async () => {
    const local = await startSimulator();
    local.simulator.injectFault({ route: '*', latencyMs: 10_000 });
    const inFlight = call(`${local.collectionsBaseUrl}/health`, {
      headers: { authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    await local.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(inFlight).rejects.toThrow(TypeError);
    await expect(fetch(`${local.url}/collections/health`)).rejects.toThrow(TypeError);
    await local.close();
  });
});
