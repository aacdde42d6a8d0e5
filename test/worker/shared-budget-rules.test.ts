/**
 * A process's share of the key's budget (`KeyBudget`), rule by rule, on virtual time against a scripted journal that
 * grants a fixed share: when a spent token frees, which requests wait and for how long, what each renewal reports and
 * when it is sent, how long a share may be spent without one, and what is logged while the journal fails. The
 * arithmetic of the shares among holders is in shared-budget.test.ts.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyBudget, MIN_BUDGET_LEASE_MS } from '../../src/collections/shared-budget.ts';
import { LevelLogger } from '../../src/core/logger.ts';
import type { BudgetGrant, BudgetRequest } from '../../src/journal/budget.ts';
import type { PaymentJournal } from '../../src/journal/journal.ts';

const OFF = new LevelLogger(console, 'off');

// The mutation set shares one module graph across files: a spy on the faked setTimeout must go before the fake does.
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

type BudgetJournal = PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>;
/**
 * What the scripted journal does with a renewal (`index` counts from 1): grants a share (a number: the share, the fair
 * share and the limit; or the grant's fields), fails, or never answers.
 */
type Script = (request: BudgetRequest, index: number) => number | Omit<BudgetGrant, 'event'> | Error | 'hang';

/** A journal that answers each renewal as `script` says, recording when each was sent. */
function scriptedJournal(script: Script) {
  const renewals: { at: number; request: BudgetRequest }[] = [];
  let event = 0;
  const journal = {
    takeBudget(request: BudgetRequest): Promise<BudgetGrant> {
      renewals.push({ at: Date.now(), request });
      const answer = script(request, renewals.length);
      if (answer === 'hang') return new Promise(() => {});
      if (answer instanceof Error) return Promise.reject(answer);
      const grant = typeof answer === 'number' ? { share: answer, target: answer, limit: answer, holders: 1 } : answer;
      return Promise.resolve({ ...grant, event: ++event });
    },
  } as unknown as BudgetJournal;
  return { journal, renewals };
}

/** When a request was let go (virtual ms), or the error its wait ended with. */
function track(waiting: Promise<void>) {
  const outcome: { at?: number; error?: Error } = {};
  waiting.then(
    () => {
      outcome.at = Date.now();
    },
    (error: Error) => {
      outcome.error = error;
    },
  );
  return outcome;
}

/** A logger that keeps every line with its fields. */
function capturingLogger() {
  const lines: { level: string; message: string; fields: unknown }[] = [];
  const sink = Object.fromEntries(
    (['debug', 'info', 'warn', 'error'] as const).map((level) => [
      level,
      (message: string, fields?: unknown) => lines.push({ level, message, fields }),
    ]),
  ) as unknown as ConstructorParameters<typeof LevelLogger>[0];
  return { lines, logger: new LevelLogger(sink, 'debug') };
}

describe('KeyBudget: the limit a process declares', () => {
  it('keeps the stricter of two declared limits, and a number over adaptive', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 1);
    const numbered = new KeyBudget(journal, 'numbered', 10, 10_000, OFF);
    expect(numbered.declare(10)).toBe(true);
    expect(numbered.declare(20)).toBe(false);
    expect(numbered.declare('adaptive')).toBe(false);
    expect(numbered.declare(6)).toBe(false);
    const adaptive = new KeyBudget(journal, 'adaptive', 'adaptive', 10_000, OFF);
    expect(adaptive.declare('adaptive')).toBe(true);
    expect(adaptive.declare(7)).toBe(false);
    expect(adaptive.declare('adaptive')).toBe(false);
    void numbered.take('other');
    void adaptive.take('other');
    await vi.advanceTimersByTimeAsync(1);
    expect(renewals.map(({ request }) => [request.key, request.limit])).toEqual([
      ['numbered', 6],
      ['adaptive', 7],
    ]);
  });
});

describe('KeyBudget: when a spent token frees', () => {
  it('a window after its request was answered, and 2 s later still when the request got no answer', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    const first = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(100);
    expect(first.at).toBe(0);
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(100);
    const second = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(1_000);
    // Answered at 100: spent until 100 + 1 020, free at that very millisecond.
    expect(second.at).toBe(1_120);
    budget.observe(0);
    await vi.advanceTimersByTimeAsync(100);
    const third = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(5_000);
    // Failed without an answer at 1 200: it may reach the service until 3 200, its token spent a window after that.
    expect(third.at).toBe(4_220);
  });

  it('an answer that comes before an earlier cut request’s assumed arrival frees its token first', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 2).journal, 'k', 2, 10_000, OFF);
    void budget.take('other');
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(100);
    budget.observe(0);
    budget.observe(200);
    const third = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(third.at).toBe(1_120);
  });

  it('a share may be spent until a window before the journal’s lease ends, not a millisecond longer', async () => {
    vi.useFakeTimers({ now: 0 });
    // The first renewal is granted; every later one fails.
    const { journal } = scriptedJournal((_, index) => (index === 1 ? 3 : new Error('the database is restarting')));
    const budget = new KeyBudget(journal, 'k', 3, 10_000, OFF);
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(6_979);
    // Granted for the lease less a renewal period (8 000 ms from its sending at 0), spent until a window before.
    expect(budget.state.share).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(budget.state.share).toBe(0);
  });
});

describe('KeyBudget: who waits', () => {
  it('while a till sends, status checks leave one token of each window to creates (from a share of 3), for 10 s', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 3).journal, 'k', 3, 10_000, OFF);
    const create = track(budget.take('create'));
    await vi.advanceTimersByTimeAsync(1);
    expect(create.at).toBe(0);
    budget.observe(202);
    const checks = [track(budget.take('other')), track(budget.take('other'))];
    await vi.advanceTimersByTimeAsync(0);
    // The create's token and one check's: the last token of the window is the next create's.
    expect(checks.map((check) => check.at)).toEqual([1, undefined]);
    budget.observe(200);
    const lateCreate = track(budget.take('create'));
    await vi.advanceTimersByTimeAsync(0);
    expect(lateCreate.at).toBe(1);
    budget.observe(202);
    // Keep the share renewed, then ask at 10 s after the last create, less a millisecond and exactly.
    for (let at = 2_000; at < 9_999; at += 2_000) {
      await vi.advanceTimersByTimeAsync(2_000);
      budget.observe(200);
      void budget.take('other').then(() => budget.observe(200));
    }
    await vi.advanceTimersByTimeAsync(9_999 - Date.now() - 1);
    expect(Date.now()).toBe(9_999 - 1);
    await vi.advanceTimersByTimeAsync(1_020);
    // Now 11 018 (nothing spent within the last window): 10 s and more after the create, all three go.
    const after = [track(budget.take('other')), track(budget.take('other')), track(budget.take('other'))];
    await vi.advanceTimersByTimeAsync(0);
    expect(after.map((check) => check.at)).toEqual([11_018, 11_018, 11_018]);
  });

  it('exactly 10 s after the last create the checks take the whole share again', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 3).journal, 'k', 3, 10_000, OFF);
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(1_100);
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_100);
    void budget.take('create');
    budget.observe(202);
    await vi.advanceTimersByTimeAsync(9_999);
    // 9 999 ms after the create, a window after its answer: the reserve still holds.
    const before = [track(budget.take('other')), track(budget.take('other')), track(budget.take('other'))];
    await vi.advanceTimersByTimeAsync(0);
    expect(before.filter((check) => check.at !== undefined)).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    // 10 000 ms after it, a check's answer lets the third one (waiting since) go at once.
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(0);
    expect(before[2]?.at).toBe(2_200 + 10_000);
  });

  it('a request that waits for a token, and one that leaves on its deadline or signal, leaves no listener on the signal', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    const signal = new AbortController().signal;
    const served = track(budget.take('other', signal));
    await vi.advanceTimersByTimeAsync(10);
    expect(served.at).toBe(0);
    budget.observe(200);
    const timed = track(budget.take('other', signal, performance.now() + 100));
    const waiting = track(budget.take('other', signal));
    expect(getEventListeners(signal, 'abort')).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(timed.error?.name).toBe('TimeoutError');
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(waiting.at).toBe(1_030);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('a request whose signal aborts leaves its deadline behind: no timer of it fires later', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(10);
    const timers = vi.getTimerCount();
    const stop = new AbortController();
    const aborted = track(budget.take('other', stop.signal, performance.now() + 60_000));
    expect(vi.getTimerCount()).toBeGreaterThan(timers);
    stop.abort(new Error('gone'));
    await vi.advanceTimersByTimeAsync(0);
    expect(aborted.error?.message).toBe('gone');
    // Its deadline's timer is cleared with it (the budget's own timers are as before).
    expect(vi.getTimerCount()).toBe(timers);
  });
});

describe('KeyBudget: what a renewal reports, and when it is sent', () => {
  it('a request that found a token at once is not reported as waiting', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 5);
    const budget = new KeyBudget(journal, 'k', 5, 10_000, OFF);
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(3_100);
    // The first request waited for the first renewal (sent at 0, the next one early, at 1 025, still reporting it);
    // the third (3 025) was sent with nothing waiting, and a request between it and the fourth finds a token.
    budget.observe(200);
    await budget.take('other');
    await budget.take('create');
    budget.observe(200);
    budget.observe(202);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renewals.map(({ at, request }) => [at, request.saturated])).toEqual([
      [0, true],
      [1_025, true],
      [3_025, false],
      [5_025, false],
    ]);
  });

  it('reports the answers since the last renewal that reached the journal, and a 429 brings the renewal forward', async () => {
    vi.useFakeTimers({ now: 0 });
    const { lines, logger } = capturingLogger();
    // The second and third renewals fail; the fifth too.
    const { journal, renewals } = scriptedJournal((_, index) => ([2, 3, 5].includes(index) ? new Error('the database is restarting') : 5));
    const budget = new KeyBudget(journal, 'k', 5, 10_000, logger);
    for (let request = 0; request < 4; request++) void budget.take('other');
    await vi.advanceTimersByTimeAsync(50);
    budget.observe(200);
    budget.observe(202);
    budget.observe(0);
    budget.observe(429);
    // Not 'adaptive': a 429 does not cut the declared share here.
    expect(budget.state.share).toBe(5);
    await vi.advanceTimersByTimeAsync(10_000);
    const sent = renewals.map(({ at, request }) => ({ at, accepted: request.accepted, rateLimited: request.rateLimited }));
    // The 429 brings the next renewal to 250 ms after the last one; failed, the next is a period after it.
    expect(sent.slice(0, 4)).toEqual([
      { at: 0, accepted: 0, rateLimited: 0 },
      { at: 250, accepted: 2, rateLimited: 1 },
      { at: 2_250, accepted: 2, rateLimited: 1 },
      { at: 4_250, accepted: 2, rateLimited: 1 },
    ]);
    expect(sent[4]).toEqual({ at: 6_250, accepted: 0, rateLimited: 0 });
    const budgetLines = lines.filter((line) => line.message.includes('shared rate budget'));
    expect(budgetLines.map((line) => [line.level, line.message, line.fields])).toEqual([
      [
        'warn',
        '[tap-collections-sdk] shared rate budget: the journal could not renew this process share; spending what is left, then waiting',
        { reason: 'the database is restarting' },
      ],
      ['info', '[tap-collections-sdk] shared rate budget: the journal renews this process share again', undefined],
      [
        'warn',
        '[tap-collections-sdk] shared rate budget: the journal could not renew this process share; spending what is left, then waiting',
        { reason: 'the database is restarting' },
      ],
      ['info', '[tap-collections-sdk] shared rate budget: the journal renews this process share again', undefined],
    ]);
  });

  it('a renewal the journal never answers is given up after the lease it asks for, and says so', async () => {
    vi.useFakeTimers({ now: 0 });
    const { lines, logger } = capturingLogger();
    const { journal } = scriptedJournal((_, index) => (index === 2 ? 'hang' : 1));
    const budget = new KeyBudget(journal, 'k', 1, 10_000, logger);
    void budget.take('other');
    // The second renewal is sent at 1 025 (the first request waited for the first one): given up 8 000 ms later.
    await vi.advanceTimersByTimeAsync(1_025 + 7_999);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.fields)).toEqual([
      { reason: 'the journal did not answer a renewal within 8000 ms' },
    ]);
  });

  it('renews every 2 s while in use, more often on a short lease, and stops a lease after the last request', async () => {
    vi.useFakeTimers({ now: 0 });
    const long = scriptedJournal(() => 1);
    const short = scriptedJournal(() => 1);
    const budgets = [new KeyBudget(long.journal, 'k', 1, 10_000, OFF), new KeyBudget(short.journal, 'k', 1, MIN_BUDGET_LEASE_MS, OFF)];
    for (const budget of budgets) void budget.take('other').then(() => budget.observe(200));
    await vi.advanceTimersByTimeAsync(30_000);
    // The first request waited for the first renewal: the next comes once tokens others gave back cooled (1 025 ms),
    // then one a period. The last is the first sent a lease after the request: nothing is renewed after it.
    expect(long.renewals.map(({ at }) => at)).toEqual([0, 1_025, 3_025, 5_025, 7_025, 9_025, 11_025]);
    // (5 000 − 2 000 − 1 020) ÷ 2: a renewal late by one period still finds the share valid.
    expect(short.renewals.map(({ at }) => at)).toEqual([0, 1_025, 2_015, 3_005, 3_995, 4_985, 5_975]);
  });

  it('a request in flight keeps the share renewed past the lease, and a request after an idle spell renews at once', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 2);
    const budget = new KeyBudget(journal, 'k', 2, 10_000, OFF);
    void budget.take('other');
    await vi.advanceTimersByTimeAsync(14_000);
    expect(renewals.at(-1)?.at).toBe(13_025);
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(30_000);
    // Renewed once more after the answer, then let lapse: the request was taken more than a lease ago.
    expect(renewals.at(-1)?.at).toBe(15_025);
    // Idle: the share lapsed; the next request asks at once.
    const late = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(0);
    expect(renewals.at(-1)?.at).toBe(44_000);
    expect(late.at).toBe(44_000);
  });

  it('renewal timers keep no process alive by themselves, nor does the wait for a renewal’s answer', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal } = scriptedJournal((_, index) => (index === 3 ? 'hang' : 1));
    const budget = new KeyBudget(journal, 'k', 1, MIN_BUDGET_LEASE_MS, OFF);
    await Promise.all([budget.take('other'), vi.advanceTimersByTimeAsync(1)]);
    // From now on no request waits: every timer armed is the budget's own (renewals, and the third one's answer).
    const armed = vi.spyOn(globalThis, 'setTimeout');
    await vi.advanceTimersByTimeAsync(2_500);
    const timers = armed.mock.results.map((result) => result.value as { hasRef(): boolean });
    expect(timers.length).toBeGreaterThanOrEqual(3);
    expect(timers.filter((timer) => timer.hasRef())).toEqual([]);
  });
});

describe('KeyBudget: what a renewal asks for', () => {
  /** Takes `count` tokens at once and answers them at once; resolves once all were taken. */
  async function spend(budget: KeyBudget, count: number, lane: 'create' | 'other' = 'other') {
    for (let index = 0; index < count; index++) {
      await budget.take(lane);
      budget.observe(200);
    }
  }

  it('a process whose requests never waited keeps and asks for what it used, a quarter more and one; a till its peak and one', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 10);
    const budget = new KeyBudget(journal, 'k', 10, 10_000, OFF);
    await Promise.all([spend(budget, 1), vi.advanceTimersByTimeAsync(1_100)]);
    // Renewals at 0, 1 025 (the first request waited), then every 2 s.
    await spend(budget, 4);
    await vi.advanceTimersByTimeAsync(2_000);
    await spend(budget, 3);
    await spend(budget, 1, 'create');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renewals.slice(2).map(({ at, request }) => [at, request.keep, request.want, request.creates, request.saturated])).toEqual([
      // 4 in a window: ⌈4 × 1.25⌉ + 1.
      [3_025, 6, 6, false, false],
      // A till (a create within 10 s): its busiest window (4) and one.
      [5_025, 5, 5, true, false],
    ]);
  });

  it('a process whose requests waited asks for twice its peak, what waits, what was asked per window, or its part of the key', async () => {
    vi.useFakeTimers({ now: 0 });
    // Its share is 4 of a key of 40 shared by 2 holders: an equal part is 20.
    const { journal, renewals } = scriptedJournal(() => ({ share: 4, target: 4, limit: 40, holders: 2 }));
    const budget = new KeyBudget(journal, 'k', 40, 10_000, OFF);
    await Promise.all([spend(budget, 1), vi.advanceTimersByTimeAsync(3_100)]);
    // Between the renewals at 3 025 and 5 025: 30 requests ask at once, each giving up after 10 ms; 4 are sent.
    const gaveUp = Array.from({ length: 30 }, () => track(budget.take('other', undefined, performance.now() + 10)));
    await vi.advanceTimersByTimeAsync(10);
    expect(gaveUp.filter((request) => request.error !== undefined)).toHaveLength(26);
    for (let index = 0; index < 4; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(2_000);
    // Between 5 025 and 7 025: 30 ask at once and wait; 4 are sent, 26 still wait when the renewal leaves.
    const waiting = Array.from({ length: 30 }, () => track(budget.take('other')));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(waiting.filter((request) => request.at !== undefined)).toHaveLength(4);
    for (let index = 0; index < 4; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renewals.slice(3, 5).map(({ at, request }) => [at, request.want, request.saturated])).toEqual([
      // 30 asked in 2 000 ms: 16 a window, ⌈16 × 1.25⌉ + 1 = 21 (more than twice its peak, and than 40 ÷ 2).
      [5_025, 21, true],
      // Its peak and the 26 waiting.
      [7_025, 30, true],
    ]);
  });

  it('a process whose requests waited asks for at least its part of the key, unless it sent a create within 10 s', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => ({ share: 1, target: 1, limit: 40, holders: 4 }));
    const budget = new KeyBudget(journal, 'k', 40, 10_000, OFF);
    await Promise.all([spend(budget, 1, 'create'), vi.advanceTimersByTimeAsync(1)]);
    // One request at a time, each waiting for the token the last one spent.
    const oneAtATime = spend(budget, 12);
    await vi.advanceTimersByTimeAsync(15_000);
    await oneAtATime;
    const wants = renewals.map(({ at, request }) => [at, request.want, request.creates]);
    // The create at 0: 10 s later the till is a worker again, and asks for an equal part of the key (40 ÷ 4).
    expect(wants.filter(([at]) => (at as number) < 10_000).every(([, want]) => (want as number) < 10)).toBe(true);
    expect(wants.find(([at]) => at === 11_025)).toEqual([11_025, 10, false]);
  });
});

describe('KeyBudget: giving back a share above the fair one', () => {
  /**
   * A holder of 10 whose journal grants 10 at the first three renewals (0, 1 025, 3 025), then a fair share of
   * `target` (still counting what the holder keeps); its first request answered at once, the clock run to `until`.
   */
  async function loweredAt(target: number, until: number) {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal((request, index) =>
      index <= 3 ? 10 : { share: Math.max(request.keep, target), target, limit: 10, holders: 2 },
    );
    const budget = new KeyBudget(journal, 'k', 10, 10_000, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(until)]);
    return { budget, renewals };
  }

  it('stops spending the excess at once and gives it back once no more than its fair share was spent within a window', async () => {
    const { budget, renewals } = await loweredAt(4, 4_600);
    // Renewals at 0, 1 025, 3 025, 5 025. Eight requests from 4 600, one every 50 ms; the last one still in flight.
    for (let index = 0; index < 8; index++) {
      await budget.take('other');
      if (index < 7) budget.observe(200);
      await vi.advanceTimersByTimeAsync(50);
    }
    await vi.advanceTimersByTimeAsync(5_025 - Date.now());
    expect(renewals.at(-1)?.at).toBe(5_025);
    // Told a fair share of 4 at 5 025: it spends 4 from then on.
    expect(budget.state).toMatchObject({ share: 4, target: 4 });
    await vi.advanceTimersByTimeAsync(2_000);
    // Three of its 4 tokens may be spent by the one in flight; 7 were answered from 4 600 to 4 900: once the fourth
    // newest of them (4 750) left the window, 3 answered ones and the one in flight are within it.
    expect(renewals.slice(4).map(({ at, request }) => [at, request.keep, request.inUse])).toEqual([[4_750 + 1_021, 4, 4]]);
  });

  it('with nothing spent recently, gives the excess back a quarter second after the renewal that lowered it', async () => {
    const { budget, renewals } = await loweredAt(4, 2_500);
    // Eight at 2 500 (a peak that keeps all 10 at the renewal at 5 025), none within the window before it.
    for (let index = 0; index < 8; index++) await budget.take('other');
    for (let index = 0; index < 8; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(2_800);
    expect(renewals.slice(3).map(({ at, request }) => [at, request.keep])).toEqual([
      [5_025, 10],
      // Keeping what it used within the last window and one (nothing): 1.
      [5_275, 1],
    ]);
  });

  it('with every token of its fair share in flight, gives the excess back once its last answered one left the window', async () => {
    const { budget, renewals } = await loweredAt(4, 4_600);
    // Five at 4 600: the first answered at once, four still in flight at the renewal at 5 025.
    for (let index = 0; index < 5; index++) await budget.take('other');
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(renewals.slice(4, 5).map(({ at, request }) => [at, request.keep])).toEqual([[4_600 + 1_021, 4]]);
  });

  it('with exactly its fair share spent within the window, gives the excess back a quarter second after the renewal', async () => {
    const { budget, renewals } = await loweredAt(4, 4_600);
    // Four at 4 600: three answered, one in flight: its fair share exactly.
    for (let index = 0; index < 4; index++) await budget.take('other');
    for (let index = 0; index < 3; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renewals.slice(4, 5).map(({ at }) => at)).toEqual([5_275]);
  });

  it('tokens of requests cut without an answer stay counted by the journal until they may have arrived', async () => {
    const { budget, renewals } = await loweredAt(2, 4_900);
    for (let index = 0; index < 7; index++) await budget.take('other');
    // Six cut at 4 900 (they may reach the service until 6 900); the seventh answered 429 after the renewal at 5 025.
    for (let index = 0; index < 6; index++) budget.observe(0);
    await vi.advanceTimersByTimeAsync(130);
    budget.observe(429);
    await vi.advanceTimersByTimeAsync(300);
    // The 429 brings the next renewal to 5 275: it spends 2 (its fair share), the journal keeps counting the 6.
    expect(renewals.slice(4).map(({ at, request }) => [at, request.keep, request.rateLimited])).toEqual([[5_275, 6, 1]]);
    expect(budget.state.share).toBe(2);
  });
});

describe('KeyBudget: after a 429', () => {
  it("'adaptive': the share it spends leaves out the tokens the journal still counts for requests that may arrive", async () => {
    vi.useFakeTimers({ now: 0 });
    // 10 at the first three renewals; then the journal counts what the holder says it keeps, at a fair share of 10.
    const { journal, renewals } = scriptedJournal((request, index) =>
      index <= 3 ? 10 : { share: request.keep, target: 10, limit: 10, holders: 1 },
    );
    const budget = new KeyBudget(journal, 'k', 'adaptive', 10_000, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(3_100)]);
    for (let index = 0; index < 10; index++) await budget.take('other');
    // Nine cut without an answer (they may arrive until 5 100), one answered 429: the share is cut to 8 at once.
    for (let index = 0; index < 9; index++) budget.observe(0);
    budget.observe(429);
    expect(budget.state.share).toBe(8);
    await vi.advanceTimersByTimeAsync(176);
    // The renewal the 429 brought forward: the journal keeps counting 9 (8 spent, and the ninth cut request may still
    // arrive); the holder spends 8.
    expect(renewals.slice(3).map(({ at, request }) => [at, request.keep])).toEqual([[3_275, 9]]);
    expect(budget.state.share).toBe(8);
  });
});

describe('KeyBudget: a request that arrives as a renewal grants tokens', () => {
  /**
   * Requests sent from the microtasks after the journal answers, at every depth up to 8: whichever lands between the
   * renewal's grant and the drain that serves the queue finds tokens free while others wait.
   */
  async function newcomersAtTheGrant(waiting: 'create' | 'other', newcomers: 'create' | 'other') {
    vi.useFakeTimers({ now: 0 });
    const order: string[] = [];
    let budget: KeyBudget | undefined;
    const journal = {
      takeBudget() {
        const grant = Promise.resolve({ share: 1, target: 1, limit: 1, holders: 1, event: 1 });
        let hop: Promise<unknown> = grant;
        for (let depth = 1; depth <= 8; depth++) {
          hop = hop.then(() => {
            void budget?.take(newcomers).then(() => order.push(`newcomer ${depth}`));
          });
        }
        return grant;
      },
    } as unknown as BudgetJournal;
    budget = new KeyBudget(journal, 'k', 1, 10_000, OFF);
    // The first request waits for the first renewal.
    void budget.take(waiting).then(() => order.push('waiting'));
    await vi.advanceTimersByTimeAsync(10);
    return order;
  }

  it('a check does not overtake the check already waiting', async () => {
    expect(await newcomersAtTheGrant('other', 'other')).toEqual(['waiting']);
  });

  it('a create does not overtake the create already waiting', async () => {
    expect(await newcomersAtTheGrant('create', 'create')).toEqual(['waiting']);
  });
});

describe('KeyBudget: a waiting request', () => {
  it('wakes the budget when a token frees, not every millisecond', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    await Promise.all([budget.take('other'), vi.advanceTimersByTimeAsync(100)]);
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(100);
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const waiting = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(waiting.at).toBe(1_120);
    // Its own wake-up, and the renewal at 1 025 (its timer and the wait for its answer) with the next one's.
    expect(armed.mock.calls.length).toBeLessThanOrEqual(5);
    // Every token in flight (none answered yet): it looks again every quarter second until one is answered.
    const inFlight = track(budget.take('other'));
    armed.mockClear();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(inFlight.at).toBeUndefined();
    expect(armed.mock.calls.length).toBeLessThanOrEqual(12);
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_020);
    expect(inFlight.at).toBe(3_200 + 1_020);
  });
});

describe('KeyBudget: renewals that start again, and asking again early', () => {
  it('a request after the renewals stopped, while the share is still valid, goes at once and renews a period after the last', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 2);
    const budget = new KeyBudget(journal, 'k', 2, 10_000, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(12_000)]);
    // The last renewal, 11 025, was the first sent a lease after the request; its share is valid until 18 005.
    expect(renewals.at(-1)?.at).toBe(11_025);
    const late = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(0);
    expect(late.at).toBe(12_000);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renewals.slice(7).map(({ at }) => at)).toEqual([13_025]);
  });

  it('a holder whose share lapsed while its requests waited keeps the whole share at its next renewal', async () => {
    vi.useFakeTimers({ now: 0 });
    // The shortest lease: granted at 0 (valid until 1 980); the renewal at 1 025 never answers (given up at 4 025).
    const { journal, renewals } = scriptedJournal((_, index) => (index === 2 ? 'hang' : 10));
    const budget = new KeyBudget(journal, 'k', 10, MIN_BUDGET_LEASE_MS, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(2_000)]);
    const waiting = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(2_100);
    // Asked again at once (the next millisecond) for the share the journal still counts, not only for what it used
    // lately (nothing).
    expect(renewals.slice(2).map(({ at, request }) => [at, request.keep, request.saturated])).toEqual([[4_026, 10, true]]);
    expect(waiting.at).toBe(4_026);
  });

  it('a till for 10 s after its last create: then a worker, asking for a quarter more than its peak', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 10);
    const budget = new KeyBudget(journal, 'k', 10, 10_000, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(1_025)]);
    // A create at 1 025, four checks at 10 500; the renewal at 11 025 comes exactly 10 s after the create.
    await budget.take('create');
    budget.observe(202);
    await vi.advanceTimersByTimeAsync(10_500 - 1_025);
    for (let index = 0; index < 4; index++) await budget.take('other');
    for (let index = 0; index < 4; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(600);
    expect(renewals.map(({ at, request }) => [at, request.creates, request.want]).slice(-2)).toEqual([
      [9_025, true, 1],
      [11_025, false, 6],
    ]);
  });

  it('arms its renewals on a runtime whose timers are numbers (browsers, workerd)', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    const armed = vi.spyOn(globalThis, 'setTimeout').mockImplementation(() => 7 as unknown as ReturnType<typeof setTimeout>);
    const taking = track(budget.take('other'));
    await vi.advanceTimersByTimeAsync(0);
    expect(armed).toHaveBeenCalled();
    // Waiting for the renewal its timer would start, not refused.
    expect(taking).toEqual({});
  });

  it.each([
    // The last renewal is the first sent a lease after the request taken at 5 000 ms.
    ['renews until a renewal is sent a lease after the last request, counted from that request', 10_000, 16_025],
    // The renewal sent at 14 025 ms ends the lease of 9 025 ms exactly: none after it.
    ['sends no renewal after one that ends exactly a lease after the last request', 9_025, 14_025],
  ])('%s', async (_, leaseMs, last) => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 2);
    const budget = new KeyBudget(journal, 'k', 2, leaseMs, OFF);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(20_000)]);
    const steady = [8_025, 10_025, 12_025, 14_025, 16_025].filter((at) => at <= last);
    expect(renewals.map(({ at }) => at)).toEqual([5_000, 6_025, ...steady]);
  });

  it.each([
    ['one token under a fair share of 8 waits for the steady renewal', 7, 8, 2_000],
    ['one token under a fair share of 7 asks again once given-back tokens cooled', 6, 7, 1_025],
    ['two tokens under a fair share of 8 asks again once given-back tokens cooled', 6, 8, 1_025],
  ])('a holder whose requests wait, %s', async (_, share, target, next) => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => ({ share, target, limit: 20, holders: 2 }));
    const budget = new KeyBudget(journal, 'k', 20, 10_000, OFF);
    // Thirty requests wait from the start: it wants more than its fair share.
    for (let index = 0; index < 30; index++) void budget.take('other').catch(() => undefined);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(renewals.slice(0, 2).map(({ at }) => at)).toEqual([0, next]);
  });

  it('a create and a check waiting together are both served as tokens free, the create first', async () => {
    vi.useFakeTimers({ now: 0 });
    const budget = new KeyBudget(scriptedJournal(() => 1).journal, 'k', 1, 10_000, OFF);
    await Promise.all([budget.take('other'), vi.advanceTimersByTimeAsync(100)]);
    budget.observe(200);
    const check = track(budget.take('other'));
    const create = track(budget.take('create'));
    await vi.advanceTimersByTimeAsync(1_020);
    expect(create.at).toBe(1_120);
    expect(check.at).toBeUndefined();
    budget.observe(202);
    await vi.advanceTimersByTimeAsync(1_020);
    expect(check.at).toBe(1_120 + 1_020);
  });

  it('asks for what its busiest window used, not its last', async () => {
    vi.useFakeTimers({ now: 0 });
    const { journal, renewals } = scriptedJournal(() => 10);
    const budget = new KeyBudget(journal, 'k', 10, 10_000, OFF);
    await Promise.all([budget.take('other').then(() => budget.observe(200)), vi.advanceTimersByTimeAsync(1_100)]);
    // Between the renewals at 1 025 and 3 025: 4 at once, then, a window later, 1.
    for (let index = 0; index < 4; index++) await budget.take('other');
    for (let index = 0; index < 4; index++) budget.observe(200);
    await vi.advanceTimersByTimeAsync(1_100);
    await budget.take('other');
    budget.observe(200);
    await vi.advanceTimersByTimeAsync(900);
    expect(renewals.slice(2, 3).map(({ at, request }) => [at, request.want])).toEqual([[3_025, 6]]);
  });
});
