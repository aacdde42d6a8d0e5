/** The transport against a real HTTP server on loopback: timeouts, aborts, dropped and refused connections, redirects, size limits. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  type CustomerQueryInput,
  RedirectError,
  ResponseValidationError,
  TapClient,
  type TapClientOptions,
  TapCollectionsError,
  TimeoutError,
} from '../../src/index.js';
import { customerQuery, customerQueryInput } from '../helpers/fixtures.js';
import { closedPort, type LoopbackServer, sendJson, startLoopbackServer } from '../helpers/http-server.js';
import { QUERIES_PATH, rejectionOf } from '../helpers/tap.js';

const KEY = 'tap_loopback_key_4d2e9f';
let server: LoopbackServer;
let other: LoopbackServer | undefined;

beforeEach(async () => {
  server = await startLoopbackServer();
});

afterEach(async () => {
  await server.close();
  await other?.close();
  other = undefined;
});

function client(options: TapClientOptions = {}) {
  return new TapClient({ apiKey: KEY, baseUrl: server.url, logLevel: 'off', ...options });
}

const never = () => undefined;
const listBody = (queries: unknown[] = []) => ({ success: true, data: queries });

describe('per-attempt timeout', () => {
  it('rejects with TimeoutError after timeoutMs when the server never answers', async () => {
    server.handle(never);
    const started = performance.now();
    // 400 ms, not less: on a loaded machine a shorter limit can end the attempt before the request arrives.
    const error = await rejectionOf(client({ timeoutMs: 400, maxRetries: 0 }).listCustomerQueries());
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect((error as TimeoutError).timeoutMs).toBe(400);
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(3000);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a timed-out attempt: with maxRetries 1 the server sees 2 requests', async () => {
    server.handle(never);
    const error = await rejectionOf(client({ timeoutMs: 100, maxRetries: 1 }).listCustomerQueries());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(2);
  });

  it('covers the body: headers sent, then the body stalls → TimeoutError', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"success":true,"data":[');
    });
    const started = performance.now();
    const error = await rejectionOf(client({ timeoutMs: 150, maxRetries: 0 }).listCustomerQueries());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(server.requests).toHaveLength(1);
  });

  it('a per-call timeoutMs overrides the client one', async () => {
    server.handle(never);
    const error = await rejectionOf(client({ timeoutMs: 30_000, maxRetries: 0 }).listCustomerQueries({ timeoutMs: 80 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(80);
  });
});

describe('abort', () => {
  it("rejects with the signal's reason, promptly, mid-request", async () => {
    const controller = new AbortController();
    const reason = new Error('till closed');
    // Aborted once the request is at the server, which never answers (a fixed delay could fire before it arrives).
    server.handle(() => setTimeout(() => controller.abort(reason), 10));
    const started = performance.now();
    const error = await rejectionOf(client({ timeoutMs: 5000 }).listCustomerQueries({ signal: controller.signal }));
    expect(error).toBe(reason);
    expect(error).not.toBeInstanceOf(TapCollectionsError);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects with an AbortError for a plain abort()', async () => {
    const controller = new AbortController();
    // Aborted once the request is at the server (a fixed delay could fire before it arrives on a loaded machine).
    server.handle(() => setTimeout(() => controller.abort(), 10));
    const started = performance.now();
    const error = await rejectionOf(client({ timeoutMs: 5000 }).submitCustomerQuery(customerQueryInput(), { signal: controller.signal }));
    expect((error as Error).name).toBe('AbortError');
    expect(error).not.toBeInstanceOf(TapCollectionsError);
    expect(performance.now() - started).toBeLessThan(1000);
    // An abort is the caller's decision: no reconciling lookup follows.
    expect(server.requests.map((request) => request.method)).toEqual(['POST']);
  });

  it('aborts while waiting between retries', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    let abortedAt = Number.POSITIVE_INFINITY;
    // Backoff before retry 1 is at least 250 ms: an abort 20 ms after the 503 lands during the pause.
    server.handle((_request, response) => {
      sendJson(response, 503, { success: false });
      setTimeout(() => {
        abortedAt = performance.now();
        controller.abort(reason);
      }, 20);
    });
    const error = await rejectionOf(client({ maxRetries: 2 }).listCustomerQueries({ signal: controller.signal }));
    expect(error).toBe(reason);
    expect(performance.now() - abortedAt).toBeLessThan(200);
    expect(server.requests).toHaveLength(1);
  });

  it('rejects at once with an already-aborted signal, sending nothing', async () => {
    server.handle((_request, response) => sendJson(response, 200, listBody()));
    const reason = new Error('already cancelled');
    const error = await rejectionOf(client().listCustomerQueries({ signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
    const submitError = await rejectionOf(client().submitCustomerQuery(customerQueryInput(), { signal: AbortSignal.abort() }));
    expect((submitError as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });
});

describe('connection failures', () => {
  it('maps a dropped connection to ConnectionError with its cause', async () => {
    server.handle((request) => request.socket.destroy());
    const error = await rejectionOf(client({ maxRetries: 0 }).listCustomerQueries());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect((error as ConnectionError).cause).toBeDefined();
    expect((error as ConnectionError).cause).toBeInstanceOf(Error);
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('maps a connection dropped mid-body to ConnectionError', async () => {
    server.handle((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      response.write('{"success":true,', () => setTimeout(() => request.socket.destroy(), 10));
    });
    const error = await rejectionOf(client({ maxRetries: 0 }).listCustomerQueries());
    expect(error).toBeInstanceOf(ConnectionError);
  });

  it('maps a refused connection to ConnectionError that says nothing was sent', async () => {
    const port = await closedPort();
    const refused = new TapClient({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, logLevel: 'off', maxRetries: 0 });
    const error = await rejectionOf(refused.listCustomerQueries());
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(false);
    expect((error as ConnectionError).cause).toBeDefined();
  });
});

describe('retries', () => {
  it('retries a 503 with Retry-After: 0 and resolves with the 201', async () => {
    let attempts = 0;
    server.handle((_request, response, body) => {
      if (++attempts === 1)
        return sendJson(response, 503, { success: false, message: 'busy', code: 503, error: 'unavailable' }, { 'retry-after': '0' });
      sendJson(response, 201, { success: true, data: customerQuery(JSON.parse(body) as CustomerQueryInput) });
    });
    const query = await client({ maxRetries: 1 }).submitCustomerQuery(customerQueryInput());
    expect(query.transaction.referenceId).toBe(customerQueryInput().referenceId);
    expect(server.requests).toHaveLength(2);
    expect(server.requests.map((request) => request.method)).toEqual(['POST', 'POST']);
    expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
    expect(server.requests.map((request) => request.headers['x-api-key'])).toEqual([KEY, KEY]);
  });
});

describe('redirects', () => {
  it('refuses a redirect to another origin, sending nothing there', async () => {
    other = await startLoopbackServer();
    const target = other;
    target.handle((_request, response) => sendJson(response, 200, listBody()));
    server.handle((_request, response) => {
      response.writeHead(307, { location: `${target.url}${QUERIES_PATH}` }).end();
    });
    const error = await rejectionOf(client().listCustomerQueries());
    expect(error).toBeInstanceOf(RedirectError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect((error as RedirectError).status).toBe(307);
    expect((error as RedirectError).location).toBe(target.url);
    expect(target.requests).toHaveLength(0);
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a cross-origin redirect of a POST, sending nothing there', async () => {
    other = await startLoopbackServer();
    const target = other;
    server.handle((_request, response) => {
      response.writeHead(308, { location: `${target.url}/steal` }).end();
    });
    const error = await rejectionOf(client().submitCustomerQuery(customerQueryInput()));
    expect(error).toBeInstanceOf(RedirectError);
    expect(target.requests).toHaveLength(0);
  });

  it('follows a same-origin 307, keeping the method, body and key', async () => {
    server.handle((request, response, body) => {
      if (request.url === QUERIES_PATH) {
        response.writeHead(307, { location: '/v1/tap/partners/customer-queries-moved' }).end();
        return;
      }
      sendJson(response, 201, { success: true, data: customerQuery(JSON.parse(body) as CustomerQueryInput) });
    });
    const query = await client().submitCustomerQuery(customerQueryInput());
    expect(query.transaction.merchantId).toBe('merchant-001');
    expect(server.requests.map((request) => [request.method, request.path])).toEqual([
      ['POST', QUERIES_PATH],
      ['POST', '/v1/tap/partners/customer-queries-moved'],
    ]);
    expect(server.requests[1]?.body).toBe(server.requests[0]?.body);
    expect(server.requests[1]?.headers['x-api-key']).toBe(KEY);
  });

  it('follows a same-origin 302 for a GET', async () => {
    server.handle((request, response) => {
      if (request.url === QUERIES_PATH) {
        response.writeHead(302, { location: '/elsewhere' }).end();
        return;
      }
      sendJson(response, 200, listBody());
    });
    await expect(client().listCustomerQueries()).resolves.toEqual([]);
    expect(server.requests.map((request) => request.path)).toEqual([QUERIES_PATH, '/elsewhere']);
  });
});

describe('response size', () => {
  const bigBody = () => JSON.stringify({ success: true, data: [], padding: 'x'.repeat(10 * 1024) });

  it('refuses a 200 body larger than maxResponseBytes (declared length)', async () => {
    server.handle((_request, response) => {
      const text = bigBody();
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
    const error = await rejectionOf(client({ maxResponseBytes: 2048 }).listCustomerQueries());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).status).toBe(200);
    expect((error as Error).message).toContain('maxResponseBytes');
  });

  it('refuses a streamed 200 body larger than maxResponseBytes (no length)', async () => {
    server.handle((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const text = bigBody();
      response.write(text.slice(0, 1000));
      response.end(text.slice(1000));
    });
    const error = await rejectionOf(client({ maxResponseBytes: 2048 }).listCustomerQueries());
    expect(error).toBeInstanceOf(ResponseValidationError);
  });

  it('reads a body under the limit', async () => {
    server.handle((_request, response) => sendJson(response, 200, { ...listBody(), padding: 'x'.repeat(1000) }));
    await expect(client({ maxResponseBytes: 2048 }).listCustomerQueries()).resolves.toEqual([]);
  });
});

describe('the wire', () => {
  it('sends x-api-key, accept and a user-agent, and no authorization', async () => {
    server.handle((_request, response) => sendJson(response, 200, listBody()));
    await client({ headers: { 'x-trace-id': 'trace-1' } }).listCustomerQueries();
    const headers = server.requests[0]?.headers;
    expect(headers?.['x-api-key']).toBe(KEY);
    expect(headers?.authorization).toBeUndefined();
    expect(headers?.accept).toBe('application/json');
    expect(headers?.['user-agent']).toMatch(/^tap-collections-sdk\/\d+\.\d+\.\d+/);
    expect(headers?.['x-trace-id']).toBe('trace-1');
  });
});
