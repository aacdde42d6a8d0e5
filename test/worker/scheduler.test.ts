/**
 * The worker's scheduler with fake timers and a scripted status check: budget, concurrency, the global
 * pause on 429, the poll schedule, the 404 rule, leases and stop. (Against the simulator: worker-simulator.)
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CollectionStatus } from '../../src/collections/schemas.ts';
import {
  type SettlementWorkerContext,
  type SettlementWorkerOptions,
  startSettlementWorker,
} from '../../src/collections/settlement-worker.ts';
import { StatusWords } from '../../src/collections/status-words.ts';
import { InternalServerError, NotFoundError, RateLimitError } from '../../src/core/errors.ts';
import { LevelLogger } from '../../src/core/logger.ts';
import type { PaymentRecord, PaymentState } from '../../src/journal/journal.ts';
import { MemoryJournal } from '../../src/journal/memory.ts';
import { RecordWatch } from '../../src/journal/record-watch.ts';
import { maxInAnyWindow } from './windows.ts';

type Answer = (referenceId: string, call: number) => CollectionStatus | Error | 'hang';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const pending = (referenceId: string): CollectionStatus => ({ referenceId, statusText: 'pending', transactionCode: null, reason: null });
const paid = (referenceId: string): CollectionStatus => ({
  referenceId,
  statusText: 'successful',
  transactionCode: 'SUCCESS',
  reason: 'ok',
});

/**
 * `workMs`: synchronous time a check takes before its request leaves (the clock moves by it), per check number.
 * `sink`: where the worker logs, at `debug` (default: nowhere).
 */
function setup(
  answer: Answer,
  workMs: (checkNumber: number) => number = () => 0,
  sink: ConstructorParameters<typeof LevelLogger>[0] | undefined = undefined,
) {
  // The journal stamps its own times; `open` moves its clock back to write a record `createdAt` ago.
  const clock = { offsetMs: 0 };
  const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
  // Synchronous work moves this process's monotonic clock (what the worker's schedule reads) with its wall clock.
  let workedMs = 0;
  const monotonic = performance.now.bind(performance);
  vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + workedMs);
  const checks: { referenceId: string; at: number; timeoutMs: number }[] = [];
  const calls = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const context: SettlementWorkerContext = {
    journal,
    timeoutMs: 30_000,
    maxRetries: 2,
    logger: sink === undefined ? new LevelLogger(silent, 'off') : new LevelLogger(sink, 'debug'),
    statusWords: new StatusWords(),
    // The scripted 404s are the service's own, from a base URL that proved itself.
    judgeNotFound: async () => undefined,
    watch: new RecordWatch(),
    check: (referenceId, timeoutMs, signal) => {
      const work = workMs(checks.length + 1);
      if (work > 0) {
        vi.setSystemTime(Date.now() + work);
        workedMs += work;
      }
      const call = (calls.get(referenceId) ?? 0) + 1;
      calls.set(referenceId, call);
      checks.push({ referenceId, at: Date.now(), timeoutMs });
      const result = answer(referenceId, call);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve, reject) => {
        const end = (settle: () => void) => {
          inFlight--;
          settle();
        };
        signal.addEventListener('abort', () => end(() => reject(signal.reason)), { once: true });
        if (result === 'hang') return;
        queueMicrotask(() => end(() => (result instanceof Error ? reject(result) : resolve(result))));
      });
    },
  };
  const settled: PaymentRecord[] = [];
  /** Starts a worker; `contextExtra` replaces parts of its client (a check of its own, `tokenAtSend`). */
  const start = (options: SettlementWorkerOptions = {}, contextExtra: Partial<SettlementWorkerContext> = {}) =>
    startSettlementWorker({ ...context, ...contextExtra }, { onSettled: (record) => void settled.push(record), ...options });
  /** Opens `count` payments in `state`, created at `createdAt`; `firstId` names the first (default: a new UUID). */
  async function open(
    count: number,
    state: PaymentState = 'pending',
    createdAt = new Date().toISOString(),
    firstId?: string,
  ): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const referenceId = index === 0 && firstId !== undefined ? firstId : randomUUID();
      ids.push(referenceId);
      clock.offsetMs = Date.parse(createdAt) - Date.now();
      await journal.insert({
        referenceId,
        state,
        productId: randomUUID(),
        amount: 10,
        currency: 'ZMW',
        phoneNumber: '260*******56',
        fingerprint: 'x',
        // As initiate writes it: the window in which its push can still reach the service (3 × 30 s + 2 × 8 s);
        // 0 for the others: their age alone decides (a record without a window never becomes not-sent by age).
        sendWindowMs: state === 'initiating' ? 106_000 : 0,
      });
      clock.offsetMs = 0;
    }
    return ids;
  }
  return { journal, checks, settled, start, open, maxInFlight: () => maxInFlight, inFlight: () => inFlight };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('settlement worker scheduler', () => {
  it('holds the request budget in every 1 s window and the concurrency limit, with every payment due at once', async () => {
    const world = setup((id, call) => (call >= 3 ? paid(id) : pending(id)));
    await world.open(200, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ requestsPerSecond: 7, maxConcurrentChecks: 3, intervalMs: 100, maxIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(20_000);
    const times = world.checks.map((check) => check.at);
    // Re-checks leave one token of every window to first checks of new payments (none here): 6 of 7.
    expect(maxInAnyWindow(times)).toBe(6);
    // A token is spent for 1 250 ms (room for the way from the token to the wire): 6 per 1.25 s, 16 whole windows
    // and the start of a 17th (the first lease takes a turn of the loop) in 20 s.
    expect(times.length).toBeGreaterThanOrEqual(6 * 16);
    expect(times.length).toBeLessThanOrEqual(6 * 17);
    expect(world.maxInFlight()).toBeLessThanOrEqual(3);
    await worker.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('holds the budget where requests leave even when starting each check takes synchronous time', async () => {
    // The first burst is slow to start (20 ms of work each), the next ones are quick.
    const world = setup(
      (id) => pending(id),
      (checkNumber) => (checkNumber <= 10 ? 20 : 0),
    );
    await world.open(100, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ requestsPerSecond: 10, maxConcurrentChecks: 10, intervalMs: 100, maxIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(world.checks.length).toBeGreaterThan(50);
    // A clock read once per burst would date the tenth token 180 ms early, and the quick second burst
    // would leave within a second of it: 11 in one second.
    expect(maxInAnyWindow(world.checks.map((check) => check.at))).toBeLessThanOrEqual(10);
    await worker.stop();
  });

  it('by default checks at most 10 per second and 16 at once', async () => {
    const world = setup(() => 'hang');
    await world.open(40, 'pending', new Date(Date.now() - 120_000).toISOString());
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(900);
    // 10 per second, one of them kept for first checks of new payments (none here): 9 re-checks.
    expect(maxInAnyWindow(world.checks.map((check) => check.at))).toBe(9);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.inFlight()).toBe(16);
    expect(world.maxInFlight()).toBe(16);
    await worker.stop();
  });

  it('never has more than maxConcurrentChecks in flight when checks hang, and stop() aborts them', async () => {
    const world = setup(() => 'hang');
    await world.open(40, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ requestsPerSecond: 100, maxConcurrentChecks: 4 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks.length).toBe(4);
    expect(world.inFlight()).toBe(4);
    await worker.stop();
    expect(world.inFlight()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await worker.done;
    // Every lease was released: another owner gets every record at once.
    expect((await world.journal.lease({ owner: 'next', leaseMs: 1_000, limit: 100 })).length).toBe(40);
  });

  it('never holds a new payment back longer than initialDelayMs when the journal clock runs ahead of this machine', async () => {
    // createdAt is the journal's clock: 5 minutes ahead of this machine's, a quiet start counted from it by this
    // machine's clock lasted 5 minutes too (seed 18900 of the simulation: 270 s, past the liveness bound).
    const world = setup((id) => paid(id));
    const started = Date.now();
    const [id] = await world.open(1, 'pending', new Date(started + 5 * 60_000).toISOString());
    world.start({ initialDelayMs: 5_000, intervalMs: 1_000, maxIntervalMs: 2_000 });
    await vi.advanceTimersByTimeAsync(7_000);
    expect(world.checks.map((check) => check.referenceId)).toEqual([id]);
    expect((world.checks[0] as { at: number }).at - started).toBeLessThanOrEqual(5_000 * 1.1 + 1_001);
    expect((await world.journal.get(id as string))?.state).toBe('successful');
  });

  it('follows the poll schedule: first check initialDelayMs after creation, then growing pauses', async () => {
    const world = setup((id, call) => (call === 5 ? paid(id) : pending(id)));
    const created = Date.now();
    const [id] = await world.open(1);
    world.start({ initialDelayMs: 5_000, intervalMs: 1_000, maxIntervalMs: 2_000 });
    await vi.advanceTimersByTimeAsync(30_000);
    const offsets = world.checks.map((check) => check.at - created);
    expect(offsets.length).toBe(5);
    const pauses = offsets.map((at, index) => at - (offsets[index - 1] ?? 0));
    const expected = [5_000, 1_000, 1_500, 2_000, 2_000];
    pauses.forEach((pause, index) => {
      // ±10 % jitter, rounded up to the scan interval at most for the first one.
      expect(pause).toBeGreaterThanOrEqual((expected[index] as number) * 0.9 - 1);
      expect(pause).toBeLessThanOrEqual((expected[index] as number) * 1.1 + 1_001);
    });
    expect(world.settled.map((record) => [record.referenceId, record.state, record.transactionCode])).toEqual([
      [id, 'successful', 'SUCCESS'],
    ]);
    expect((await world.journal.get(id as string))?.state).toBe('successful');
  });

  it('pauses every check for Retry-After when one answers 429', async () => {
    const rateLimited = new RateLimitError({
      status: 429,
      code: undefined,
      message: 'slow down',
      requestId: undefined,
      body: undefined,
      service: 'collections',
      retryAfterMs: 4_000,
    });
    let first = true;
    const world = setup((id) => {
      if (first) {
        first = false;
        return rateLimited;
      }
      return pending(id);
    });
    await world.open(20, 'pending', new Date(Date.now() - 60_000).toISOString());
    const started = Date.now();
    world.start({ requestsPerSecond: 1, maxConcurrentChecks: 1 });
    await vi.advanceTimersByTimeAsync(8_000);
    const offsets = world.checks.map((check) => check.at - started);
    expect(offsets[0]).toBeLessThan(1_000);
    expect(offsets[1]).toBeGreaterThanOrEqual(4_000);
    expect(offsets.filter((at) => at > 0 && at < 4_000)).toEqual([]);
  });

  it('turns a 404 into not-sent only for an unknown record past the grace; a pending record stays open', async () => {
    const world = setup(
      (id) =>
        new NotFoundError({
          status: 404,
          code: 'E_NOT_FOUND',
          message: `no ${id}`,
          requestId: undefined,
          body: undefined,
          service: 'collections',
        }),
    );
    const [unknown] = await world.open(1, 'unknown');
    const [stillPending] = await world.open(1, 'pending');
    const [initiating] = await world.open(1, 'initiating');
    world.start({ initialDelayMs: 1_000, intervalMs: 1_000, maxIntervalMs: 1_000, notFoundGraceMs: 5_000 });
    await vi.advanceTimersByTimeAsync(4_000);
    expect(world.settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.settled.map((record) => [record.referenceId, record.state])).toEqual([[unknown, 'not-sent']]);
    // An initiating record waits for the window its sender recorded (3 × 30 s + 2 × 8 s) plus the grace.
    await vi.advanceTimersByTimeAsync(90_000);
    expect(world.settled.map((record) => record.referenceId)).toEqual([unknown]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(world.settled.map((record) => record.referenceId)).toEqual([unknown, initiating]);
    expect((await world.journal.get(stillPending as string))?.state).toBe('pending');
  });

  it('delivers again when onSettled throws, and exactly once otherwise', async () => {
    const world = setup((id) => paid(id));
    const ids = await world.open(10, 'pending', new Date(Date.now() - 60_000).toISOString());
    const delivered: string[] = [];
    let failures = 3;
    world.start({
      intervalMs: 500,
      maxIntervalMs: 500,
      onSettled: (record) => {
        if (failures-- > 0) throw new Error('the shop database is down');
        delivered.push(record.referenceId);
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    expect([...delivered].sort()).toEqual([...ids].sort());
    expect((await world.journal.list({ states: ['successful'] })).length).toBe(10);
  });

  it('does not check a payment another owner leased until that lease runs out, then takes it over', async () => {
    const world = setup((id) => paid(id));
    const [id] = await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    await world.journal.lease({ owner: 'a-worker-that-died', leaseMs: 10_000, limit: 1 });
    world.start({ scanIntervalMs: 500 });
    await vi.advanceTimersByTimeAsync(9_900);
    expect(world.checks).toEqual([]);
    await vi.advanceTimersByTimeAsync(700);
    expect(world.checks.map((check) => check.referenceId)).toEqual([id]);
    expect(world.settled.length).toBe(1);
  });

  it('leased again while its earlier check is still in flight, a payment is not checked twice at once', async () => {
    const world = setup((id, call) => (call === 1 ? 'hang' : pending(id)));
    const [id] = await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ leaseMs: 3_000, intervalMs: 200, maxIntervalMs: 200, scanIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(50);
    expect(world.checks.length).toBe(1);
    // The lease is lost under the hanging check (as after a stall): another owner holds it when the renewal
    // finds out, then lets it go, and the next scan leases it to this same worker again.
    await world.journal.release(worker.workerId, [id as string]);
    expect((await world.journal.lease({ owner: 'another-worker', leaseMs: 60_000, limit: 1 })).length).toBe(1);
    await vi.advanceTimersByTimeAsync(1_100);
    await world.journal.release('another-worker', [id as string]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await world.journal.renew(worker.workerId, [id as string], 3_000)).toEqual([id]);
    expect(world.checks.length).toBe(1);
    expect(world.maxInFlight()).toBe(1);
    await worker.stop();
  });

  it('stops checking a payment whose lease it lost, and never lets a check outlive its lease', async () => {
    const world = setup((id) => pending(id));
    const [id] = await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ leaseMs: 3_000, intervalMs: 200, maxIntervalMs: 200 });
    await vi.advanceTimersByTimeAsync(500);
    expect(world.checks.length).toBeGreaterThan(0);
    for (const check of world.checks) expect(check.timeoutMs).toBeLessThanOrEqual(3_000 - 300);
    // Another owner holds it now (as after a stall past the lease): the next renewal finds out.
    await world.journal.release(worker.workerId, [id as string]);
    expect((await world.journal.lease({ owner: 'another-worker', leaseMs: 60_000, limit: 1 })).length).toBe(1);
    await vi.advanceTimersByTimeAsync(1_100);
    const seen = world.checks.length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(world.checks.length).toBe(seen);
    await worker.stop();
    // Its stop released nothing of the other owner's.
    expect(await world.journal.renew('another-worker', [id as string], 60_000)).toEqual([id]);
  });

  it('a journal record whose referenceId is not a UUID is never checked: said once at warn, its lease handed back', async () => {
    const warnings: unknown[][] = [];
    const world = setup((id) => pending(id), undefined, { ...silent, warn: (...line: unknown[]) => void warnings.push(line) });
    await world.open(1, 'pending', undefined, 'not-a-uuid');
    const worker = world.start({ scanIntervalMs: 1_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    await worker.stop();
    expect(world.checks).toEqual([]);
    // Leased at every scan (five), reported at the first only.
    expect(warnings).toEqual([
      [
        '[tap-collections-sdk] settlement worker: skipped a journal record whose referenceId is not a UUID',
        { referenceId: '"not-a-uuid"' },
      ],
    ]);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 10 })).toHaveLength(1);
  });

  it('a payment whose next check is more than half a lease away is parked: its lease held until then, then free', async () => {
    // The schedule's jitter at its middle: the pause is exactly intervalMs.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const world = setup((id) => pending(id));
    await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ leaseMs: 30_000, intervalMs: 20_000, maxIntervalMs: 20_000, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    // Parked for the 20 s to its next check: nobody else may take it meanwhile, and it is free once they passed.
    await vi.advanceTimersByTimeAsync(19_000);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 1 })).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 1 })).toHaveLength(1);
    expect(world.checks).toHaveLength(1);
    await worker.stop();
  });

  it('a scan the journal fails: said once at warn (the journal is down), and the payments are leased at the next scan', async () => {
    const warnings: string[] = [];
    const world = setup((id) => paid(id), undefined, { ...silent, warn: (line: unknown) => void warnings.push(String(line)) });
    await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    const lease = world.journal.lease.bind(world.journal);
    let failures = 1;
    world.journal.lease = async (request) => {
      if (failures-- > 0) throw new Error('the database is restarting');
      return lease(request);
    };
    const worker = world.start({ scanIntervalMs: 1_000 });
    await vi.advanceTimersByTimeAsync(500);
    expect(world.checks).toEqual([]);
    expect(warnings).toEqual([
      '[tap-collections-sdk] settlement worker: could not use the journal; leases, checks and records wait until it answers',
    ]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toHaveLength(1);
    await worker.stop();
  });
});

describe('settlement worker scheduler: leases and checks', () => {
  const minuteAgo = () => new Date(Date.now() - 60_000).toISOString();

  it("a check's time limit is what its lease leaves less a margin (a tenth of the lease, at most 1 s)", async () => {
    const world = setup((id) => pending(id));
    await world.open(1, 'pending', minuteAgo());
    const worker = world.start({ leaseMs: 5_000, intervalMs: 200, maxIntervalMs: 200 });
    await vi.advanceTimersByTimeAsync(10);
    // Leased and checked at the same moment: 5 000 ms of lease, 500 ms of margin.
    expect(world.checks.map((check) => check.timeoutMs)).toEqual([4_500]);
    await worker.stop();
  });

  it('while its lease cannot be renewed, no check starts that could outlive it, nor with less than a margin left', async () => {
    // The schedule's jitter at its middle: checked every 200 ms exactly (new: its age slows nothing yet).
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const world = setup((id) => pending(id));
    const [id] = await world.open(1, 'pending');
    const renew = world.journal.renew.bind(world.journal);
    let renewing = false;
    world.journal.renew = async (owner, ids, leaseMs) => {
      if (!renewing) throw new Error('the database is restarting');
      return renew(owner, ids, leaseMs);
    };
    const startedAt = Date.now();
    const worker = world.start({ leaseMs: 3_000, initialDelayMs: 0, intervalMs: 200, maxIntervalMs: 200, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    // Leased at the start until 3 000 ms; a margin of 300 ms.
    const checks = world.checks.map((check) => ({ at: check.at - startedAt, timeoutMs: check.timeoutMs }));
    expect(checks.length).toBeGreaterThanOrEqual(8);
    for (const check of checks) {
      expect(check.at + check.timeoutMs).toBeLessThanOrEqual(3_000 - 300);
      expect(check.timeoutMs).toBeGreaterThanOrEqual(300);
    }
    // The last at 2 400 ms, with exactly the margin left for it.
    expect(checks.at(-1)).toEqual({ at: 2_400, timeoutMs: 300 });
    // The journal answers again: the lease ran out there, so the renewal loses it and nothing more is checked here.
    renewing = true;
    const seen = world.checks.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(seen);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 1 })).toEqual([
      expect.objectContaining({ referenceId: id }),
    ]);
    await worker.stop();
  });

  it('a renewal late but in time: the checks near the end of the lease wait for it, then go on, one at a time', async () => {
    const world = setup((id) => pending(id));
    await world.open(1, 'pending');
    const renew = world.journal.renew.bind(world.journal);
    // The renewals due at 1 000 ms fail until 2 500 ms (tried again every 300 ms): the lease bound nears meanwhile.
    world.journal.renew = async (owner, ids, leaseMs) => {
      if (Date.now() - startedAt < 2_500) throw new Error('the database is restarting');
      return renew(owner, ids, leaseMs);
    };
    const startedAt = Date.now();
    const worker = world.start({ leaseMs: 3_000, initialDelayMs: 0, intervalMs: 200, maxIntervalMs: 200, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(6_000);
    const offsets = world.checks.map((check) => check.at - startedAt);
    // None started with less than two margins (600 ms) of the first lease left; checks went on after the renewal.
    expect(offsets.filter((at) => at > 2_400 && at < 2_500)).toEqual([]);
    expect(offsets.filter((at) => at >= 2_500).length).toBeGreaterThanOrEqual(10);
    expect(world.maxInFlight()).toBe(1);
    await worker.stop();
  });

  it('a payment whose lease was lost between checks is checked again once it is leased back', async () => {
    const world = setup((id) => pending(id));
    const [id] = await world.open(1, 'pending', minuteAgo());
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const worker = world.start({ leaseMs: 6_000, intervalMs: 2_500, maxIntervalMs: 2_500, scanIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    await world.journal.release(worker.workerId, [id as string]);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 3_000, limit: 1 })).toHaveLength(1);
    // The renewal at 2 s finds it lost before its next check (2.5 s); the other lease runs out at 3.1 s.
    await vi.advanceTimersByTimeAsync(2_900);
    expect(world.checks).toHaveLength(1);
    // The next scan leases it back: due at once.
    await vi.advanceTimersByTimeAsync(300);
    expect(world.checks).toHaveLength(2);
    await worker.stop();
  });

  it('a payment waiting in the queue whose lease the renewal found lost is dropped there, never checked', async () => {
    // The schedule's jitter at its middle: the pause is exactly intervalMs, under half a lease, so it is kept.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const world = setup((id) => pending(id));
    const [id] = await world.open(1, 'pending', minuteAgo());
    const worker = world.start({ leaseMs: 30_000, intervalMs: 12_000, maxIntervalMs: 12_000, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    // Another owner holds it now (as after a stall past the lease); the renewal at 10 s finds out; it was due at 12 s.
    await world.journal.release(worker.workerId, [id as string]);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 60_000, limit: 1 })).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(world.checks).toHaveLength(1);
    await worker.stop();
  });

  it('a payment whose creation time cannot be read is checked on its schedule, never in a loop', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const world = setup((id) => pending(id));
    await world.open(1, 'pending', minuteAgo());
    const lease = world.journal.lease.bind(world.journal);
    world.journal.lease = async (request) => (await lease(request)).map((record) => ({ ...record, createdAt: 'not a time' }));
    const worker = world.start({ intervalMs: 1_000, maxIntervalMs: 1_000, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(3_500);
    // At once (no quiet start can be told), then once a second.
    expect(world.checks).toHaveLength(4);
    await worker.stop();
  });

  it('stop() waits for a scan under way, then hands back what it leased', async () => {
    const world = setup((id) => pending(id));
    await world.open(2, 'pending', minuteAgo());
    const lease = world.journal.lease.bind(world.journal);
    let answer: () => void = () => undefined;
    world.journal.lease = (request) =>
      new Promise((resolve) => {
        answer = () => resolve(lease(request));
      });
    const worker = world.start();
    const stopped = worker.stop();
    answer();
    await stopped;
    expect(world.checks).toEqual([]);
    world.journal.lease = lease;
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 10 })).toHaveLength(2);
  });

  it('stop() waits for onSettled under way', async () => {
    const world = setup((id) => paid(id));
    await world.open(1, 'pending', minuteAgo());
    let delivered: () => void = () => undefined;
    const worker = world.start({ onSettled: () => new Promise<void>((resolve) => (delivered = resolve)) });
    await vi.advanceTimersByTimeAsync(100);
    let done = false;
    const stopped = worker.stop().then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(done).toBe(false);
    delivered();
    await stopped;
  });

  it('stop() waits for a lease step a check began (a park)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const parking = setup((id) => pending(id));
    await parking.open(1, 'pending', minuteAgo());
    const renew = parking.journal.renew.bind(parking.journal);
    let renewed: () => void = () => undefined;
    parking.journal.renew = (owner, ids, leaseMs) =>
      new Promise((resolve) => {
        renewed = () => resolve(renew(owner, ids, leaseMs));
      });
    const parked = parking.start({ leaseMs: 30_000, intervalMs: 20_000, maxIntervalMs: 20_000, scanIntervalMs: 60_000 });
    await vi.advanceTimersByTimeAsync(100);
    expect(parking.checks).toHaveLength(1);
    let parkedDone = false;
    const parkedStopped = parked.stop().then(() => {
      parkedDone = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(parkedDone).toBe(false);
    renewed();
    await parkedStopped;
  });

  it('an aborted signal stops the worker: nothing more is checked, its leases are handed back', async () => {
    const world = setup((id) => pending(id));
    await world.open(1, 'pending', minuteAgo());
    const controller = new AbortController();
    const worker = world.start({ signal: controller.signal, intervalMs: 200, maxIntervalMs: 200 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    controller.abort();
    await worker.done;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(world.checks).toHaveLength(1);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 30_000, limit: 1 })).toHaveLength(1);
  });
});

describe('settlement worker scheduler: its timer', () => {
  it("a new payment's first check takes the token re-checks leave, at once, while re-checks fill the budget", async () => {
    const world = setup((id) => pending(id));
    // Two payments (the worker's quota at 2 checks a second), each due every second: more than the budget gives
    // re-checks (one token of two, each spent for 1.25 s).
    await world.open(2, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ requestsPerSecond: 2, initialDelayMs: 0, intervalMs: 1_000, maxIntervalMs: 1_000, scanIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(5_000);
    const openedAt = Date.now();
    const [fresh] = await world.open(1);
    await vi.advanceTimersByTimeAsync(2_000);
    const first = world.checks.find((check) => check.referenceId === fresh);
    // Leased at the next scan (at most 100 ms), then checked at once: the token kept for first checks is free.
    expect((first?.at ?? Number.POSITIVE_INFINITY) - openedAt).toBeLessThanOrEqual(100);
    await worker.stop();
  });

  it('checks that end before taking their token (a client refusing before the request leaves) leave the budget whole', async () => {
    const world = setup((id) => pending(id));
    await world.open(1);
    const sent: number[] = [];
    const called: number[] = [];
    let calls = 0;
    const startedAt = Date.now();
    const worker = world.start(
      { requestsPerSecond: 2, initialDelayMs: 0, intervalMs: 200, maxIntervalMs: 200 },
      {
        // As the client's check does: the token is taken right before the request leaves.
        tokenAtSend: true,
        check: async (referenceId, _timeoutMs, _signal, takeToken) => {
          calls++;
          called.push(Date.now() - startedAt);
          if (calls <= 4)
            throw new InternalServerError({
              code: undefined,
              requestId: undefined,
              body: undefined,
              service: 'collections',
              status: 503,
              message: 'refused before sending',
            });
          await takeToken?.();
          sent.push(Date.now());
          return pending(referenceId);
        },
      },
    );
    await vi.advanceTimersByTimeAsync(6_000);
    expect(calls).toBeGreaterThan(4);
    // The failures spent no token either: they came on the schedule (every 200 ms), not at the budget's pace.
    expect(called.slice(0, 4).every((at, index) => at <= index * 250)).toBe(true);
    // Then re-checks at the budget's pace (one of its two tokens a window is kept for first checks, and a token is
    // spent for 1.25 s): none of it kept by the checks that never sent.
    expect(sent.length).toBeGreaterThanOrEqual(4);
    await worker.stop();
  });

  it('a new payment still in its quiet start holds back no re-check that is due', async () => {
    const world = setup((id) => pending(id));
    const [old] = await world.open(1, 'pending', new Date(Date.now() - 60_000).toISOString());
    const worker = world.start({ initialDelayMs: 5_000, intervalMs: 1_000, maxIntervalMs: 1_000, scanIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(100);
    const [young] = await world.open(1);
    await vi.advanceTimersByTimeAsync(4_500);
    const checked = (id: string | undefined) => world.checks.filter((check) => check.referenceId === id).length;
    expect(checked(old)).toBeGreaterThanOrEqual(4);
    expect(checked(young)).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(checked(young)).toBe(1);
    await worker.stop();
  });

  it('wakes for each check when it is due, however far off the next scan and renewal are', async () => {
    // The schedule's jitter at its middle: every pause is exact.
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const world = setup((id, call) => (call === 5 ? paid(id) : pending(id)));
    const created = Date.now();
    await world.open(1);
    const worker = world.start({
      initialDelayMs: 5_000,
      intervalMs: 1_000,
      maxIntervalMs: 2_000,
      scanIntervalMs: 60_000,
      leaseMs: 120_000,
    });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(world.checks.map((check) => check.at - created)).toEqual([5_000, 6_000, 7_500, 9_500, 11_500]);
    await worker.stop();
  });
});
