/**
 * The rules of a settlement worker's leases (src/collections/worker-leases.ts), one at a time: how much a scan asks
 * for and when it looks again, what a renewal keeps and drops, when a checked payment is kept or parked, setting a
 * payment of another deployment aside, releasing on stop, and what an adopted payment is handed to the worker with.
 * A memory journal with fake timers; the worker that owns the leases is replaced by the hooks it would give.
 * (The same rules as a running worker shows them: scheduler.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JournalOutage } from '../../src/collections/journal-outage.ts';
import { plan, SET_ASIDE_MS } from '../../src/collections/settlement-worker-options.ts';
import { type Held, WorkerLeases } from '../../src/collections/worker-leases.ts';
import { LevelLogger } from '../../src/core/logger.ts';
import type { PaymentDeployment, PaymentJournal, PaymentState } from '../../src/journal/journal.ts';
import { MemoryJournal } from '../../src/journal/memory.ts';
import { RecordWatch } from '../../src/journal/record-watch.ts';
import { PHONES } from '../../src/testing/index.ts';
import { openRecord } from './journal-records.ts';

const LEASE_MS = 30_000;
const SCAN_INTERVAL_MS = 5_000;
const INITIAL_DELAY_MS = 3_000;
const deployment: PaymentDeployment = { baseUrl: 'https://collections.example', account: 'account-1' };

interface Options {
  readonly quota?: number;
  readonly reserve?: number;
  /** The context's deployment check: present when the client can tell a record of another deployment. */
  readonly deploymentMismatch?: boolean;
  /** @defaultValue 30 000 */
  readonly leaseMs?: number;
}

/** Leases of worker "worker-a" over a memory journal, with the owner's hooks recorded. */
function setup({ quota = 4, reserve = 1, deploymentMismatch = false, leaseMs = LEASE_MS }: Options = {}) {
  const journal = new MemoryJournal({ now: () => Date.now() });
  const sink = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const logger = new LevelLogger(sink, 'debug');
  const outage = new JournalOutage(logger);
  const watch = new RecordWatch();
  const watched = vi.spyOn(watch, 'watched');
  const adopted: { entry: Held; pauseMs: number }[] = [];
  const tracked: Promise<void>[] = [];
  let changes = 0;
  const leases = new WorkerLeases(
    'worker-a',
    {
      journal,
      logger,
      watch,
      deploymentMismatch: deploymentMismatch ? async () => undefined : undefined,
    },
    plan({ leaseMs, scanIntervalMs: SCAN_INTERVAL_MS, initialDelayMs: INITIAL_DELAY_MS }),
    { quota, reserve },
    outage,
    {
      adopted: (entry, pauseMs) => void adopted.push({ entry, pauseMs }),
      changed: () => void changes++,
      track: (task) => void tracked.push(task),
    },
  );
  /** Opens `count` payments in `state`, created `ageMs` ago (the journal's clock is this machine's). */
  async function open(count: number, state: PaymentState = 'pending', ageMs = 0, extra: { deployment?: PaymentDeployment } = {}) {
    const ids: string[] = [];
    const now = Date.now();
    vi.setSystemTime(now - ageMs);
    for (let index = 0; index < count; index++) {
      const record = { ...openRecord(PHONES.succeeds, state), ...extra };
      ids.push(record.referenceId);
      await journal.insert(record);
    }
    vi.setSystemTime(now);
    return ids;
  }
  /** Starts what is due now and waits until the scan and the renewal under way have ended. */
  async function step() {
    leases.startDue(performance.now());
    while (leases.running.length > 0) await vi.advanceTimersByTimeAsync(0);
  }
  /** Each warning's message and fields, as the logger's sink was given them. */
  const warnings = () => sink.warn.mock.calls;
  const lines = (level: 'debug' | 'warn') => sink[level].mock.calls.map((call) => String(call[0]).replace('[tap-collections-sdk] ', ''));
  /** Makes the outage tracker see the journal down, as a worker's own failed journal call would. */
  async function journalDown() {
    const failing = { get: async () => Promise.reject(new Error('connection refused')) } as unknown as PaymentJournal;
    await outage
      .watch(failing)
      .get('x')
      .catch(() => undefined);
    expect(outage.down).toBe(true);
  }
  return {
    journal,
    leases,
    open,
    step,
    adopted,
    tracked,
    watched,
    lines,
    warnings,
    journalDown,
    changes: () => changes,
    /** Who holds `referenceId`'s lease now, and until when (the journal's clock), as the next lease call sees it. */
    holder: async (referenceId: string) => {
      const other = await journal.lease({ owner: 'worker-b', leaseMs: 1, limit: 100 });
      const free = other.some((record) => record.referenceId === referenceId);
      if (free) await journal.release('worker-b', [referenceId]);
      return free ? 'free' : 'held';
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('a worker scan', () => {
  it('asks for the quota and the reserve less what it holds, and never more than 5 000 records in one call', async () => {
    const world = setup({ quota: 4, reserve: 2 });
    const lease = vi.spyOn(world.journal, 'lease');
    await world.open(3);
    await world.step();
    expect(lease.mock.calls[0]?.[0]).toEqual({ owner: 'worker-a', leaseMs: LEASE_MS, limit: 6 });
    await world.open(10);
    vi.advanceTimersByTime(SCAN_INTERVAL_MS);
    await world.step();
    expect(lease.mock.calls[1]?.[0]).toMatchObject({ limit: 3 });

    const large = setup({ quota: 9_000, reserve: 2_000 });
    const largeLease = vi.spyOn(large.journal, 'lease');
    await large.step();
    expect(largeLease.mock.calls[0]?.[0]).toMatchObject({ limit: 5_000 });
  });

  it('with no room left, asks the journal nothing and looks again a scan interval later', async () => {
    const world = setup({ quota: 1, reserve: 1 });
    await world.open(2);
    await world.step();
    expect(world.adopted).toHaveLength(2);
    const lease = vi.spyOn(world.journal, 'lease');
    vi.advanceTimersByTime(SCAN_INTERVAL_MS);
    const now = performance.now();
    world.leases.startDue(now);
    expect(lease).not.toHaveBeenCalled();
    expect(world.leases.running).toEqual([]);
    // The renewal is due a third of a lease after the start; the scan a scan interval from now.
    expect(world.leases.nextDueAt).toBe(now + SCAN_INTERVAL_MS);
  });

  it('a full batch looks again at once; a batch with room to spare, a scan interval later', async () => {
    const world = setup({ quota: 2, reserve: 1 });
    await world.open(3);
    await world.step();
    expect(world.adopted).toHaveLength(3);
    expect(world.leases.nextDueAt).toBe(performance.now());

    const roomy = setup({ quota: 2, reserve: 1 });
    await roomy.open(2);
    await roomy.step();
    expect(roomy.adopted).toHaveLength(2);
    expect(roomy.leases.nextDueAt).toBe(performance.now() + SCAN_INTERVAL_MS);
  });

  it('a failed scan looks again a scan interval later, and tells the worker its step ended', async () => {
    const world = setup();
    vi.spyOn(world.journal, 'lease').mockRejectedValueOnce(new Error('connection refused'));
    await world.step();
    expect(world.changes()).toBe(1);
    expect(world.leases.nextDueAt).toBe(performance.now() + SCAN_INTERVAL_MS);
    expect(world.lines('warn')).toEqual(['settlement worker: could not lease open payments; trying again']);
  });

  it("a failed scan is not said again while the journal's outage is being reported", async () => {
    const world = setup();
    await world.journalDown();
    vi.spyOn(world.journal, 'lease').mockRejectedValueOnce(new Error('connection refused'));
    await world.step();
    expect(world.lines('warn')).toEqual(['settlement worker: could not use the journal; leases, checks and records wait until it answers']);
  });

  it('the lease of a payment leased again runs from the new call, and the payment is not handed over twice', async () => {
    const world = setup();
    const [id] = await world.open(1);
    await world.step();
    const entry = world.leases.get(id as string) as Held;
    expect(entry.leaseUntil).toBe(performance.now() + LEASE_MS);
    // Its lease runs out in the journal while the worker still has it on its books: the next scan leases it again.
    vi.advanceTimersByTime(LEASE_MS);
    await world.step();
    expect(world.adopted).toHaveLength(1);
    expect(world.leases.get(id as string)).toBe(entry);
    expect(entry.leaseUntil).toBe(performance.now() + LEASE_MS);
  });
});

describe('a payment adopted', () => {
  it('is fresh while younger than a minute, by the journal clock against this machine', async () => {
    const world = setup({ quota: 10 });
    const [young] = await world.open(1, 'pending', 59_999);
    const [old] = await world.open(1, 'pending', 60_000);
    await world.step();
    expect(world.leases.get(young as string)?.fresh).toBe(true);
    expect(world.leases.get(old as string)?.fresh).toBe(false);
  });

  it('is handed over due at the end of its quiet start, or now when that is over, never later than the start', async () => {
    const world = setup({ quota: 10 });
    const [now] = await world.open(1, 'pending', 0);
    const [partway] = await world.open(1, 'pending', 1_000);
    const [over] = await world.open(1, 'pending', 10_000);
    await world.step();
    const pauses = new Map(world.adopted.map(({ entry, pauseMs }) => [entry.referenceId, pauseMs]));
    expect(pauses.get(now as string)).toBe(INITIAL_DELAY_MS);
    expect(pauses.get(partway as string)).toBe(INITIAL_DELAY_MS - 1_000);
    expect(pauses.get(over as string)).toBe(INITIAL_DELAY_MS - 10_000);
    // A journal clock ahead of this machine's: the quiet start stays the schedule's.
    const ahead = setup();
    const [future] = await ahead.open(1, 'pending', -50_000);
    await ahead.step();
    expect(ahead.adopted.map(({ entry, pauseMs }) => [entry.referenceId, pauseMs])).toEqual([[future, INITIAL_DELAY_MS]]);
  });

  it('carries what the record says: state, status text, first pause, lease, and not yet queued, gone or due', async () => {
    const world = setup();
    const [id] = await world.open(1, 'initiating', 0, { deployment });
    await world.step();
    expect(world.adopted[0]?.entry).toEqual({
      referenceId: id,
      createdAt: Date.now(),
      fresh: true,
      state: 'initiating',
      statusText: undefined,
      pauses: 1,
      leaseUntil: performance.now() + LEASE_MS,
      dueAt: 0,
      queued: false,
      gone: false,
      deployment,
      vetted: true,
    });
  });

  it('is vetted (its deployment needs no check) unless the record names one and the client can tell another', async () => {
    const vettedBy = async (named: boolean, mismatch: boolean) => {
      const world = setup({ deploymentMismatch: mismatch });
      await world.open(1, 'pending', 0, named ? { deployment } : {});
      await world.step();
      return world.adopted[0]?.entry.vetted;
    };
    expect(await vettedBy(false, false)).toBe(true);
    expect(await vettedBy(false, true)).toBe(true);
    expect(await vettedBy(true, false)).toBe(true);
    expect(await vettedBy(true, true)).toBe(false);
  });

  it("starts this process's watch of an initiating or unknown record, and of no other", async () => {
    const world = setup({ quota: 10 });
    const [initiating] = await world.open(1, 'initiating');
    const [unknown] = await world.open(1, 'unknown');
    await world.open(1, 'pending');
    await world.step();
    expect(world.adopted).toHaveLength(3);
    expect(world.watched.mock.calls.map(([record]) => record.referenceId).sort()).toEqual([initiating, unknown].sort());
  });
});

describe('renewing', () => {
  it('is first due a third of a lease after the leases start; with nothing held, it asks nothing and waits again', async () => {
    const world = setup();
    const start = performance.now();
    expect(world.leases.nextRenewAt).toBe(start + LEASE_MS / 3);
    expect(world.leases.renewing).toBe(false);
    const renew = vi.spyOn(world.journal, 'renew');
    vi.advanceTimersByTime(LEASE_MS / 3);
    await world.step();
    expect(renew).not.toHaveBeenCalled();
    expect(world.leases.nextRenewAt).toBe(start + (2 * LEASE_MS) / 3);
  });

  it('starts exactly when due, runs until the journal answers, keeps what it renewed and forgets what it lost', async () => {
    const world = setup({ quota: 10 });
    const ids = (await world.open(3)) as [string, string, string];
    await world.step();
    // Another worker took the second payment's lease after ours ran out in the journal (a stalled process).
    await world.journal.release('worker-a', [ids[1]]);
    await world.journal.lease({ owner: 'worker-b', leaseMs: LEASE_MS, limit: 1 });
    const lost = world.leases.get(ids[1]) as Held;
    const renew = vi.spyOn(world.journal, 'renew');
    // A millisecond early: the scan (due) runs, the renewal does not.
    vi.advanceTimersByTime(LEASE_MS / 3 - 1);
    await world.step();
    expect(renew).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    const sentAt = performance.now();
    const changesBefore = world.changes();
    world.leases.startDue(sentAt);
    expect(world.leases.renewing).toBe(true);
    expect(world.leases.running).toHaveLength(1);
    await world.step();
    expect(world.leases.renewing).toBe(false);
    expect(world.changes()).toBe(changesBefore + 1);
    expect(world.leases.get(ids[0])?.leaseUntil).toBe(sentAt + LEASE_MS);
    expect(world.leases.get(ids[1])).toBeUndefined();
    expect(lost.gone).toBe(true);
    expect(world.leases.nextRenewAt).toBe(sentAt + LEASE_MS / 3);
  });

  it('renews 1 000 leases per call, a timer turn apart', async () => {
    const world = setup({ quota: 2_400, reserve: 100 });
    await world.open(2_500);
    await world.step();
    const renew = vi.spyOn(world.journal, 'renew');
    vi.advanceTimersByTime(LEASE_MS / 3);
    world.leases.startDue(performance.now());
    // The first batch answers; the second waits for a timer turn.
    for (let turn = 0; turn < 20; turn++) await Promise.resolve();
    expect(renew.mock.calls.map(([, batch]) => batch.length)).toEqual([1_000]);
    // A timer set while fake timers tick waits a millisecond.
    while (world.leases.running.length > 0) await vi.advanceTimersByTimeAsync(1);
    expect(renew.mock.calls.map(([, batch]) => batch.length)).toEqual([1_000, 1_000, 500]);
    expect(new Set(renew.mock.calls.flatMap(([, batch]) => batch)).size).toBe(2_500);
  });

  it('skips a payment forgotten while the renewal was out', async () => {
    const world = setup({ quota: 10 });
    const ids = (await world.open(2)) as [string, string];
    await world.step();
    const renew = world.journal.renew.bind(world.journal);
    vi.spyOn(world.journal, 'renew').mockImplementationOnce(async (owner, batch, leaseMs) => {
      const kept = await renew(owner, batch, leaseMs);
      // Settled meanwhile: the worker forgot it; the journal still renewed its lease.
      world.leases.forget(world.leases.get(ids[0]) as Held);
      return kept;
    });
    vi.advanceTimersByTime(LEASE_MS / 3);
    await world.step();
    expect(world.leases.get(ids[0])).toBeUndefined();
    expect(world.leases.get(ids[1])?.leaseUntil).toBe(performance.now() + LEASE_MS);
  });

  it('a failed renewal is said, and tried again after a tenth of a lease, at most a second', async () => {
    const world = setup();
    await world.open(1);
    await world.step();
    vi.spyOn(world.journal, 'renew').mockRejectedValue(new Error('connection refused'));
    vi.advanceTimersByTime(LEASE_MS / 3);
    await world.step();
    expect(world.lines('warn')).toEqual(['settlement worker: could not renew leases; trying again']);
    expect(world.leases.nextRenewAt).toBe(performance.now() + 1_000);

    // A lease of 5 s: a tenth of it.
    const short = setup({ leaseMs: 5_000 });
    await short.open(1);
    await short.step();
    vi.spyOn(short.journal, 'renew').mockRejectedValue(new Error('connection refused'));
    vi.advanceTimersByTime(Math.ceil(5_000 / 3));
    await short.step();
    expect(short.leases.nextRenewAt).toBe(performance.now() + 500);
  });

  it("a failed renewal is not said again while the journal's outage is being reported", async () => {
    const world = setup();
    await world.open(1);
    await world.step();
    await world.journalDown();
    vi.spyOn(world.journal, 'renew').mockRejectedValue(new Error('connection refused'));
    vi.advanceTimersByTime(LEASE_MS / 3);
    await world.step();
    expect(world.lines('warn')).not.toContain('settlement worker: could not renew leases; trying again');
  });
});

describe('after a check that leaves a payment open', () => {
  it('keeps it while its next check is under half a lease away and the quota is not passed', async () => {
    const world = setup({ quota: 2, reserve: 1 });
    const ids = (await world.open(2)) as [string, string];
    await world.step();
    const renew = vi.spyOn(world.journal, 'renew');
    expect(world.leases.park(world.leases.get(ids[0]) as Held, LEASE_MS / 2 - 1)).toBe(false);
    expect(world.leases.get(ids[0])?.gone).toBe(false);
    expect(renew).not.toHaveBeenCalled();
    expect(world.tracked).toEqual([]);
  });

  it('parks it from half a lease away: its lease renewed until then, then forgotten', async () => {
    const world = setup({ quota: 2, reserve: 1 });
    const ids = (await world.open(2)) as [string, string];
    await world.step();
    const renew = vi.spyOn(world.journal, 'renew');
    const entry = world.leases.get(ids[0]) as Held;
    expect(world.leases.park(entry, LEASE_MS / 2)).toBe(true);
    expect(entry.gone).toBe(true);
    expect(world.leases.get(ids[0])).toBeUndefined();
    expect(renew.mock.calls).toEqual([['worker-a', [ids[0]], LEASE_MS / 2]]);
    expect(world.tracked).toHaveLength(1);
    await Promise.all(world.tracked);
    vi.advanceTimersByTime(LEASE_MS / 2 - 1);
    expect(await world.holder(ids[0])).toBe('held');
    vi.advanceTimersByTime(1);
    expect(await world.holder(ids[0])).toBe('free');
  });

  it('parks it whatever its pause when the worker holds more than its quota (the reserve), for at least 1 ms', async () => {
    const world = setup({ quota: 2, reserve: 1 });
    const ids = (await world.open(3)) as [string, string, string];
    await world.step();
    const renew = vi.spyOn(world.journal, 'renew');
    expect(world.leases.park(world.leases.get(ids[0]) as Held, 0.4)).toBe(true);
    expect(renew.mock.calls).toEqual([['worker-a', [ids[0]], 1]]);
    // Back at the quota: the next is kept.
    expect(world.leases.park(world.leases.get(ids[1]) as Held, 0)).toBe(false);
  });

  it('a park the journal fails is said at debug only: the lease runs out by itself', async () => {
    const world = setup({ quota: 2, reserve: 1 });
    const ids = (await world.open(1)) as [string];
    await world.step();
    vi.spyOn(world.journal, 'renew').mockRejectedValueOnce(new Error('connection refused'));
    world.leases.park(world.leases.get(ids[0]) as Held, LEASE_MS);
    await expect(Promise.all(world.tracked)).resolves.toEqual([undefined]);
    expect(world.lines('debug')).toEqual(['settlement worker: could not park a payment; its lease runs out by itself']);
    expect(world.lines('warn')).toEqual([]);
  });
});

describe('a payment of another deployment', () => {
  it('is set aside: forgotten, its lease held for a minute, then left to lapse', async () => {
    const world = setup();
    const [id] = (await world.open(1)) as [string];
    await world.step();
    const entry = world.leases.get(id) as Held;
    world.leases.setAside(entry);
    expect(entry.gone).toBe(true);
    expect(world.leases.get(id)).toBeUndefined();
    expect(world.tracked).toHaveLength(1);
    await Promise.all(world.tracked);
    vi.advanceTimersByTime(SET_ASIDE_MS - 1);
    expect(await world.holder(id)).toBe('held');
    vi.advanceTimersByTime(1);
    expect(await world.holder(id)).toBe('free');
  });

  it('a set-aside the journal fails is said at debug only', async () => {
    const world = setup();
    const [id] = (await world.open(1)) as [string];
    await world.step();
    vi.spyOn(world.journal, 'renew').mockRejectedValueOnce(new Error('connection refused'));
    world.leases.setAside(world.leases.get(id) as Held);
    await expect(Promise.all(world.tracked)).resolves.toEqual([undefined]);
    expect(world.lines('debug')).toEqual(['settlement worker: could not set a payment aside; its lease runs out by itself']);
  });
});

describe('on stop', () => {
  it('every lease is handed back, 1 000 per call, and nothing is held after', async () => {
    const world = setup({ quota: 2_400, reserve: 100 });
    const ids = await world.open(2_500);
    await world.step();
    const release = vi.spyOn(world.journal, 'release');
    await world.leases.releaseAll();
    expect(release.mock.calls.map(([owner, batch]) => [owner, batch.length])).toEqual([
      ['worker-a', 1_000],
      ['worker-a', 1_000],
      ['worker-a', 500],
    ]);
    expect(new Set(release.mock.calls.flatMap(([, batch]) => batch))).toEqual(new Set(ids));
    expect(ids.map((id) => world.leases.get(id))).toEqual(ids.map(() => undefined));
    // Handed back: another worker leases them at once.
    expect(await world.journal.lease({ owner: 'worker-b', leaseMs: LEASE_MS, limit: 5_000 })).toHaveLength(2_500);
  });

  it('a release the journal fails is said, and the next batch is still handed back', async () => {
    const world = setup({ quota: 1_400, reserve: 100 });
    await world.open(1_500);
    await world.step();
    const release = vi.spyOn(world.journal, 'release').mockRejectedValueOnce(new Error('connection refused'));
    await world.leases.releaseAll();
    expect(release).toHaveBeenCalledTimes(2);
    expect(world.lines('warn')).toEqual(['settlement worker: could not release leases; they run out by themselves']);
  });

  it("a release failed while the journal's outage is being reported is not said again", async () => {
    const world = setup();
    await world.open(1);
    await world.step();
    await world.journalDown();
    vi.spyOn(world.journal, 'release').mockRejectedValueOnce(new Error('connection refused'));
    await world.leases.releaseAll();
    expect(world.lines('warn')).not.toContain('settlement worker: could not release leases; they run out by themselves');
  });
});

describe('what is due', () => {
  it('is the scan at once on a new worker; while a step runs, the other; while both run, nothing', async () => {
    const world = setup();
    await world.open(1);
    expect(world.leases.nextDueAt).toBe(0);
    expect(world.leases.running).toEqual([]);
    world.leases.startDue(performance.now());
    // The scan is under way: the renewal is next.
    expect(world.leases.nextDueAt).toBe(world.leases.nextRenewAt);
    expect(world.leases.running).toHaveLength(1);
    // Hold the scan open while the renewal starts.
    await world.step();
    let answerLease: (records: never[]) => void = () => undefined;
    vi.spyOn(world.journal, 'lease').mockReturnValueOnce(new Promise((resolve) => (answerLease = resolve)));
    let answerRenew: (ids: string[]) => void = () => undefined;
    vi.spyOn(world.journal, 'renew').mockReturnValueOnce(new Promise((resolve) => (answerRenew = resolve)));
    vi.advanceTimersByTime(LEASE_MS / 3);
    world.leases.startDue(performance.now());
    expect(world.leases.running).toHaveLength(2);
    expect(world.leases.nextDueAt).toBe(Number.POSITIVE_INFINITY);
    answerLease([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(world.leases.nextDueAt).toBe(performance.now() + SCAN_INTERVAL_MS);
    expect(world.leases.running).toHaveLength(1);
    answerRenew([]);
    await vi.advanceTimersByTimeAsync(0);
    expect(world.leases.running).toEqual([]);
  });
});

describe('batches', () => {
  it('a worker holding exactly 1 000 payments renews them in one call and hands them back in one', async () => {
    const world = setup({ quota: 900, reserve: 100 });
    await world.open(1_000);
    await world.step();
    const renew = vi.spyOn(world.journal, 'renew');
    const release = vi.spyOn(world.journal, 'release');
    vi.advanceTimersByTime(LEASE_MS / 3);
    world.leases.startDue(performance.now());
    while (world.leases.running.length > 0) await vi.advanceTimersByTimeAsync(1);
    expect(renew.mock.calls.map(([, batch]) => batch.length)).toEqual([1_000]);
    await world.leases.releaseAll();
    expect(release.mock.calls.map(([, batch]) => batch.length)).toEqual([1_000]);
    // Nothing held: nothing to hand back, no call.
    await world.leases.releaseAll();
    expect(release).toHaveBeenCalledTimes(1);
  });
});

describe('a foreign record', () => {
  it('whose referenceId the SDK never writes is handed back and said once, however often it is leased', async () => {
    const world = setup();
    vi.spyOn(world.journal, 'lease').mockResolvedValue([
      { referenceId: 'not-a-uuid', state: 'pending', createdAt: new Date().toISOString() } as never,
    ]);
    const release = vi.spyOn(world.journal, 'release');
    await world.step();
    vi.advanceTimersByTime(SCAN_INTERVAL_MS);
    await world.step();
    await Promise.all(world.tracked);
    expect(world.adopted).toEqual([]);
    expect(release.mock.calls).toEqual([
      ['worker-a', ['not-a-uuid']],
      ['worker-a', ['not-a-uuid']],
    ]);
    expect(world.lines('warn')).toEqual(['settlement worker: skipped a journal record whose referenceId is not a UUID']);
  });

  it('is named by the first 100 characters of its referenceId, quoted', async () => {
    const world = setup();
    const long = `${'a'.repeat(100)}${'b'.repeat(50)}`;
    vi.spyOn(world.journal, 'lease').mockResolvedValue([
      { referenceId: long, state: 'pending', createdAt: new Date().toISOString() } as never,
    ]);
    await world.step();
    expect(world.warnings()).toEqual([[expect.stringContaining('not a UUID'), { referenceId: `"${'a'.repeat(100)}"` }]]);
  });
});
