/**
 * Every wait has an end: a real loopback server answers the Tap list with its headers at once, then a byte every
 * 50 ms, forever. Every read makes progress (a byte comes long before `timeoutMs`), so only a bound on the whole
 * read ends it: a create's reconcile and `verify()` within the attempt's `timeoutMs`, each query of
 * `customerQueries()` within `timeoutMs` of waiting for it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TapClient, TimeoutError, UnknownOutcomeError } from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';
import { type LoopbackServer, startLoopbackServer } from '../helpers/http-server.js';
import { rejectionOf } from '../helpers/tap.js';

const TIMEOUT_MS = 200;
const TRICKLE_MS = 50;

let server: LoopbackServer;
beforeEach(async () => {
  server = await startLoopbackServer();
  server.handle((request, response) => {
    // The push reaches the service, its answer is lost: the outcome is unknown and the create reconciles.
    if (request.method === 'POST') return void request.socket.destroy();
    response.writeHead(200, { 'content-type': 'application/json' });
    const text = '{"data":[{"id":"q-1","transaction":{"referenceId":"' + 'x'.repeat(10_000);
    let at = 0;
    const timer = setInterval(() => {
      response.write(text[at % text.length] ?? 'x');
      at += 1;
    }, TRICKLE_MS);
    response.on('close', () => clearInterval(timer));
  });
});
afterEach(() => server.close());

const client = () => new TapClient({ apiKey: API_KEY, baseUrl: server.url, logLevel: 'off', timeoutMs: TIMEOUT_MS, maxRetries: 1 });
const INPUT = { merchantId: 'M-1', merchantName: 'Shop', terminalId: 'T-1', amount: 5, tagId: 'TAG-0001' };

/** Each attempt ends within its timeoutMs; with one retry and its backoff, the whole call well within this. */
const CALL_BOUND_MS = 4 * TIMEOUT_MS + 2000;

async function timed<T>(work: Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await rejectionOf(work);
  return { error, ms: Date.now() - started };
}

describe('a list trickled a byte every 50 ms', () => {
  it('a create whose reconcile reads it rejects with UnknownOutcomeError within its time limits', async () => {
    const { error, ms } = await timed(client().submitCustomerQuery(INPUT));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(ms).toBeLessThan(CALL_BOUND_MS);
    expect(server.requests.some((request) => request.method === 'GET')).toBe(true);
  });

  it('verify() rejects with TimeoutError within its time limits', async () => {
    const { error, ms } = await timed(client().verify());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(ms).toBeLessThan(CALL_BOUND_MS);
  });

  it('customerQueries() ends with TimeoutError when a query does not arrive within timeoutMs of waiting for it', async () => {
    const read = async () => {
      for await (const _query of client().customerQueries()) throw new Error('no query is ever complete');
    };
    const { error, ms } = await timed(read());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(ms).toBeLessThan(CALL_BOUND_MS);
  });
});
