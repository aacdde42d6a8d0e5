/**
 * The settlement worker through the public client against the simulator on loopback: real sockets, the
 * simulator's own settlement, faults and request log.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, MemoryJournal, type PaymentRecord, type SettlementWorker } from '../../src/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { useRunningMonotonicClock, watchFor } from '../helpers/collections.ts';
import { insertAll, openRecord } from './journal-records.ts';
import { checkSpans, maxInAnyWindow, overlappingChecks } from './windows.ts';

let running: RunningSimulator;
beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 2, pendingMs: Number.POSITIVE_INFINITY } }) });
});
afterAll(() => running.close());
afterEach(() => {
  vi.useRealTimers();
});

/** When each worker's requests left (the moment its client called fetch). */
const sentAt = new Map<string, number[]>();
/** When each worker's client received its first 429. */
const rateLimitedAt = new Map<string, number>();

function client(worker: string, journal?: MemoryJournal): CollectionsClient {
  return new CollectionsClient({
    journal,
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: running.collectionsBaseUrl,
    logLevel: 'off',
    headers: { 'x-worker': worker },
    fetch: (input, init) => {
      sentAt.set(worker, [...(sentAt.get(worker) ?? []), Date.now()]);
      return fetch(input, init).then((response) => {
        if (response.status === 429 && !rateLimitedAt.has(worker)) rateLimitedAt.set(worker, Date.now());
        return response;
      });
    },
  });
}

const PHONE_CYCLE = [PHONES.succeeds, PHONES.insufficientFunds, PHONES.declined, PHONES.succeeds];
const FAST = { initialDelayMs: 0, intervalMs: 30, maxIntervalMs: 60, scanIntervalMs: 50 } as const;

/** Initiates `count` collections through a client whose journal is `journal` (as a till's backend would). */
async function initiateMany(journal: MemoryJournal, count: number): Promise<void> {
  const initiator = client('initiator', journal);
  for (let index = 0; index < count; index++) {
    await initiator.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONE_CYCLE[index % PHONE_CYCLE.length] as string });
  }
  expect(await journal.list({ states: ['pending'] })).toHaveLength(count);
}

describe('settlement worker against the simulator', () => {
  it('settles every open payment once, with the service’s outcome, rides out a 429, and turns a never-sent one into not-sent', async () => {
    useRunningMonotonicClock();
    running.simulator.reset();
    // The journal's clock is moved back while the never-sent record is written: it was written a minute ago.
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await initiateMany(journal, 40);
    const neverSent = openRecord(PHONES.succeeds, 'unknown');
    clock.offsetMs = -60_000;
    await insertAll(journal, [neverSent]);
    clock.offsetMs = 0;
    running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 429, retryAfter: 1, times: 1 });
    const settled: PaymentRecord[] = [];
    const started = Date.now();
    const worker = client('one').startSettlementWorker({
      journal,
      ...FAST,
      requestsPerSecond: 40,
      onSettled: (record) => void settled.push(record),
    });
    // The worker must itself watch the never-sent record for its grace (10 s) before a 404 closes it: its monotonic
    // clock is moved on once the record was checked (the journal's clock already says a minute).
    await vi.waitFor(() => expect(running.simulator.requests.some((request) => request.path.endsWith(neverSent.referenceId))).toBe(true), {
      timeout: 8_000,
      interval: 20,
    });
    expect(settled.map((record) => record.referenceId)).not.toContain(neverSent.referenceId);
    // The worker's pauses and tokens are timed on the same clock: it is moved on once the 429's pause is over and the
    // other 40 are settled (no burst whose tokens the jump would free at once).
    await vi.waitFor(
      () => {
        expect(settled.length).toBe(40);
        expect(Date.now()).toBeGreaterThan((rateLimitedAt.get('one') ?? Number.POSITIVE_INFINITY) + 1_000);
      },
      { timeout: 8_000, interval: 20 },
    );
    expect(settled.map((record) => record.referenceId)).not.toContain(neverSent.referenceId);
    watchFor(10_000);
    await vi.waitFor(() => expect(settled.length).toBe(41), { timeout: 8_000, interval: 50 });
    await worker.stop();

    const ids = settled.map((record) => record.referenceId);
    expect(new Set(ids).size).toBe(41);
    const truth = new Map(running.simulator.collections().map((collection) => [collection.referenceId, collection]));
    for (const record of settled) {
      const stored = await journal.get(record.referenceId);
      // Delivered before it was written: the same record, but for the time the journal stamped on the write.
      expect({ ...stored, updatedAt: record.updatedAt }).toEqual(record);
      if (record.referenceId === neverSent.referenceId) {
        expect(record.state).toBe('not-sent');
        expect(truth.has(record.referenceId)).toBe(false);
      } else {
        expect(record.state).toBe(truth.get(record.referenceId)?.status);
        expect(record.transactionCode).toBe(truth.get(record.referenceId)?.transactionCode);
      }
    }
    expect(settled.filter((record) => record.state === 'failed').length).toBe(20);
    expect(await journal.list({ states: ['initiating', 'pending', 'unknown'] })).toEqual([]);

    const spans = checkSpans(running.simulator.requests).filter((span) => span.worker === 'one');
    // The 429 (Retry-After: 1 s) paused every check: from the moment the client received it (and the few
    // milliseconds until the worker hears of it), no check left for the rest of that second.
    const sent = sentAt.get('one') ?? [];
    const pauseFrom = rateLimitedAt.get('one') as number;
    expect(sent.filter((at) => at > pauseFrom + 20 && at < pauseFrom + 990)).toEqual([]);
    expect(sent.filter((at) => at >= pauseFrom + 990).length).toBeGreaterThan(0);
    // The budget holds where requests leave (at the service, connection set-up can bunch arrivals).
    expect(maxInAnyWindow(sentAt.get('one') ?? [])).toBeLessThanOrEqual(40);
    expect(sentAt.get('one')?.length).toBe(spans.length);
    expect(spans.every((span) => span.from >= started)).toBe(true);
  });

  it('two workers on one journal split the payments, never check one at overlapping times, and deliver each once', async () => {
    running.simulator.reset();
    running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', latencyMs: 15 });
    const journal = new MemoryJournal();
    await initiateMany(journal, 60);
    const delivered = new Map<string, string[]>();
    const workers: SettlementWorker[] = ['a', 'b'].map((name) =>
      client(name).startSettlementWorker({
        journal,
        ...FAST,
        requestsPerSecond: 100,
        maxLeasedPayments: 20,
        leaseMs: 1_000,
        onSettled: (record) => void delivered.set(record.referenceId, [...(delivered.get(record.referenceId) ?? []), name]),
      }),
    );
    await vi.waitFor(() => expect(delivered.size).toBe(60), { timeout: 8_000, interval: 50 });
    await Promise.all(workers.map((worker) => worker.stop()));
    running.simulator.clearFaults();

    expect([...delivered.values()].every((by) => by.length === 1)).toBe(true);
    const by = [...delivered.values()].flat();
    expect(by.filter((name) => name === 'a').length).toBeGreaterThan(0);
    expect(by.filter((name) => name === 'b').length).toBeGreaterThan(0);
    const spans = checkSpans(running.simulator.requests).filter((span) => span.worker !== 'initiator');
    expect(spans.length).toBeGreaterThanOrEqual(60 * 3);
    expect(overlappingChecks(spans)).toEqual([]);
  });

  it('stop() leaves no request in flight: a hanging check is cut and the simulator sees it end', async () => {
    running.simulator.reset();
    const journal = new MemoryJournal();
    await initiateMany(journal, 3);
    running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', latencyMs: 60_000 });
    const worker = client('stopper').startSettlementWorker({ journal, ...FAST });
    await vi.waitFor(() => expect(checkSpans(running.simulator.requests).filter((span) => span.worker === 'stopper').length).toBe(3));
    await worker.stop();
    await worker.done;
    await vi.waitFor(() => expect(running.simulator.requests.every((request) => request.answeredAt !== undefined)).toBe(true));
    running.simulator.clearFaults();
    expect(await journal.list({ states: ['pending'] })).toHaveLength(3);
  });

  it('refuses a client without a journal and bad options, before anything runs', () => {
    expect(() => client('x').startSettlementWorker()).toThrow(/journal/);
    expect(() => client('x').startSettlementWorker({ journal: new MemoryJournal(), requestsPerSecond: 0, intervalMs: -1 })).toThrow(
      expect.objectContaining({
        issues: [
          { path: 'options.requestsPerSecond', message: expect.any(String) },
          { path: 'options.intervalMs', message: expect.any(String) },
        ],
      }),
    );
  });
});
