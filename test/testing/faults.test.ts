/** Injected faults on the loopback face: latency, error statuses with each body kind, 429, dropped connections. */
import { describe, expect, it } from 'vitest';
import { createSimulator, TAP_API_KEYS } from '../../src/testing/index.js';
import { collectionInput, queryInput, useLoopbackSimulator } from './harness.js';

const sim = useLoopbackSimulator();
const { tap, collections } = sim;
const simulator = () => sim.running.simulator;

describe('latency', () => {
  it('delays the answer without changing it', async () => {
    simulator().injectFault({ route: 'GET /health', latencyMs: 40 });
    const started = performance.now();
    const answer = await collections.health();
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ok' });
  });

  it('combines with a status', async () => {
    simulator().injectFault({ route: 'GET /health', latencyMs: 20, status: 504, times: 1 });
    const started = performance.now();
    expect((await collections.health()).status).toBe(504);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
  });
});

describe('error statuses', () => {
  it('answers a 5xx in the Tap envelope, processing nothing', async () => {
    simulator().injectFault({ route: 'POST /v1/tap/partners/customer-queries', status: 503 });
    const answer = await tap.submit(queryInput());
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ success: false, message: expect.any(String), code: 503, error: 'server/unavailable-error' });
    expect(simulator().customerQueries()).toEqual([]);
  });

  it('answers a 5xx in the Collections JSON body', async () => {
    simulator().injectFault({ route: 'POST /v1/collections/mobile-money', status: 500 });
    const answer = await collections.initiate(collectionInput());
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({
      success: false,
      data: null,
      code: 'E_INTERNAL_SERVER_ERROR',
      message: expect.any(String),
      requestId: expect.any(String),
    });
    expect(simulator().collections()).toEqual([]);
  });

  it('answers an HTML proxy page', async () => {
    simulator().injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 502, body: 'html' });
    const answer = await collections.check(globalThis.crypto.randomUUID());
    expect(answer.status).toBe(502);
    expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
    expect(answer.text).toMatch(/^<!DOCTYPE html>[\s\S]*502 Bad Gateway/);
  });

  it('answers an empty body', async () => {
    simulator().injectFault({ route: 'GET /v1/tap/partners/customer-queries', status: 500, body: 'empty' });
    const answer = await tap.list();
    expect(answer.status).toBe(500);
    expect(answer.text).toBe('');
    expect(answer.headers.get('content-type')).toBeNull();
  });

  it('answers 429 with Retry-After in either envelope', async () => {
    simulator().injectFault({ route: '*', status: 429, retryAfter: 2 });
    const fromTap = await tap.list();
    expect(fromTap.status).toBe(429);
    expect(fromTap.headers.get('retry-after')).toBe('2');
    expect(fromTap.body).toMatchObject({ success: false, code: 429, error: 'rate-limit/exceeded-error' });
    const fromCollections = await collections.health();
    expect(fromCollections.headers.get('retry-after')).toBe('2');
    expect(fromCollections.body).toMatchObject({ success: false, code: 'E_RATE_LIMIT_EXCEEDED' });
  });

  it('passes an HTTP-date Retry-After through as given', async () => {
    const date = 'Wed, 21 Oct 2026 07:28:00 GMT';
    simulator().injectFault({ route: '/health', status: 503, retryAfter: date });
    expect((await collections.health()).headers.get('retry-after')).toBe(date);
  });
});

describe('dropped connections', () => {
  it('before processing: the client gets no answer and nothing is stored', async () => {
    simulator().injectFault({ route: 'POST /v1/tap/partners/customer-queries', drop: 'before', times: 1 });
    const input = queryInput();
    await expect(tap.submit(input)).rejects.toThrow(TypeError);
    expect(simulator().customerQueries()).toEqual([]);
    expect(simulator().requests.map((request) => request.outcome)).toEqual(['dropped']);
    expect((await tap.submit(input)).status).toBe(201);
  });

  it('after commit (Tap): the query exists although the client saw no answer', async () => {
    simulator().injectFault({ route: 'POST /v1/tap/partners/customer-queries', drop: 'after', times: 1 });
    const input = queryInput();
    await expect(tap.submit(input)).rejects.toThrow(TypeError);
    expect(simulator().customerQueries()).toHaveLength(1);
    expect((await tap.list()).body.data[0].transaction.referenceId).toBe(input.referenceId);
    expect((await tap.submit(input)).status).toBe(409);
  });

  it('after commit (Collections): the collection can be found by its referenceId', async () => {
    simulator().injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'after', times: 1 });
    const input = collectionInput();
    await expect(collections.initiate(input)).rejects.toThrow(TypeError);
    const status = await collections.check(input.referenceId as string);
    expect(status.status).toBe(200);
    expect(status.body.data.statusText).toBe('pending');
  });
});

describe('fault selection and lifetime', () => {
  it('applies a count-limited fault that many times, then removes it', async () => {
    const fault = simulator().injectFault({ route: 'GET /health', status: 503, times: 2 });
    expect((await collections.health()).status).toBe(503);
    expect(fault.remaining).toBe(1);
    expect((await collections.health()).status).toBe(503);
    expect((await collections.health()).status).toBe(200);
    expect(fault.hits).toBe(2);
  });

  it('stops applying a removed fault, and clearFaults removes all', async () => {
    const fault = simulator().injectFault({ route: 'GET /health', status: 500 });
    expect((await collections.health()).status).toBe(500);
    fault.remove();
    expect((await collections.health()).status).toBe(200);
    simulator().injectFault({ route: '*', status: 500 });
    simulator().clearFaults();
    expect((await collections.health()).status).toBe(200);
  });

  it('matches method, path pattern and service', async () => {
    simulator().injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 503 });
    simulator().injectFault({ route: '* /v1/tap/*', service: 'collections', status: 500 });
    expect((await collections.initiate(collectionInput())).status).toBe(202);
    expect((await collections.check(globalThis.crypto.randomUUID())).status).toBe(503);
    expect((await collections.get(globalThis.crypto.randomUUID())).status).toBe(404);
    expect((await tap.list()).status).toBe(200);
  });

  it('applies the first matching fault in injection order', async () => {
    simulator().injectFault({ route: 'GET /health', status: 502, times: 1 });
    simulator().injectFault({ route: '*', status: 503, times: 1 });
    expect((await collections.health()).status).toBe(502);
    expect((await collections.health()).status).toBe(503);
    expect((await collections.health()).status).toBe(200);
  });

  it('marks faulted requests in the record', async () => {
    simulator().injectFault({ route: '/health', status: 500, times: 1 });
    await collections.health();
    await collections.health();
    expect(simulator().requests.map((request) => [request.outcome, request.faulted])).toEqual([
      [500, true],
      [200, false],
    ]);
  });

  it.each([
    ['an empty route', { route: '' }],
    ['a route without a path', { route: 'GET health', status: 500 }],
    ['no effect', { route: '*' }],
    ['status with drop', { route: '*', status: 500, drop: 'before' }],
    ['a status outside 400–599', { route: '*', status: 302 }],
    ['times 0', { route: '*', status: 500, times: 0 }],
    ['negative latency', { route: '*', latencyMs: -1 }],
    ['retryAfter without status', { route: '*', drop: 'after', retryAfter: 1 }],
  ] as const)('rejects %s', (_case, spec) => {
    expect(() => createSimulator().injectFault(spec as never)).toThrow(TypeError);
  });

  it('is cleared by reset', async () => {
    simulator().injectFault({ route: '*', status: 500 });
    simulator().reset();
    expect((await tap.list(TAP_API_KEYS.primary)).status).toBe(200);
  });
});
