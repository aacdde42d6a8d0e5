/**
 * The journal's budget arithmetic (src/journal/budget.ts), rule by rule: the request a store refuses and why, a new
 * key's state, a holder stored by an earlier build, releasing a share, the fair shares at their edges. The shares among
 * holders over time are in test/worker/shared-budget.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { SHARED_WINDOW_MS } from '../../src/collections/shared-budget.ts';
import {
  ADAPTIVE_START_RATE,
  allocateBudget,
  type BudgetRequest,
  type BudgetState,
  budgetRequestProblem,
  createReserve,
  fairShares,
  handedOut,
  newBudgetState,
} from '../../src/journal/budget.ts';
import { BUDGET_RENEWAL } from '../helpers/fixtures.ts';

const request: BudgetRequest = { ...BUDGET_RENEWAL, holder: 'a', keep: 0, want: 5, saturated: false };

/** One key's renewals applied in order, from `start`: each returns its holder's grant. */
function key(start?: BudgetState) {
  let state = start;
  return {
    renew(holder: string, fields: Partial<BudgetRequest> = {}, now = 0) {
      const result = allocateBudget(state, { ...request, holder, ...fields }, now);
      state = result.state;
      return result.grant;
    },
    get state(): BudgetState {
      return state as BudgetState;
    },
  };
}

describe('budgetRequestProblem: what a store refuses', () => {
  it('accepts a request the SDK sends, with every optional field at its edge', () => {
    expect(budgetRequestProblem(request)).toBeUndefined();
    expect(
      budgetRequestProblem({
        ...request,
        limit: 'adaptive',
        leaseMs: 1_001,
        windowMs: 1_000,
        creates: false,
        inUse: 0,
        since: { event: 0, elapsedMs: 0 },
        standingReserve: 0,
        renewal: 0,
      }),
    ).toBeUndefined();
    expect(budgetRequestProblem({ ...request, limit: 1, creates: true, inUse: 2.5, since: { event: 3, elapsedMs: 12.5 } })).toBeUndefined();
  });

  it.each([
    ['no request', undefined, 'key must be a non-empty string'],
    ['a key not text', { key: 7 }, 'key must be a non-empty string'],
    ['an empty key', { key: '' }, 'key must be a non-empty string'],
    ['a holder not text', { holder: 7 }, 'holder must be a non-empty string'],
    ['an empty holder', { holder: '' }, 'holder must be a non-empty string'],
    ['a limit of 0', { limit: 0 }, 'limit must be ≥ 1 or adaptive'],
    ['a fractional limit', { limit: 1.5 }, 'limit must be ≥ 1 or adaptive'],
    ['another word for a limit', { limit: 'auto' }, 'limit must be ≥ 1 or adaptive'],
    ['a negative keep', { keep: -1 }, 'keep must be a number ≥ 0'],
    ['an infinite want', { want: Number.POSITIVE_INFINITY }, 'want must be a number ≥ 0'],
    ['a negative accepted', { accepted: -1 }, 'accepted must be a number ≥ 0'],
    ['rateLimited not a number', { rateLimited: Number.NaN }, 'rateLimited must be a number ≥ 0'],
    ['a lease as long as the window', { leaseMs: 1_020 }, 'leaseMs must be longer than windowMs'],
    ['an infinite lease', { leaseMs: Number.POSITIVE_INFINITY }, 'leaseMs must be longer than windowMs'],
    ['a window under a second', { windowMs: 999, leaseMs: 5_000 }, 'windowMs must be ≥ 1000'],
    ['a window not a number', { windowMs: Number.NaN }, 'leaseMs must be longer than windowMs'],
    ['creates not a boolean', { creates: 'yes' }, 'creates must be a boolean'],
    ['a negative inUse', { inUse: -0.5 }, 'inUse must be a number ≥ 0'],
    ['an infinite inUse', { inUse: Number.POSITIVE_INFINITY }, 'inUse must be a number ≥ 0'],
    [
      'a fractional since event',
      { since: { event: 1.5, elapsedMs: 0 } },
      'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }',
    ],
    [
      'a negative since event',
      { since: { event: -1, elapsedMs: 0 } },
      'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }',
    ],
    [
      'an infinite elapsedMs',
      { since: { event: 1, elapsedMs: Number.POSITIVE_INFINITY } },
      'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }',
    ],
    [
      'a negative elapsedMs',
      { since: { event: 1, elapsedMs: -1 } },
      'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }',
    ],
    ['since not an object', { since: 5 }, 'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }'],
    ['since null', { since: null }, 'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }'],
    ['a fractional standing reserve', { standingReserve: 0.5 }, 'standingReserve must be a whole number ≥ 0'],
    ['a negative standing reserve', { standingReserve: -1 }, 'standingReserve must be a whole number ≥ 0'],
    ['a fractional renewal', { renewal: 1.5 }, 'renewal must be a whole number ≥ 0'],
    ['a negative renewal', { renewal: -1 }, 'renewal must be a whole number ≥ 0'],
  ])('refuses %s', (_, fields, problem) => {
    const refused = fields === undefined ? undefined : { ...request, ...fields };
    expect(budgetRequestProblem(refused as unknown as BudgetRequest)).toBe(problem);
  });
});

describe('allocateBudget: edges of the arithmetic', () => {
  it('a new key starts at the adaptive start rate, event 0, no cut yet', () => {
    expect(newBudgetState(1_234)).toEqual({
      rate: ADAPTIVE_START_RATE,
      raisedAt: 1_234,
      cutAt: Number.NEGATIVE_INFINITY,
      holders: {},
      event: 0,
    });
    const { state, grant } = allocateBudget(undefined, { ...request, want: 5, renewal: 1 }, 1_234);
    expect(grant).toEqual({ share: 5, target: 5, limit: 20, holders: 1, event: 1 });
    // Stored whole: a holder of an earlier release sharing the journal reads a holder without coolMs as one of a
    // build before measured time, and would count its lease in full again.
    expect(state.holders.a).toEqual({
      share: 5,
      want: 5,
      declared: 20,
      leaseMs: 8_000,
      leaseElapsed: 0,
      leaseFrom: 1,
      leaseMarks: [[1, 0]],
      cooling: 0,
      coolMs: SHARED_WINDOW_MS,
      coolElapsed: 0,
      coolFrom: 1,
      creates: false,
      renewal: 1,
    });
  });

  it('a state read back from JSON (no cut yet, no event number) is taken as it was', () => {
    const saved = JSON.parse(JSON.stringify(allocateBudget(undefined, request, 0).state)) as Omit<BudgetState, 'event'> & {
      event?: number;
    };
    expect(saved.cutAt).toBeNull();
    delete saved.event;
    const { state, grant } = allocateBudget(saved as BudgetState, { ...request, holder: 'b', since: undefined }, 100);
    expect(state.cutAt).toBe(Number.NEGATIVE_INFINITY);
    expect(grant.event).toBe(1);
    expect(grant.holders).toBe(2);
  });

  it('a holder stored by an earlier build (no measured lease) counts its lease and cooling in full again from now', () => {
    const earlier = {
      rate: 4,
      raisedAt: 0,
      cutAt: null,
      event: 7,
      holders: { old: { share: 6, want: 6, declared: 20, expiresAt: 5_000, cooling: 2, coolUntil: 1_000 } },
    } as unknown as BudgetState;
    const { state } = allocateBudget(earlier, { ...request, holder: 'b', want: 100 }, 50_000);
    expect(state.holders.old).toMatchObject({
      share: 6,
      leaseMs: 8_000,
      leaseElapsed: 0,
      leaseFrom: 8,
      coolMs: 1_020,
      coolElapsed: 0,
      coolFrom: 8,
      cooling: 2,
    });
    // The old holder's 6 and its 2 cooling still count: b grows into the rest only (less the standing reserve: none sent).
    expect(state.holders.b?.share).toBe(12);
    expect(handedOut(state)).toBe(20);
  });

  it('a holder that releases its share keeps nothing: what it may have spent cools, the rest is free at once', () => {
    let { state } = allocateBudget(undefined, { ...request, want: 10 }, 0);
    ({ state } = allocateBudget(state, { ...request, holder: 'b', want: 100, since: { event: 1, elapsedMs: 10 } }, 10));
    expect(state.holders.b?.share).toBe(10);
    const released = allocateBudget(
      state,
      { ...request, keep: 10, want: 10, release: true, inUse: 4, since: { event: 1, elapsedMs: 20 } },
      20,
    );
    expect(released.grant).toMatchObject({ share: 0, target: 0 });
    expect(released.state.holders.a).toMatchObject({ share: 0, want: 0, cooling: 4, creates: false });
    expect(released.state.holders.a?.leaseElapsed).toBe(released.state.holders.a?.leaseMs);
    expect(handedOut(released.state)).toBe(14);
    // Nothing in use: the holder is gone at once.
    const idle = allocateBudget(state, { ...request, keep: 10, want: 10, release: true, inUse: 0, creates: true }, 20);
    expect(idle.state.holders.a).toBeUndefined();
    expect(handedOut(idle.state)).toBe(10);
  });

  it('a dead holder’s lease ends on the chained measures of a holder that reports every second', () => {
    const budget = key();
    budget.renew('a', { want: 100 });
    expect(budget.state.holders.a?.share).toBe(20);
    let event = budget.renew('b', { want: 100 }).event;
    // b reports each second, measuring from its last answer: 1 000 ms each (0.1 % less counted).
    const shares: number[] = [];
    for (let second = 1; second <= 10; second++) {
      const grant = budget.renew('b', { want: 100, keep: shares.at(-1) ?? 0, since: { event, elapsedMs: 1_000 } }, second * 1_000);
      event = grant.event;
      shares.push(grant.share);
    }
    // Nine measures of 999 ms make 8 991 ms: past a's lease of 8 000 at the ninth (eight make 7 992).
    expect(shares).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 20, 20]);
  });

  it('a measure of no time, or from an event not yet reached, lets no lease run', () => {
    const first = allocateBudget(undefined, { ...request, want: 100 }, 0);
    const stated = (since: BudgetRequest['since']) =>
      allocateBudget(first.state, { ...request, holder: 'b', want: 100, since }, 100_000).state.holders.a?.leaseElapsed;
    expect(stated({ event: 1, elapsedMs: 0 })).toBe(0);
    expect(stated({ event: 2, elapsedMs: 100_000 })).toBe(0);
    // Measured from a's own event: its lease is over, the holder gone.
    expect(stated({ event: 1, elapsedMs: 100_000 })).toBeUndefined();
    // A measure from before a holder's lease began does not count for it.
    const renewedAt2 = allocateBudget(first.state, { ...request, want: 100, since: { event: 1, elapsedMs: 10 } }, 10).state;
    expect(
      allocateBudget(renewedAt2, { ...request, holder: 'b', want: 100, since: { event: 1, elapsedMs: 100_000 } }, 100_000).state.holders.a
        ?.leaseElapsed,
    ).toBe(0);
  });

  it('a lease ends when its measured time reaches its length exactly, a cooling when it reaches its window', () => {
    // 3 000 ms measured count 2 997 (0.1 % less), 2 000 ms count 1 998: exact in binary floating point.
    const leaseOf2997 = (elapsedMs: number) => {
      const budget = key();
      budget.renew('a', { want: 20, leaseMs: 2_997 });
      budget.renew('b', { want: 20 });
      return budget.renew('b', { want: 20, since: { event: 2, elapsedMs } }).share;
    };
    expect(leaseOf2997(3_000)).toBe(20);
    expect(leaseOf2997(2_999)).toBe(0);
    const windowOf1998 = (elapsedMs: number) => {
      const budget = key();
      budget.renew('a', { want: 20, windowMs: 1_998 });
      budget.renew('a', { keep: 10, want: 10, windowMs: 1_998 });
      budget.renew('b', { want: 100 });
      return budget.renew('b', { want: 100, since: { event: 3, elapsedMs } }).share;
    };
    expect(windowOf1998(2_000)).toBe(10);
    expect(windowOf1998(1_999)).toBe(0);
  });

  it('a holder stored without marks has its lease and cooling run by later measures, from 0', () => {
    const stored: BudgetState = {
      rate: ADAPTIVE_START_RATE,
      raisedAt: 0,
      cutAt: Number.NEGATIVE_INFINITY,
      event: 5,
      holders: {
        a: {
          share: 10,
          want: 10,
          declared: 20,
          leaseMs: 8_000,
          leaseElapsed: 0,
          leaseFrom: 3,
          cooling: 2,
          coolMs: 5_000,
          coolElapsed: 0,
          coolFrom: 3,
        },
      },
    };
    const budget = key(stored);
    expect(budget.renew('b', { want: 100, since: { event: 4, elapsedMs: 10 } }).share).toBe(8);
    // Measured from an event before the first mark the renewal above wrote: still counted from 0.
    expect(budget.renew('b', { keep: 8, want: 100, since: { event: 5, elapsedMs: 10 } }).share).toBe(8);
    expect(budget.state.holders.a).toMatchObject({ share: 10, cooling: 2 });
    expect(budget.state.holders.a?.leaseElapsed).toBeCloseTo(9.99, 9);
    expect(budget.state.holders.a?.coolElapsed).toBeCloseTo(9.99, 9);
  });

  it('a measure from an earlier event adds to that event’s bound, kept for 16 events (then from 0: still a lower bound)', () => {
    const budget = key();
    const a = () => budget.state.holders.a;
    const long = { leaseMs: 20_000, windowMs: 10_000 };
    budget.renew('a', { want: 10, ...long });
    budget.renew('a', { keep: 5, want: 5, ...long });
    budget.renew('b', { want: 0, since: { event: 2, elapsedMs: 1_000 } });
    budget.renew('c', { want: 0 });
    // From event 3, whose bound was 999: not from the latest bound, nor from 0.
    budget.renew('b', { want: 0, since: { event: 3, elapsedMs: 500 } });
    expect(a()?.leaseElapsed).toBeCloseTo(1_498.5, 9);
    expect(a()?.coolElapsed).toBeCloseTo(1_498.5, 9);
    for (let renewal = 0; renewal < 16; renewal++) budget.renew('c', { want: 0 });
    budget.renew('b', { want: 0, since: { event: 3, elapsedMs: 9_100 } });
    expect(a()?.leaseElapsed).toBeCloseTo(9_090.9, 9);
    expect(a()?.coolElapsed).toBeCloseTo(9_090.9, 9);
    expect(a()?.cooling).toBe(5);
  });

  it('no more tokens cool than were given back, however many requests are in use', () => {
    const budget = key();
    budget.renew('a', { want: 10 });
    budget.renew('a', { keep: 2, want: 2, inUse: 15 });
    expect(budget.state.holders.a).toMatchObject({ share: 2, cooling: 8 });
    expect(handedOut(budget.state)).toBe(10);
  });

  it('a till that releases sends creates no more; a released holder is not among the live ones', () => {
    const budget = key();
    budget.renew('a', { want: 10, creates: true });
    budget.renew('b', { want: 100 });
    expect(budget.renew('a', { keep: 10, want: 10, creates: true, release: true, inUse: 4 })).toEqual({
      share: 0,
      target: 0,
      limit: 20,
      holders: 1,
      event: 3,
    });
    expect(budget.state.holders.a).toMatchObject({ cooling: 4, creates: false });
    expect(budget.renew('b', { keep: 10, want: 100 })).toMatchObject({ holders: 1, target: 20, share: 16 });
    // The last holder that leaves: no live holder, no limit.
    const alone = key();
    alone.renew('a', { want: 10 });
    expect(alone.renew('a', { keep: 10, want: 10, release: true, inUse: 4 })).toEqual({
      share: 0,
      target: 0,
      limit: 0,
      holders: 0,
      event: 2,
    });
  });

  it('a holder whose lease ran out and that releases keeps nothing, even with requests on their way', () => {
    const budget = key();
    budget.renew('a', { want: 10 });
    budget.renew('b', { want: 0 });
    budget.renew('b', { want: 0, since: { event: 2, elapsedMs: 9_000 } });
    expect(budget.state.holders.a).toBeUndefined();
    expect(budget.renew('a', { keep: 10, want: 10, release: true, inUse: 3 }).share).toBe(0);
    expect(handedOut(budget.state)).toBe(0);
  });

  it('a renewal without a number keeps the last number applied: an older one is still stale', () => {
    const budget = key();
    budget.renew('a', { want: 10, renewal: 4 });
    budget.renew('a', { keep: 10, want: 10 });
    expect(budget.state.holders.a?.renewal).toBe(4);
    expect(budget.renew('a', { keep: 0, want: 0, renewal: 3 }).share).toBe(0);
    expect(budget.state.holders.a?.share).toBe(10);
  });

  it('a fixed limit learns nothing from 429s: the learnt rate stays where it was', () => {
    const budget = key();
    budget.renew('a', { want: 100 });
    budget.renew('a', { keep: 20, want: 100, rateLimited: 5, accepted: 3, saturated: true }, 10_000);
    expect(budget.state).toMatchObject({ rate: ADAPTIVE_START_RATE, raisedAt: 0, cutAt: Number.NEGATIVE_INFINITY });
    expect(budget.state.ceiling).toBeUndefined();
  });

  it('records that a till used the key (for holders of earlier releases), and keeps it', () => {
    const budget = key();
    budget.renew('a', { want: 5 });
    expect(budget.state.tillsSeen).toBeUndefined();
    budget.renew('t', { want: 5, creates: true });
    expect(budget.state.tillsSeen).toBe(true);
    budget.renew('a', { keep: 5, want: 5 });
    expect(budget.state.tillsSeen).toBe(true);
  });

  it('a till that already holds tokens grows past the standing token no more than a worker does', () => {
    const budget = key();
    const till = { limit: 10, creates: true, standingReserve: 1 };
    expect(budget.renew('t', { ...till, want: 3 }).share).toBe(3);
    expect(budget.renew('t', { ...till, keep: 3, want: 100 }).share).toBe(9);
  });

  it('tills first, each other holder left a token; with fewer tokens than that, turns with tills first', () => {
    const withTill = key();
    withTill.renew('w1', { limit: 10, want: 100 });
    withTill.renew('w2', { limit: 10, want: 100 });
    expect(withTill.renew('t', { limit: 10, want: 100, creates: true }).target).toBe(8);
    const short = key();
    for (const holder of ['w1', 'w2']) short.renew(holder, { limit: 3, want: 5 });
    short.renew('t1', { limit: 3, want: 5, creates: true });
    // 3 tokens, 2 tills and 2 workers: the tills and the first worker by id this turn.
    expect(short.renew('t2', { limit: 3, want: 5, creates: true }).target).toBe(1);
    // Exactly a token for each till after each other holder's: the tills' part is shared among the tills alone,
    // whatever an idle worker leaves.
    const exact = key();
    exact.renew('w1', { limit: 4, want: 0 });
    exact.renew('w2', { limit: 4, want: 5 });
    exact.renew('t1', { limit: 4, want: 1, creates: true });
    expect(exact.renew('t2', { limit: 4, want: 3, creates: true }).target).toBe(1);
    // More workers than the limit less the standing token: that token stays free, the workers take turns for the rest.
    const crowded = key();
    for (const holder of ['w1', 'w2', 'w3', 'w4', 'w5', 'w6']) crowded.renew(holder, { limit: 5, want: 1, standingReserve: 1 });
    expect(crowded.renew('w5', { limit: 5, want: 1, standingReserve: 1 }).target).toBe(0);
    expect(crowded.renew('w4', { limit: 5, want: 1, standingReserve: 1 }).target).toBe(1);
  });

  it('a renewal numbered no higher than the last applied changes nothing and grants nothing', () => {
    const { state } = allocateBudget(undefined, { ...request, want: 10, renewal: 4 }, 0);
    for (const renewal of [4, 3]) {
      const late = allocateBudget(state, { ...request, keep: 0, want: 0, renewal }, 10);
      expect(late.state).toBe(state);
      expect(late.grant).toEqual({ share: 0, target: 0, limit: 0, holders: 0, event: 1 });
    }
    expect(allocateBudget(state, { ...request, keep: 10, want: 10, renewal: 5 }, 10).grant.event).toBe(2);
  });

  it('the standing reserve is at most the limit less one, and none below 5 per second', () => {
    const grant = (limit: number, standingReserve: number) =>
      allocateBudget(undefined, { ...request, limit, want: 100, standingReserve }, 0).grant.share;
    expect(grant(10, 1)).toBe(9);
    expect(grant(10, 3)).toBe(7);
    expect(grant(10, 50)).toBe(1);
    expect(grant(5, 1)).toBe(4);
    expect(grant(4, 1)).toBe(4);
    expect(grant(10, 1.7)).toBe(9);
    // A till takes it at its first renewal.
    expect(allocateBudget(undefined, { ...request, limit: 10, want: 100, standingReserve: 1, creates: true }, 0).grant.share).toBe(10);
  });

  it('fair shares of nothing, of demands all met, and of fractional turns', () => {
    expect([...fairShares(0, [['a', 3]])]).toEqual([['a', 0]]);
    expect([...fairShares(10, [])]).toEqual([]);
    expect(
      [
        ...fairShares(10, [
          ['b', 2],
          ['a', 3],
        ]),
      ].sort(),
    ).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    // Equal demands: ordered by id, the remainder to the first.
    expect([
      ...fairShares(5, [
        ['b', 9],
        ['a', 9],
      ]),
    ]).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
    // A negative or fractional turn is the first turn.
    const wants = [
      ['a', 5],
      ['b', 5],
      ['c', 5],
    ] as const;
    expect(fairShares(1, wants, -3)).toEqual(fairShares(1, wants, 0));
    expect(fairShares(1, wants, 1.9)).toEqual(fairShares(1, wants, 1));
    expect([...fairShares(1, wants, 1)].filter(([, share]) => share === 1)).toEqual([['b', 1]]);
    // Each turn moves the tokens on by as many holders as there are tokens.
    expect([...fairShares(2, wants, 1)].filter(([, share]) => share === 1).sort()).toEqual([
      ['a', 1],
      ['c', 1],
    ]);
    // A demand equal to an equal part is met exactly; the remainder goes to the others.
    expect(
      fairShares(5, [
        ['a', 2],
        ['b', 5],
      ]),
    ).toEqual(
      new Map([
        ['a', 2],
        ['b', 3],
      ]),
    );
    expect(createReserve(4.9)).toBe(0);
  });
});

describe("allocateBudget: 'adaptive' at its edges", () => {
  /**
   * A key learnt at `rate` (429s last came at `ceiling`), bound since 0 by one holder keeping every token, last raised
   * at `raisedAt` and cut at `cutAt` (journal clock); `a` reports at `now`.
   */
  function learnt(fields: { rate: number; ceiling?: number; raisedAt?: number; cutAt?: number }) {
    const share = Math.floor(fields.rate);
    const state: BudgetState = {
      rate: fields.rate,
      ...(fields.ceiling === undefined ? {} : { ceiling: fields.ceiling }),
      raisedAt: fields.raisedAt ?? 0,
      cutAt: fields.cutAt ?? Number.NEGATIVE_INFINITY,
      bindingSince: 0,
      event: 1,
      holders: {
        a: {
          share,
          want: 1_000,
          declared: 'adaptive',
          leaseMs: 8_000,
          leaseElapsed: 0,
          leaseFrom: 1,
          cooling: 0,
          coolMs: SHARED_WINDOW_MS,
          coolElapsed: 0,
          coolFrom: 1,
        },
      },
    };
    return (now: number, report: Partial<BudgetRequest> = {}) =>
      allocateBudget(state, { ...request, limit: 'adaptive', keep: share, want: 1_000, saturated: true, ...report }, now).state.rate;
  }

  it.each([
    // [rate, ceiling, reported at, rate after]
    ['past the ceiling by a request per second or more: half a request per second per second', 20, 10, 2_000, 21],
    ['past the ceiling, 1.5 s after the last raise', 20, 10, 1_500, 20.75],
    ['exactly a request per second past the ceiling', 11, 10, 2_000, 12],
    ['within a request per second of the ceiling: 0.05 per second per second', 10.5, 10, 2_000, 10.6],
    ['exactly a request per second under the ceiling', 9, 10, 2_000, 9.1],
    ['below 90 % of the ceiling: half the gap, at least one', 5, 10, 2_000, 7],
    ['the climb counts two seconds at most', 20, 10, 60_000, 21],
  ])('%s', (_, rate, ceiling, now, after) => {
    expect(learnt({ rate, ceiling })(now)).toBeCloseTo(after, 9);
  });

  it('raises at most once a second, not within a window of a cut, and only on a report of waiting requests', () => {
    const report = learnt({ rate: 20, ceiling: 10, raisedAt: 5_000 });
    expect(report(5_999)).toBe(20);
    expect(report(6_000)).toBeCloseTo(20.5, 9);
    expect(report(6_000, { saturated: false })).toBe(20);
    const afterCut = learnt({ rate: 20, ceiling: 10, raisedAt: 0, cutAt: 5_000 });
    expect(afterCut(6_019)).toBe(20);
    expect(afterCut(6_020)).toBeGreaterThan(20);
  });

  it('cuts at most once per two windows', () => {
    const report = learnt({ rate: 20, ceiling: 30, raisedAt: 0, cutAt: 0 });
    expect(report(2_039, { rateLimited: 1 })).toBe(20);
    // Cut: the ceiling is what was handed out (20), the rate a fifth under it.
    expect(report(2_040, { rateLimited: 1 })).toBeCloseTo(16, 9);
  });
});
