/**
 * CollectionsClient against a real HTTP server on 127.0.0.1: timeouts, aborts and the poll deadline
 * with real sockets, where a request that is cut must also close its connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CollectionStatus, CollectionsClient, PollTimeoutError, TimeoutError } from '../../src/index.js';
import { checkPath, REFERENCE_ID, rejectionOf, statusBody } from '../helpers/collections.js';
import { API_KEY } from '../helpers/fixtures.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Collects garbage a few times: a cut that relies on objects the SDK no longer holds (undici follows a
 * Request's signal through a WeakRef) stops working after this.
 */
async function collectGarbage(): Promise<void> {
  for (let round = 0; round < 3; round++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface Received {
  path: string;
  authorization: string | undefined;
  /** Set when the client went away before an answer was complete. */
  closedEarly: boolean;
}

let server: Server;
let baseUrl: string;
let sockets: Set<Socket>;
let received: Received[];
let handlers: Handler[];

/** Never answers. */
const hang: Handler = () => undefined;
const answer =
  (statusText: string): Handler =>
  (_request, response) => {
    const text = JSON.stringify(statusBody({ statusText }));
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  };

beforeEach(async () => {
  sockets = new Set();
  received = [];
  handlers = [];
  server = createServer((request, response) => {
    const entry: Received = { path: request.url ?? '', authorization: request.headers.authorization, closedEarly: false };
    received.push(entry);
    response.on('close', () => {
      if (!response.writableFinished) entry.closedEarly = true;
    });
    const handler = handlers[Math.min(received.length - 1, handlers.length - 1)] ?? hang;
    handler(request, response);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const client = () => new CollectionsClient({ apiKey: API_KEY, baseUrl, logLevel: 'off' });

/** Resolves once the server has received `count` requests. */
async function receivedCount(count: number): Promise<void> {
  for (let turn = 0; turn < 200 && received.length < count; turn++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(received).toHaveLength(count);
}

/** Whether request number `index` saw its connection closed by the client before it was answered (waits up to 0.5 s). */
async function closedByClient(index: number): Promise<boolean> {
  for (let turn = 0; turn < 100 && !received[index]?.closedEarly; turn++) await new Promise((resolve) => setTimeout(resolve, 5));
  return received[index]?.closedEarly ?? false;
}

describe('CollectionsClient over loopback', () => {
  it('answers checkStatus from a real server with the Bearer key', async () => {
    handlers = [answer('successful')];
    expect((await client().checkStatus(REFERENCE_ID)).statusText).toBe('successful');
    expect(received).toEqual([{ path: checkPath(), authorization: `Bearer ${API_KEY}`, closedEarly: false }]);
  });

  it('a per-attempt timeoutMs ends checkStatus with TimeoutError and closes the connection', async () => {
    handlers = [hang];
    const started = performance.now();
    const error = await rejectionOf(client().checkStatus(REFERENCE_ID, { timeoutMs: 100, maxRetries: 0 }));
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(100);
    expect(elapsed).toBeGreaterThanOrEqual(95);
    expect(elapsed).toBeLessThan(800);
    expect(received).toHaveLength(1);
    expect(await closedByClient(0)).toBe(true);
  });

  /** Headers and the start of a body, then nothing. */
  const stallBody: Handler = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"success":true,"data":{');
  };

  it('the timeout covers a body that stalls after the headers, even after garbage collection', async () => {
    handlers = [stallBody];
    const started = performance.now();
    const call = rejectionOf(client().checkStatus(REFERENCE_ID, { timeoutMs: 300, maxRetries: 0 }));
    await receivedCount(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await collectGarbage();
    const error = await call;
    expect(error).toBeInstanceOf(TimeoutError);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await closedByClient(0)).toBe(true);
  });

  it('an abort cuts a body that stalls after the headers, even after garbage collection', async () => {
    handlers = [stallBody];
    const controller = new AbortController();
    const call = rejectionOf(client().checkStatus(REFERENCE_ID, { signal: controller.signal }));
    await receivedCount(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await collectGarbage();
    const reason = new Error('operator cancelled');
    controller.abort(reason);
    expect(await call).toBe(reason);
    expect(await closedByClient(0)).toBe(true);
  });

  it('an abort mid-request rejects promptly with the reason and closes the connection', async () => {
    handlers = [hang];
    const controller = new AbortController();
    const call = rejectionOf(client().checkStatus(REFERENCE_ID, { signal: controller.signal }));
    await receivedCount(1);
    const reason = new Error('operator cancelled');
    const started = performance.now();
    controller.abort(reason);
    expect(await call).toBe(reason);
    expect(performance.now() - started).toBeLessThan(200);
    expect(await closedByClient(0)).toBe(true);
  });

  it("pollUntilSettled's deadline cuts a real request in flight", async () => {
    handlers = [answer('pending'), hang];
    const started = performance.now();
    const error = await rejectionOf(client().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 10, intervalMs: 10, maxWaitMs: 250 }));
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect((error as PollTimeoutError<CollectionStatus>).lastStatus?.statusText).toBe('pending');
    expect(elapsed).toBeGreaterThanOrEqual(245);
    expect(elapsed).toBeLessThan(900);
    expect(received).toHaveLength(2);
    expect(await closedByClient(1)).toBe(true);
    expect(received[0]?.closedEarly).toBe(false);
  });

  it("pollUntilSettled's deadline cuts a stalled body, even after garbage collection", async () => {
    handlers = [answer('pending'), stallBody];
    const started = performance.now();
    const poll = rejectionOf(client().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 10, maxWaitMs: 400 }));
    await receivedCount(2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await collectGarbage();
    const error = await poll;
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await closedByClient(1)).toBe(true);
  });

  it('pollUntilSettled rides out a stalled request cut by timeoutMs, then settles', async () => {
    handlers = [hang, answer('successful')];
    const settled = await client().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 10, intervalMs: 10, timeoutMs: 100, maxWaitMs: 2_000 });
    expect(settled.statusText).toBe('successful');
    expect(received.map((entry) => entry.path)).toEqual([checkPath(), checkPath()]);
  });
});
