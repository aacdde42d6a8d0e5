/**
 * Two invariants judged on what the simulation observes, pinned on hand-made observations: the settlement worker's
 * re-check (a lapsed lease is a violation, a parked, renewed, released or re-checked one is not, and a worker that
 * could not act is not judged), and the adaptive key's windows judged by the rate a request was spent under.
 */
import { describe, expect, it } from 'vitest';
import { budgetWindowViolations, longestPauseMs, Rechecks } from './invariants.js';
import { type Proc, T0 } from './scheduler.js';

const proc = (name: string): Proc => ({
  id: name.length,
  name,
  offset: 0,
  drift: 0,
  started: true,
  dead: false,
  done: false,
  pausedUntil: 0,
  mortal: true,
});

/** A re-check ledger on a clock the test moves, and a scheduler that ran `late` processes late. */
function ledger(late: readonly Proc[] = []) {
  const clock = { now: T0 };
  const rechecks = new Rechecks({ now: () => clock.now, ranLate: (p) => late.includes(p), leaseOf: () => 30_000 }, () => {});
  return { clock, rechecks };
}

describe('the worker re-check invariant (RECHECK-LAPSED)', () => {
  const worker = proc('worker0');
  const other = proc('worker1');
  const reference = 'd16e0a14-0000-4000-8000-000000000000';
  const held = [{ id: reference, createdAt: T0 }];

  it('fails a lease that ran out after a check with no step of its holder', () => {
    const { clock, rechecks } = ledger();
    rechecks.leased(worker, held);
    clock.now += 2_000;
    rechecks.answered(worker, reference);
    clock.now += 30_000;
    rechecks.leased(other, held);
    expect(rechecks.violations).toHaveLength(1);
    expect(rechecks.violations[0]).toMatch(
      /^RECHECK-LAPSED: worker0 was answered about d16e0a14 at t\+2\.000s.*leased it to worker1 at t\+32\.000s/,
    );
  });

  it.each([
    ['checked it again', (r: Rechecks) => r.acted(worker, [reference])],
    ['parked or kept it (a renewal naming it)', (r: Rechecks) => r.acted(worker, [reference, 'another'])],
  ])('passes a holder that %s before the lease ran out', (_what, act) => {
    const { clock, rechecks } = ledger();
    rechecks.leased(worker, held);
    rechecks.answered(worker, reference);
    clock.now += 1_000;
    act(rechecks);
    clock.now += 60_000;
    rechecks.leased(other, held);
    expect(rechecks.violations).toEqual([]);
  });

  it('does not judge a holder that could not act: dead, late, or under a clock step', () => {
    for (const setup of ['dead', 'late', 'journal forward', 'lost lease'] as const) {
      const holder = proc(`w-${setup}`);
      const { clock, rechecks } = ledger(setup === 'late' ? [holder] : []);
      rechecks.leased(holder, held);
      clock.now += 1_000;
      // A renewal that came back without the payment: no longer its holder when the answer comes.
      if (setup === 'lost lease') rechecks.renewed(holder, [reference], []);
      rechecks.answered(holder, reference);
      if (setup === 'dead') holder.dead = true;
      if (setup === 'journal forward') rechecks.clockStep(undefined, 27_000);
      clock.now += 30_000;
      rechecks.leased(other, held);
      expect(rechecks.violations, setup).toEqual([]);
    }
  });

  it('judges a step that cannot end a lease early (the journal back, the own clock either way) as no excuse', () => {
    const { clock, rechecks } = ledger();
    rechecks.leased(worker, held);
    rechecks.answered(worker, reference);
    rechecks.clockStep(undefined, -27_000);
    rechecks.clockStep(worker, 60_000);
    rechecks.clockStep(worker, -60_000);
    clock.now += 30_000;
    rechecks.leased(worker, held);
    expect(rechecks.violations).toHaveLength(1);
  });
});

describe('the worker re-check time bound (RECHECK-LATE)', () => {
  const worker = proc('fleet-worker');
  const reference = 'acccc7f4-0000-4000-8000-000000000000';
  const held = [{ id: reference, createdAt: T0 }];
  const LEASE = 30_000;
  /** Timed checks, the payment leased to the worker and answered about at t+10 s. */
  function timed() {
    const { clock, rechecks } = ledger();
    rechecks.timed = (_p, createdAt) => longestPauseMs(clock.now - createdAt) + LEASE;
    rechecks.leased(worker, held);
    clock.now = T0 + 10_000;
    rechecks.answered(worker, reference, 'pending');
    return { clock, rechecks };
  }

  it('the longest pause: maxIntervalMs jittered, or by age up to a minute', () => {
    expect(longestPauseMs(0)).toBe(2_200);
    expect(longestPauseMs(30 * 60_000)).toBe(30_000);
    expect(longestPauseMs(5 * 3_600_000)).toBe(60_000);
    expect(longestPauseMs(5 * 3_600_000, 90_000)).toBeCloseTo(99_000);
  });

  it('passes a kept payment checked again within its longest pause and a lease, and fails one checked later', () => {
    const inTime = timed();
    inTime.clock.now += 2_200 + LEASE;
    inTime.rechecks.asked(worker, reference);
    expect(inTime.rechecks.violations).toEqual([]);
    const late = timed();
    late.rechecks.acted(worker, [reference], LEASE);
    late.clock.now += 2_200 + LEASE + 1;
    late.rechecks.asked(worker, reference);
    expect(late.rechecks.violations).toEqual([
      'RECHECK-LATE: fleet-worker kept acccc7f4 from t+10.000s (an answer, or the start of timed checks) and checked it again only at t+42.201s (due by t+42.200s: its longest pause and a lease)',
    ]);
  });

  it('fails a kept payment (renewed with the lease) never checked again while open, not a parked or a final one', () => {
    const kept = timed();
    kept.rechecks.acted(worker, [reference], LEASE);
    kept.clock.now += 60_000;
    kept.rechecks.finish(() => true);
    expect(kept.rechecks.violations).toHaveLength(1);
    const parked = timed();
    parked.rechecks.acted(worker, [reference], 12_345);
    parked.clock.now += 60_000;
    parked.rechecks.finish(() => true);
    expect(parked.rechecks.violations).toEqual([]);
    const final = timed();
    final.clock.now += 60_000;
    final.rechecks.finish(() => false);
    expect(final.rechecks.violations).toEqual([]);
  });

  it('times a payment kept from before the timing starts, not one parked then', () => {
    for (const [how, leaseMs, violations] of [
      ['kept', LEASE, 1],
      ['parked', 45_000, 0],
    ] as const) {
      const { clock, rechecks } = ledger();
      rechecks.leased(worker, held);
      rechecks.answered(worker, reference, 'pending');
      rechecks.acted(worker, [reference], leaseMs);
      clock.now += 5_000;
      rechecks.startTiming(() => 2_200 + LEASE);
      clock.now += 60_000;
      rechecks.finish(() => true);
      expect(rechecks.violations, how).toHaveLength(violations);
    }
  });

  it('does not time a worker paused by a 429', () => {
    const { clock, rechecks } = timed();
    rechecks.answered(worker, 'another', '429');
    clock.now += 60_000;
    rechecks.asked(worker, reference);
    expect(rechecks.violations).toEqual([]);
  });
});

describe("an adaptive key's windows", () => {
  // Grants: the learnt rate was 3 until t+10 s, then cut to 2; lookback of a lease (10 s) and 2 s.
  const grants = [
    { at: T0, limit: 3 },
    { at: T0 + 10_000, limit: 2 },
    { at: T0 + 14_000, limit: 2 },
    { at: T0 + 26_000, limit: 2 },
  ];
  const limitOf = (at: number, from?: number) => {
    let limit = 0;
    let before: number | undefined;
    for (const grant of grants) {
      if (grant.at > at + 1_000) break;
      if (grant.at < Math.min(at, from ?? at) - 12_000) before = grant.limit;
      else limit = Math.max(limit, grant.limit);
    }
    return Math.max(limit, before ?? 0);
  };

  it('judges a window by the rate learnt when its requests were handed to fetch, not by a rate learnt since', () => {
    // Spent at t+8 s under the rate 3, the request waited 20 s in a connection pool and arrived beside two others.
    const arrivals = [
      { at: T0 + 28_000, by: 'till0', handedAt: T0 + 8_000 },
      { at: T0 + 28_100, by: 'worker0', handedAt: T0 + 28_050 },
      { at: T0 + 28_400, by: 'worker1', handedAt: T0 + 28_350 },
    ];
    expect(budgetWindowViolations(arrivals, limitOf)).toEqual([]);
    // Judged by its arrivals alone, the rate learnt since (2) fails it.
    expect(
      budgetWindowViolations(
        arrivals.map(({ at, by }) => ({ at, by })),
        limitOf,
      ),
    ).toEqual(['BUDGET-WINDOW: 3 arrivals in 400 ms from t+28.000s (limit 2/s): till0 ×1, worker0 ×1, worker1 ×1']);
  });

  it('still fails a window whose requests were all spent under the rate learnt since', () => {
    const arrivals = [
      { at: T0 + 28_000, by: 'till0', handedAt: T0 + 27_900 },
      { at: T0 + 28_100, by: 'worker0', handedAt: T0 + 28_050 },
      { at: T0 + 28_400, by: 'worker1', handedAt: T0 + 28_350 },
    ];
    expect(budgetWindowViolations(arrivals, limitOf)).toHaveLength(1);
  });

  it('fails an arrival before anything was granted, and a fixed limit as before', () => {
    expect(budgetWindowViolations([{ at: T0 - 5_000, by: 'till0', handedAt: T0 - 5_100 }], () => 0)).toHaveLength(1);
    const three = [T0, T0 + 300, T0 + 999].map((at) => ({ at, by: 'w' }));
    expect(budgetWindowViolations(three, 2)).toEqual(['BUDGET-WINDOW: 3 arrivals in 999 ms from t+0.000s (limit 2/s): w ×3']);
    expect(budgetWindowViolations(three, 3)).toEqual([]);
  });
});
