/**
 * Only the service's own 404 counts (docs/internals/assumptions-rationale.md, "Only the service's own 404"): a wrong Collections base URL
 * (the server root, a proxy's page, the Tap API, a wrong path prefix on the right host) answers 404 for every status
 * check. Such a 404 never closes a payment the service holds: `recover()`, `checkStatus` and the settlement worker
 * leave the record open and say the base URL is wrong. Real sockets: the simulator (holding the push `pending`) and
 * a loopback server for the wrong URLs. Only the monotonic clock is faked (`watchFor`).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, ConfigurationError, MemoryJournal, NotFoundError, type PaymentRecord } from '../../src/index.js';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { useFakeMonotonicClock, useRunningMonotonicClock, watchFor } from '../helpers/collections.js';
import { type LoopbackServer, startLoopbackServer } from '../helpers/http-server.js';
import { openRecord } from '../worker/journal-records.js';

let simulator: RunningSimulator;
let wrong: LoopbackServer;

beforeAll(async () => {
  simulator = await startSimulator();
  wrong = await startLoopbackServer();
  wrong.handle((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path.startsWith('/root/')) {
      // A web server at the host's root: its own /health is fine, every other path a bare 404.
      if (path === '/root/health') response.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      else response.writeHead(404).end();
    } else if (path.startsWith('/proxy/')) {
      response.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>404 Not Found</h1><p>nginx</p></body></html>');
    } else {
      // The right host under a wrong path prefix: the service's own envelope, but for a route, /health included.
      response
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ success: false, data: null, code: 'E_NOT_FOUND', message: 'Not found', requestId: 'req-1' }));
    }
  });
});
afterAll(async () => {
  await simulator?.close();
  await wrong?.close();
});
beforeEach(() => useFakeMonotonicClock());
afterEach(() => vi.useRealTimers());

const WRONG_BASE_URLS: [string, () => string][] = [
  ['the server root (a bare 404)', () => `${wrong.url}/root`],
  ["a proxy's HTML 404 page", () => `${wrong.url}/proxy`],
  ["the Tap API (its own envelope: a numeric code, an 'error' string)", () => simulator.tapBaseUrl],
  ['a wrong path prefix on the right host (the envelope, but /health is 404 too)', () => `${wrong.url}/prefix`],
];

interface Logged {
  readonly level: string;
  readonly message: string;
}

function client(baseUrl: string, journal?: MemoryJournal, logged: Logged[] = []): CollectionsClient {
  const line = (level: string) => (message: string) => void logged.push({ level, message });
  return new CollectionsClient({
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl,
    logger: { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') },
    logLevel: 'warn',
    ...(journal === undefined ? {} : { journal }),
  });
}

/**
 * A push the service holds `pending`, journaled `unknown` (its create timed out) 15 s ago by the journal's clock,
 * with a 1 s window: old enough for a verdict by the journal's clock (window + 10 s grace).
 */
async function pushHeldPending(): Promise<{ journal: MemoryJournal; referenceId: string }> {
  const { referenceId } = await client(simulator.collectionsBaseUrl).initiate({
    productId: PRODUCTS.primary,
    phoneNumber: PHONES.succeeds,
    amount: 25,
  });
  const clock = { offsetMs: -15_000 };
  const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
  await journal.insert({ ...openRecord(PHONES.succeeds, 'unknown'), referenceId: referenceId, sendWindowMs: 1_000 });
  clock.offsetMs = 0;
  return { journal, referenceId };
}

const stateOf = async (journal: MemoryJournal, referenceId: string) => (await journal.get(referenceId))?.state;

describe.each(WRONG_BASE_URLS)('a Collections base URL that is %s', (_kind, baseUrl) => {
  it('recover(): the record stays open, the call rejects with ConfigurationError naming baseUrl, said per payment', async () => {
    const { journal, referenceId } = await pushHeldPending();
    const logged: Logged[] = [];
    const recovering = client(baseUrl(), journal, logged);
    for (let round = 0; round < 2; round++) {
      const error = await recovering.recover().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toContain('baseUrl');
      expect((error as Error).message).toContain(referenceId);
      expect(await stateOf(journal, referenceId)).toBe('unknown');
      // However long this process watches: a 404 that is not the service's never becomes evidence.
      watchFor(600_000);
    }
    expect(logged.filter((line) => line.level === 'error' && line.message.includes(referenceId)).length).toBe(2);
    expect(logged.find((line) => line.level === 'error')?.message).toMatch(/baseUrl/);
  });

  it('checkStatus with a journal: ConfigurationError naming baseUrl, never NotFoundError; the record stays open', async () => {
    const { journal, referenceId } = await pushHeldPending();
    const checking = client(baseUrl(), journal);
    watchFor(600_000);
    const error = await checking.checkStatus(referenceId).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).not.toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain('baseUrl');
    expect(await stateOf(journal, referenceId)).toBe('unknown');
    expect((await journal.history(referenceId)).map((event) => event.to)).toEqual(['unknown']);
  });

  it('the settlement worker: closes nothing, logs it at error once, and reports the problem until stopped', async () => {
    useRunningMonotonicClock();
    const { journal, referenceId } = await pushHeldPending();
    const logged: Logged[] = [];
    const settled: PaymentRecord[] = [];
    const worker = client(baseUrl(), journal, logged).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 10,
      maxIntervalMs: 10,
      scanIntervalMs: 10,
      onSettled: (record) => void settled.push(record),
    });
    try {
      await vi.waitFor(() => expect(worker.configurationProblem).toBeInstanceOf(ConfigurationError), { timeout: 5_000, interval: 10 });
      // Watched long enough by both clocks: still nothing is closed on these 404s.
      watchFor(600_000);
      const before = wrong.requests.length + simulator.simulator.requests.length;
      await vi.waitFor(() => expect(wrong.requests.length + simulator.simulator.requests.length).toBeGreaterThan(before + 1), {
        timeout: 5_000,
        interval: 10,
      });
      expect(settled).toEqual([]);
      expect(await stateOf(journal, referenceId)).toBe('unknown');
      expect(worker.configurationProblem?.message).toContain('baseUrl');
      expect(logged.filter((line) => line.level === 'error')).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });
});

describe('the right base URL', () => {
  it('the service holds the push: recover() records it pending (the control for the cases above)', async () => {
    const { journal, referenceId } = await pushHeldPending();
    const [record] = await client(simulator.collectionsBaseUrl, journal).recover();
    expect(record).toMatchObject({ referenceId, state: 'pending' });
  });

  it('a push the service never received: closed not-sent once this process has watched it, after asking /health once', async () => {
    // Written ten minutes ago by the journal's clock.
    const clock = { offsetMs: -600_000 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    const absent = crypto.randomUUID();
    await journal.insert({ ...openRecord(PHONES.succeeds, 'unknown'), referenceId: absent, sendWindowMs: 1_000 });
    clock.offsetMs = 0;
    const recovering = client(simulator.collectionsBaseUrl, journal);
    simulator.simulator.reset();
    // Old by the journal's clock, but this process has just started: it watches the record for window + grace first.
    const [first] = await recovering.recover();
    expect(first, JSON.stringify(first)).toMatchObject({ referenceId: absent, state: 'unknown' });
    watchFor(11_000);
    expect((await recovering.recover())[0]).toMatchObject({ referenceId: absent, state: 'not-sent' });
    expect(simulator.simulator.requests.filter((request) => request.path.endsWith('/health'))).toHaveLength(1);
  });
});
