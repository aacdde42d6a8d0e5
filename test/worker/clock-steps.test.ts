/**
 * The settlement worker under a step of this machine's wall clock (NTP, a suspended VM set right, an operator): its
 * leases are measured by the journal's clock, so its renewals, due times and checks' time limits must not follow the
 * step. Fake timers: `vi.setSystemTime` steps `Date` alone; `performance.now()` (and the timers) keep true time, as a
 * real machine's monotonic clock does. The journal here keeps true time too: it is another machine's clock.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CollectionStatus } from '../../src/collections/schemas.ts';
import { type SettlementWorkerContext, startSettlementWorker } from '../../src/collections/settlement-worker.ts';
import { StatusWords } from '../../src/collections/status-words.ts';
import { LevelLogger } from '../../src/core/logger.ts';
import { MemoryJournal } from '../../src/journal/memory.ts';
import { RecordWatch } from '../../src/journal/record-watch.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const LEASE_MS = 3_000;

/**
 * A journal on true time, `count` pending payments created just now (young: their age does not slow their checks), and
 * a status check that always says pending.
 */
async function world(count: number) {
  const origin = Date.now() - performance.now();
  const journalNow = () => origin + performance.now();
  const journal = new MemoryJournal({ now: journalNow });
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const referenceId = randomUUID();
    ids.push(referenceId);
    await journal.insert({
      referenceId,
      state: 'pending',
      productId: randomUUID(),
      amount: 10,
      currency: 'ZMW',
      phoneNumber: '260*******56',
      fingerprint: 'x',
      sendWindowMs: 0,
    });
  }
  /** Each check: the payment and when it was sent, in true time (the monotonic clock). */
  const checks: { referenceId: string; at: number }[] = [];
  const context: SettlementWorkerContext = {
    journal,
    timeoutMs: 1_000,
    maxRetries: 0,
    logger: new LevelLogger(silent, 'off'),
    statusWords: new StatusWords(),
    judgeNotFound: async () => undefined,
    watch: new RecordWatch(),
    check: async (referenceId): Promise<CollectionStatus> => {
      checks.push({ referenceId, at: performance.now() });
      return { referenceId, statusText: 'pending', transactionCode: null, reason: null };
    },
  };
  return { journal, ids, checks, context };
}

/** Another worker, on a machine whose clock did not step, tries to lease the payments; what it got. */
async function otherWorkerLeases(journal: MemoryJournal): Promise<string[]> {
  return (await journal.lease({ owner: 'another-worker', leaseMs: LEASE_MS, limit: 100 })).map((record) => record.referenceId);
}

/** The pause between a payment's checks in these tests: the schedule a step of the wall clock must not change. */
const PAUSE_MS = 1_000;

/** A worker checking every payment every {@link PAUSE_MS}, with short leases and scans. */
function startOnSchedule(context: SettlementWorkerContext) {
  return startSettlementWorker(context, {
    initialDelayMs: 0,
    leaseMs: LEASE_MS,
    intervalMs: PAUSE_MS,
    maxIntervalMs: PAUSE_MS,
    scanIntervalMs: 100,
  });
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'], now: new Date('2026-11-21T10:00:00.000Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('settlement worker under a step of its wall clock', () => {
  it('still renews its leases in time when its wall clock steps back by more than a lease, and keeps checking on schedule', async () => {
    const { journal, ids, checks, context } = await world(5);
    const worker = startOnSchedule(context);
    await vi.advanceTimersByTimeAsync(500);
    expect(new Set(checks.map((check) => check.referenceId))).toEqual(new Set(ids));
    vi.setSystemTime(Date.now() - 10 * LEASE_MS);
    const stepAt = performance.now();
    // Three leases long, another worker tries every 100 ms: the journal never hands it a payment this worker holds.
    for (let elapsed = 0; elapsed < 3 * LEASE_MS; elapsed += 100) {
      await vi.advanceTimersByTimeAsync(100);
      expect(await otherWorkerLeases(journal), `${elapsed + 100} ms after the step`).toEqual([]);
    }
    // Its checks did not wait for the wall clock to catch up: each payment was checked again within its schedule.
    for (const id of ids) {
      const after = checks.filter((check) => check.referenceId === id && check.at > stepAt).map((check) => check.at);
      expect(after.length, id).toBeGreaterThan(0);
      expect((after[0] as number) - stepAt, id).toBeLessThanOrEqual(PAUSE_MS * 1.1);
    }
    await worker.stop();
  });

  it('neither checks early nor drops its leases when its wall clock steps forward', async () => {
    const { journal, ids, checks, context } = await world(5);
    const worker = startOnSchedule(context);
    await vi.advanceTimersByTimeAsync(50);
    const first = new Map(checks.map((check) => [check.referenceId, check.at]));
    expect(new Set(first.keys())).toEqual(new Set(ids));
    // Half a lease: on the wall clock, every payment is due at once and its lease still seems long enough to check it.
    vi.setSystemTime(Date.now() + LEASE_MS / 2);
    for (let elapsed = 0; elapsed < 3 * LEASE_MS; elapsed += 100) {
      await vi.advanceTimersByTimeAsync(100);
      expect(await otherWorkerLeases(journal), `${elapsed + 100} ms after the step`).toEqual([]);
    }
    // Each payment's next check came after its pause (jittered by at most 10 %), not at the step, and came.
    for (const id of ids) {
      const again = checks.filter((check) => check.referenceId === id && check.at > (first.get(id) as number)).map((check) => check.at);
      expect(again.length, id).toBeGreaterThan(0);
      expect((again[0] as number) - (first.get(id) as number), id).toBeGreaterThanOrEqual(PAUSE_MS * 0.9);
    }
    await worker.stop();
  });
});
