/**
 * A fresh till's first create on a key no till has used yet, through the public API on virtual time: worker
 * processes (each a `CollectionsClient` on its own journal object over one shared store, so each is its own holder of
 * the key's budget) spend the whole key with status checks; then a till process starts and sends a create every 2 s.
 * Its first create, and every later one, leaves without waiting for another process to give a token back; no 1 s
 * window at the service ever holds more than the limit, the till's requests included.
 */
import { afterEach, expect, it, vi } from 'vitest';
import { type BudgetRequest, CollectionsClient, MemoryJournal, type PaymentJournal } from '../../src/index.ts';
import { maxInAnyWindow } from '../worker/windows.ts';

afterEach(() => {
  vi.useRealTimers();
});

const apiKey = 'till-first-token-key-0123456789';
const productId = '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10';

/**
 * One process's journal: its own object (its own holder of the key's budget) on the store every process shares; how
 * many renewals of the budget it sent, and when (virtual clock) each of its writes of a record resolved.
 */
function processJournal(store: MemoryJournal) {
  let renewals = 0;
  const writes: number[] = [];
  const journal: PaymentJournal = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'takeBudget')
        return (request: BudgetRequest) => {
          renewals++;
          return target.takeBudget(request);
        };
      if (property === 'insert' || property === 'transition')
        return async (...args: unknown[]) => {
          const written = await (value as (...args: unknown[]) => Promise<unknown>).apply(target, args);
          writes.push(Date.now());
          return written;
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { journal, renewals: () => renewals, writes };
}

/** The service: every arrival recorded by the virtual clock (and its sender), answered 5 ms later. */
function service() {
  const arrivals: { at: number; sender: string; method: string }[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    arrivals.push({ at: Date.now(), sender: request.headers.get('x-sender') ?? '', method: request.method });
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (request.method === 'POST') {
      const { referenceId } = (await request.json()) as { referenceId: string };
      return Response.json({ success: true, data: { referenceId, status: 'pending' } }, { status: 202 });
    }
    const referenceId = new URL(request.url).pathname.split('/').at(-1);
    return Response.json({ success: true, data: { referenceId, statusText: 'pending', transactionCode: null, reason: null } });
  };
  return { arrivals, fetch };
}

function processOn(store: MemoryJournal, fetch: typeof globalThis.fetch, sender: string, limit: number) {
  const { journal, renewals, writes } = processJournal(store);
  const client = new CollectionsClient({
    apiKey,
    baseUrl: 'https://collections.example.test',
    journal,
    requestsPerSecond: limit,
    maxRetries: 0,
    logLevel: 'off',
    headers: { 'x-sender': sender },
    fetch,
  });
  return { client, renewals, writes };
}

/**
 * Lets the real event loop turn, the virtual clock standing still, until `done` holds: a process's first request
 * waits for its key's digest (Web Crypto, off the virtual clock) before its first renewal.
 */
async function realTurns(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !done(); turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(0);
  }
}

/** Moves the virtual clock a millisecond at a time until `done` holds (at most 10 s). */
async function steps(done: () => boolean): Promise<void> {
  for (let step = 0; step < 10_000 && !done(); step++) await vi.advanceTimersByTimeAsync(1);
}

/**
 * `workers` processes send status checks as fast as the key lets them for 8 s (their shares settled, the key
 * spent), then a till process starts and sends six creates, one every 2 s. Returns each create's wait (from the call
 * to its request's arrival: the journal costs no virtual time) and every arrival.
 */
async function freshTillOnSaturatedKey(limit: number, workers: number) {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    now: new Date('2026-11-29T10:00:00.000Z'),
  });
  const store = new MemoryJournal();
  const { arrivals, fetch } = service();
  const stop = new AbortController();
  const fleet = Array.from({ length: workers }, (_, index) => processOn(store, fetch, `worker-${index + 1}`, limit));
  const running = fleet.flatMap(({ client }) =>
    Array.from({ length: 6 }, async () => {
      while (!stop.signal.aborted) await client.checkStatus(globalThis.crypto.randomUUID(), { signal: stop.signal }).catch(() => undefined);
    }),
  );
  await realTurns(() => fleet.every((worker) => worker.renewals() > 0));
  await vi.advanceTimersByTimeAsync(8_000);
  const workersBefore = arrivals.filter((arrival) => arrival.at >= Date.now() - 2_000).length;
  const till = processOn(store, fetch, 'till', limit);
  const waits: number[] = [];
  for (let create = 0; create < 6; create++) {
    const asked = Date.now();
    let settled = false;
    const sent = till.client.initiate({ productId, phoneNumber: '0977123456', amount: 10 }).finally(() => {
      settled = true;
    });
    // The virtual clock stands still until the create's first write and the till's first renewal: Web Crypto (its
    // fingerprint, the key's digest) runs on the real clock.
    await realTurns(() => settled || (till.writes.some((at) => at >= asked) && till.renewals() > 0));
    await steps(() => settled);
    await sent;
    // Its wait for a token: from its last write before the push left to the push's arrival.
    const arrival = arrivals.find((entry) => entry.sender === 'till' && entry.method === 'POST' && entry.at >= asked);
    const arrivedAt = arrival?.at ?? Number.POSITIVE_INFINITY;
    waits.push(arrivedAt - Math.max(...till.writes.filter((at) => at >= asked && at <= arrivedAt)));
    await vi.advanceTimersByTimeAsync(2_000 - (Date.now() - asked));
  }
  stop.abort();
  await vi.advanceTimersByTimeAsync(2_000);
  await Promise.all(running);
  return { waits, arrivals, workersBefore };
}

it('a fresh till on a key no till used yet, saturated by two workers (10/s): its first create and every later one wait ≤ 50 ms', async () => {
  const seen = await freshTillOnSaturatedKey(10, 2);
  // The workers spent the key before the till came (all but the token kept free for a till, 2 s of it).
  expect(seen.workersBefore).toBeGreaterThanOrEqual(2 * 7);
  // Before, the first create waited for a worker to give a token back and for it to cool: about 1–3 s.
  expect(seen.waits[0]).toBeLessThanOrEqual(50);
  expect(seen.waits.filter((wait) => wait > 50)).toEqual([]);
  expect(maxInAnyWindow(seen.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(10);
});

it('a fresh till on a key no till used yet, with more workers than tokens (8 on 5/s): its creates wait ≤ 50 ms', async () => {
  const seen = await freshTillOnSaturatedKey(5, 8);
  expect(seen.workersBefore).toBeGreaterThanOrEqual(2 * 3);
  expect(seen.waits[0]).toBeLessThanOrEqual(50);
  expect(seen.waits.filter((wait) => wait > 50)).toEqual([]);
  expect(maxInAnyWindow(seen.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(5);
});
