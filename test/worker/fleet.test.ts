/**
 * The fleet (issue 20) through the public client against the simulator on loopback: workers that share a backlog,
 * no starvation of a new payment by payments that never settle, the budget held where requests leave, a capped
 * Retry-After, a lease too short for a check, tills that read the journal, rows that cannot be read (SQLite).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, type Logger, MemoryJournal, type PaymentJournal, type PaymentRecord } from '../../src/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { maxInAnyWindow } from './windows.ts';

let running: RunningSimulator;
beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 2, pendingMs: Number.POSITIVE_INFINITY } }) });
});
afterAll(() => running.close());
beforeEach(() => running.simulator.reset());

interface Sent {
  readonly at: number;
  readonly method: string;
  readonly path: string;
}

function logLines(): { logger: Logger; warn: string[]; error: string[] } {
  const warn: string[] = [];
  const error: string[] = [];
  return {
    warn,
    error,
    logger: { debug() {}, info() {}, warn: (message) => warn.push(message), error: (message) => error.push(message) },
  };
}

function client(
  journal: PaymentJournal,
  sent: Sent[] = [],
  extra: { logger?: Logger; maxConcurrentRequests?: number; maxRetryAfterMs?: number; timeoutMs?: number; delayPostMs?: number } = {},
): CollectionsClient {
  const { logger, delayPostMs = 0, ...options } = extra;
  return new CollectionsClient({
    journal,
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: running.collectionsBaseUrl,
    logLevel: logger === undefined ? 'off' : 'warn',
    logger,
    ...options,
    fetch: async (input, init) => {
      const request = input instanceof Request ? input : new Request(input, init);
      sent.push({ at: Date.now(), method: request.method, path: new URL(request.url).pathname });
      if (request.method === 'POST' && delayPostMs > 0) await new Promise((resolve) => setTimeout(resolve, delayPostMs));
      return fetch(input, init);
    },
  });
}

async function initiateMany(journal: PaymentJournal, count: number, phoneNumber: string = PHONES.succeeds): Promise<string[]> {
  const till = client(journal);
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    ids.push((await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber })).referenceId);
  }
  return ids;
}

const checksOf = (sent: readonly Sent[]) => sent.filter((request) => request.method === 'GET' && request.path.includes('/check/'));

describe('the fleet', () => {
  it('workers share a backlog: each leases only its share, and one started during the burst takes its share within one lease period', async () => {
    const journal = new MemoryJournal();
    await initiateMany(journal, 90);
    const schedule = { initialDelayMs: 0, intervalMs: 100, maxIntervalMs: 200, scanIntervalMs: 50, leaseMs: 2_000, requestsPerSecond: 30 };
    const sentA: Sent[] = [];
    const sentB: Sent[] = [];
    const settledBy = { a: 0, b: 0 };
    const a = client(journal, sentA).startSettlementWorker({ ...schedule, onSettled: () => void settledBy.a++ });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const bStarted = Date.now();
    const b = client(journal, sentB).startSettlementWorker({ ...schedule, onSettled: () => void settledBy.b++ });
    try {
      await vi.waitFor(async () => expect(await journal.list({ states: ['successful'] })).toHaveLength(90), {
        timeout: 20_000,
        interval: 100,
      });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    // B's first check came within one lease period of its start, and each worker settled a fair part.
    expect((checksOf(sentB)[0]?.at ?? Number.POSITIVE_INFINITY) - bStarted).toBeLessThan(2_000);
    expect(settledBy.a + settledBy.b).toBe(90);
    expect(Math.min(settledBy.a, settledBy.b)).toBeGreaterThan(90 * 0.3);
  }, 30_000);

  it('no starvation: a new payment gets its first check on schedule among payments open for hours; those are checked at most once a minute and reported stale once', async () => {
    let offsetMs = 2 * 3_600_000;
    const journal = new MemoryJournal({ now: () => Date.now() - offsetMs });
    await initiateMany(journal, 60, PHONES.neverSettles);
    offsetMs = 0;
    running.simulator.configureSettlement({ pendingPolls: 0 });
    const sent: Sent[] = [];
    const stale: PaymentRecord[] = [];
    const worker = client(journal, sent).startSettlementWorker({
      initialDelayMs: 500,
      intervalMs: 100,
      maxIntervalMs: 200,
      scanIntervalMs: 100,
      leaseMs: 4_000,
      requestsPerSecond: 5,
      staleAfterMs: 3_600_000,
      onStale: (record) => void stale.push(record),
    });
    try {
      // The old ones take the budget first.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const [fresh] = await initiateMany(journal, 1);
      const created = Date.parse((await journal.get(fresh as string))?.createdAt as string);
      await vi.waitFor(() => expect(checksOf(sent).some((check) => check.path.endsWith(fresh as string))).toBe(true), { timeout: 5_000 });
      const firstCheck = checksOf(sent).find((check) => check.path.endsWith(fresh as string)) as Sent;
      expect(firstCheck.at - created).toBeLessThan(500 + 1_000);
      await vi.waitFor(async () => expect((await journal.get(fresh as string))?.state).toBe('successful'), { timeout: 5_000 });
    } finally {
      await worker.stop();
    }
    // Old payments: each checked at most once in these few seconds (their pause is a minute), each reported stale once.
    const perPayment = new Map<string, number>();
    for (const check of checksOf(sent)) perPayment.set(check.path, (perPayment.get(check.path) ?? 0) + 1);
    expect(Math.max(...perPayment.values())).toBe(1);
    expect(new Set(stale.map((record) => record.referenceId)).size).toBe(stale.length);
    expect(stale.length).toBeGreaterThan(0);
  }, 20_000);

  it('the budget holds where requests leave, while the same client is busy with slow initiates', async () => {
    const journal = new MemoryJournal();
    await initiateMany(journal, 40);
    const sent: Sent[] = [];
    const busy = client(journal, sent, { maxConcurrentRequests: 4, delayPostMs: 300 });
    const worker = busy.startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 100,
      maxIntervalMs: 200,
      scanIntervalMs: 50,
      requestsPerSecond: 10,
    });
    // 32 slow initiates hold the client's 4 slots for about 2.4 s; the worker's checks queue behind them.
    const initiates = Array.from({ length: 32 }, () =>
      busy.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.succeeds }),
    );
    try {
      await Promise.all(initiates);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await worker.stop();
    }
    expect(checksOf(sent).length).toBeGreaterThan(15);
    expect(maxInAnyWindow(checksOf(sent).map((check) => check.at))).toBeLessThanOrEqual(10);
  }, 40_000);

  it('honours Retry-After only up to the client’s maxRetryAfterMs, and logs a longer one at error', async () => {
    const journal = new MemoryJournal();
    await initiateMany(journal, 5);
    running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 429, retryAfter: 86_400, times: 1 });
    const lines = logLines();
    const worker = client(journal, [], { logger: lines.logger, maxRetryAfterMs: 300 }).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 50,
      maxIntervalMs: 100,
      scanIntervalMs: 50,
    });
    try {
      await vi.waitFor(async () => expect(await journal.list({ states: ['successful'] })).toHaveLength(5), {
        timeout: 5_000,
        interval: 100,
      });
    } finally {
      await worker.stop();
    }
    expect(lines.error.join('\n')).toMatch(/maxRetryAfterMs/);
  });

  it('warns at start when leaseMs is shorter than a check’s time limit; the defaults (both 30 s) do not', async () => {
    const lines = logLines();
    const worker = client(new MemoryJournal(), [], { logger: lines.logger, timeoutMs: 5_000 }).startSettlementWorker({ leaseMs: 1_000 });
    await worker.stop();
    expect(lines.warn.join('\n')).toMatch(/leaseMs \(1000 ms\) is shorter than/);
    const quiet = logLines();
    await client(new MemoryJournal(), [], { logger: quiet.logger, timeoutMs: 5_000 }).startSettlementWorker({ leaseMs: 10_000 }).stop();
    await client(new MemoryJournal(), [], { logger: quiet.logger }).startSettlementWorker().stop();
    expect(quiet.warn).toEqual([]);
  });

  it('waitForSettlement reads a journal without watch on a schedule and sends nothing to the service', async () => {
    const journal = new MemoryJournal();
    const ids = await initiateMany(journal, 10);
    const tillSent: Sent[] = [];
    const till = client(journal, tillSent);
    const waits = ids.map((id) => till.waitForSettlement(id, { maxWaitMs: 10_000 }));
    const worker = client(journal).startSettlementWorker({ initialDelayMs: 0, intervalMs: 50, maxIntervalMs: 100, scanIntervalMs: 50 });
    try {
      const records = await Promise.all(waits);
      expect(records.map((record) => record.state)).toEqual(ids.map(() => 'successful'));
    } finally {
      await worker.stop();
    }
    expect(tillSent).toEqual([]);
    await expect(client(journal).waitForSettlement(ids[0] as string, { maxWaitMs: -1 })).rejects.toThrow(/maxWaitMs/);
  });
});

describe('SQLite rows that cannot be read', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tap-fleet-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a non-JSON error column and a foreign reference id are reported once and skipped by list(), recover() and the worker, and never left leased', async () => {
    const file = join(dir, 'journal.db');
    const lines = logLines();
    const journal = new SqliteJournal(file, { logger: lines.logger });
    const ids = await initiateMany(journal, 5);
    const raw = new DatabaseSync(file);
    raw
      .prepare(`UPDATE tap_payment_journal SET error = 'not json {', version = version + 1, writes = writes + 1 WHERE reference_id = ?`)
      .run(ids[0] as string);
    raw
      .prepare(
        `INSERT INTO tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
         SELECT '../../../health?x=', state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes FROM tap_payment_journal WHERE reference_id = ?`,
      )
      .run(ids[1] as string);
    expect((await journal.list()).map((record) => record.referenceId).sort()).toEqual(ids.slice(1).sort());
    const sent: Sent[] = [];
    expect(await client(journal, sent).recover()).toHaveLength(4);
    const worker = client(journal, sent).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 50,
      maxIntervalMs: 100,
      scanIntervalMs: 50,
    });
    try {
      await vi.waitFor(async () => expect(await journal.list({ states: ['successful'] })).toHaveLength(4), {
        timeout: 5_000,
        interval: 100,
      });
    } finally {
      await worker.stop();
    }
    expect(sent.some((request) => request.path.includes('health') || request.path.includes('..'))).toBe(false);
    expect(
      raw
        .prepare(
          `SELECT count(*) AS n FROM tap_payment_journal WHERE leased_to IS NOT NULL AND state IN ('initiating', 'pending', 'unknown')`,
        )
        .get(),
    ).toEqual({ n: 0 });
    expect(lines.warn.filter((line) => line.includes('cannot be read'))).toHaveLength(2);
    raw.close();
  });
});
