/**
 * What the settlement worker decides about one payment after each kind of answer (src/collections/settlement-worker.ts,
 * from a check's answer to the journal write): what `onSettled` is given, when the journal is written, which failures
 * pause every check, which slow one payment down, and how a 404 closes a payment. Fake timers and a scripted status
 * check, as in scheduler.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeploymentMismatchError } from '../../src/collections/deployment.ts';
import { WrongBaseUrlError } from '../../src/collections/not-found-evidence.ts';
import { withRequestId } from '../../src/collections/request-id.ts';
import type { CollectionStatus } from '../../src/collections/schemas.ts';
import { type SettlementWorkerOptions, startSettlementWorker } from '../../src/collections/settlement-worker.ts';
import type { SettlementWorkerContext } from '../../src/collections/settlement-worker-options.ts';
import { StatusWords } from '../../src/collections/status-words.ts';
import { AuthenticationError, ConfigurationError, InternalServerError, NotFoundError, RateLimitError } from '../../src/core/errors.ts';
import { LevelLogger } from '../../src/core/logger.ts';
import type { NewPaymentRecord, PaymentChange, PaymentDeployment, PaymentRecord, PaymentState } from '../../src/journal/journal.ts';
import { MemoryJournal } from '../../src/journal/memory.ts';
import { RecordWatch } from '../../src/journal/record-watch.ts';

type Answer = (call: number, referenceId: string, signal?: AbortSignal) => CollectionStatus | Error | Promise<CollectionStatus | Error>;

const status = (referenceId: string, statusText: string, transactionCode: string | null = null): CollectionStatus => ({
  referenceId,
  statusText,
  transactionCode,
  reason: statusText === 'pending' ? null : `the service said ${statusText}`,
});
const apiError = { code: undefined, requestId: undefined, body: undefined, service: 'collections' as const };
const notFound = () => new NotFoundError({ ...apiError, status: 404, message: 'not found' });

/**
 * `value` after `ms`, or the abort's reason first: a check answering late honours the worker's signal as the real one
 * does, so `stop()` never waits on a fake timer nobody advances.
 */
const answerAfter = <T>(ms: number, value: () => T, signal?: AbortSignal) =>
  new Promise<T | Error>((resolve) => {
    const timer = setTimeout(() => resolve(value()), ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(signal.reason as Error);
    });
  });

/** What every payment here is for. */
const PAYMENT = { amount: 10, currency: 'ZMW', phoneNumber: '260*******56', fingerprint: 'x' } as const;

/** A worker over a memory journal holding one payment in `state`, opened `ageMs` ago; `answer` scripts its checks. */
async function oneBy(
  answer: Answer,
  state: PaymentState,
  ageMs = 60_000,
  contextExtra: Partial<Pick<SettlementWorkerContext, 'maxRetryAfterMs' | 'judgeNotFound' | 'resend' | 'deploymentMismatch'>> = {},
  /** Where the record says its push went (default: not said, as an earlier release wrote it). */
  deployment?: PaymentDeployment,
) {
  const clock = { offsetMs: 0 };
  const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
  const referenceId = randomUUID();
  clock.offsetMs = -ageMs;
  await journal.insert({
    ...PAYMENT,
    referenceId,
    state,
    productId: randomUUID(),
    ...(state === 'pending' ? { statusText: 'pending' } : {}),
    // The window of the create that opened it: without one a record is judged by the longest window (never closed).
    ...(state === 'initiating' || state === 'unknown' ? { sendWindowMs: 1_000 } : {}),
    ...(deployment === undefined ? {} : { deployment }),
  });
  clock.offsetMs = 0;
  // This process wrote the record and has watched it for its 1 s window since (the second measure of its age,
  // which a not-sent close also needs; that rule itself: test/journal/one-404-rule.test.ts).
  const watch = new RecordWatch();
  watch.watched((await journal.get(referenceId)) as PaymentRecord);
  vi.advanceTimersByTime(1_000);
  const sink = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const checks: number[] = [];
  const checkedIds: string[] = [];
  const settled: PaymentRecord[] = [];
  const start = (options: SettlementWorkerOptions = {}) =>
    startSettlementWorker(
      {
        journal,
        timeoutMs: 30_000,
        maxRetries: 0,
        logger: new LevelLogger(sink, 'debug'),
        statusWords: new StatusWords(),
        // Every 404 here is the service's own (which 404 is: test/collections/not-found-evidence-rules.test.ts).
        judgeNotFound: async () => undefined,
        watch,
        ...contextExtra,
        check: async (id, _timeoutMs, signal) => {
          checks.push(Date.now());
          checkedIds.push(id);
          const result = await answer(checks.length, id, signal);
          if (result instanceof Error) throw result;
          return result;
        },
      },
      { onSettled: (record) => void settled.push(record), initialDelayMs: 0, intervalMs: 1_000, maxIntervalMs: 1_000, ...options },
    );
  const lines = (level: 'debug' | 'error' | 'warn') => sink[level].mock.calls.map((call) => String(call[0]));
  /** Another writer's write on the record as it is now (a till's poll, `recover()`). */
  const writeNow = async (change: PaymentChange) => {
    const current = (await journal.get(referenceId)) as PaymentRecord;
    await journal.transition(referenceId, current.version, change);
  };
  /** From the first check on, the journal no longer has the record (an operator purged it). */
  const purgeOnceChecked = () => {
    const get = journal.get.bind(journal);
    journal.get = async (id) => (checks.length === 0 ? get(id) : undefined);
  };
  /** Another open payment in the same journal, created now: `pending` unless `fields` say otherwise; its id. */
  const openAnother = async (fields: Partial<NewPaymentRecord> = {}) => {
    const another = {
      ...PAYMENT,
      referenceId: randomUUID(),
      productId: randomUUID(),
      state: 'pending' as const,
      statusText: 'pending',
      ...fields,
    };
    await journal.insert(another);
    return another.referenceId;
  };
  return {
    journal,
    referenceId,
    checks,
    checkedIds,
    settled,
    start,
    lines,
    sinks: sink,
    watch,
    writeNow,
    purgeOnceChecked,
    openAnother,
    record: () => journal.get(referenceId),
  };
}

/** A pending payment a till records `failed` while the worker's check is out, which answers `successful`. */
async function settledTheOtherWayMeanwhile() {
  const world = await oneBy(async (_, id) => {
    await world.writeNow({ state: 'failed', statusText: 'failed', by: 'a till' });
    return status(id, 'successful');
  }, 'pending');
  return world;
}

beforeEach(() => {
  // performance too: the worker's watch of a record (its second measure of age) runs on the fake clock.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a final status', () => {
  it('is given to onSettled as the record will read once written, then written, and the payment is checked no more', async () => {
    const world = await oneBy((_, id) => status(id, 'successful', 'TX-1'), 'unknown');
    const before = (await world.record()) as PaymentRecord;
    expect(before.decidableAt).toBeDefined();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toHaveLength(1);
    const delivered = world.settled[0] as PaymentRecord & Record<string, unknown>;
    expect(delivered).toMatchObject({
      referenceId: world.referenceId,
      state: 'successful',
      statusText: 'successful',
      transactionCode: 'TX-1',
      reason: 'the service said successful',
      version: before.version + 1,
      createdAt: before.createdAt,
    });
    expect(Date.parse(delivered.updatedAt)).toBe(world.checks[0]);
    // Only what a record holds: no writer's name, no request id, no not-sent deadline on a settled payment.
    expect(Object.keys(delivered)).not.toContain('by');
    expect(Object.keys(delivered)).not.toContain('requestId');
    expect(Object.keys(delivered)).not.toContain('decidableAt');
    expect(await world.record()).toMatchObject({ state: 'successful', version: before.version + 1, transactionCode: 'TX-1' });
    await worker.stop();
  });

  it("given to onSettled exactly as the journal then holds it: the answer's request id stays in the history", async () => {
    const world = await oneBy((_, id) => withRequestId(status(id, 'failed'), 'req-7'), 'pending');
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    await worker.stop();
    const stored = (await world.record()) as PaymentRecord;
    expect(world.settled).toStrictEqual([{ ...stored, updatedAt: world.settled[0]?.updatedAt }]);
    expect(Object.keys(world.settled[0] as PaymentRecord)).not.toContain('requestId');
    expect((await world.journal.history(world.referenceId)).at(-1)).toMatchObject({ to: 'failed', requestId: 'req-7' });
  });

  it('settled meanwhile by someone else: nothing delivered, the journal keeps their outcome', async () => {
    const world = await settledTheOtherWayMeanwhile();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.settled).toEqual([]);
    expect(world.checks).toHaveLength(1);
    expect(await world.record()).toMatchObject({ state: 'failed', statusText: 'failed' });
    await worker.stop();
  });

  it('onSettled throwing keeps it open and logged; delivered again after maxIntervalMs', async () => {
    const world = await oneBy((_, id) => status(id, 'failed'), 'pending');
    let throws = 1;
    const delivered: string[] = [];
    const worker = world.start({
      maxIntervalMs: 3_000,
      onSettled: (record) => {
        if (throws-- > 0) throw new Error('the shop database is down');
        delivered.push(record.state);
      },
    });
    await vi.advanceTimersByTimeAsync(2_900);
    expect(delivered).toEqual([]);
    expect((await world.record())?.state).toBe('pending');
    expect(world.lines('error')).toEqual([expect.stringContaining(`onSettled threw for ${world.referenceId}; it stays open`)]);
    await vi.advanceTimersByTimeAsync(200);
    expect(delivered).toEqual(['failed']);
    expect((await world.record())?.state).toBe('failed');
    await worker.stop();
  });
});

describe('a pending status', () => {
  it('proves an unknown payment exists (recorded pending), and a new word is recorded; the same word writes nothing', async () => {
    const words = ['pending', 'pending', 'processing', 'processing'];
    const world = await oneBy((call, id) => status(id, words[call - 1] ?? 'processing'), 'unknown');
    const worker = world.start({ intervalMs: 1_000, maxIntervalMs: 1_000 });
    await vi.advanceTimersByTimeAsync(200);
    expect(world.checks).toHaveLength(1);
    expect(await world.record()).toMatchObject({ state: 'pending', statusText: 'pending', version: 2 });
    await vi.advanceTimersByTimeAsync(1_200);
    expect(world.checks).toHaveLength(2);
    expect((await world.record())?.version).toBe(2);
    await vi.advanceTimersByTimeAsync(1_200);
    expect(world.checks).toHaveLength(3);
    expect(await world.record()).toMatchObject({ state: 'pending', statusText: 'processing', version: 3 });
    await worker.stop();
  });

  it('on a payment closed meanwhile by someone else: the worker stops checking it (no contradiction: the service lags)', async () => {
    const world = await oneBy(async (_, id) => {
      await world.writeNow({ state: 'successful', statusText: 'successful', by: 'a till' });
      return status(id, 'pending');
    }, 'unknown');
    const onContradiction = vi.fn();
    const worker = world.start({ onContradiction });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toEqual([]);
    expect((await world.record())?.state).toBe('successful');
    // A pending word after a final one is the service lagging behind its own answer, not a contradiction.
    expect(onContradiction).not.toHaveBeenCalled();
    expect(world.lines('error')).toEqual([]);
    expect((await world.record())?.contradiction).toBeUndefined();
    await worker.stop();
  });
});

describe('a failed check', () => {
  it('429 with a Retry-After past maxRetryAfterMs: every check pauses for maxRetryAfterMs only, and it is said loudly', async () => {
    const world = await oneBy(
      (call, id) =>
        call === 1
          ? new RateLimitError({ ...apiError, status: 429, message: 'slow down', retryAfterMs: 3_600_000 })
          : status(id, 'pending'),
      'pending',
      60_000,
      { maxRetryAfterMs: 5_000 },
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(2);
    expect((world.checks[1] as number) - (world.checks[0] as number)).toBeGreaterThanOrEqual(5_000);
    expect((world.checks[1] as number) - (world.checks[0] as number)).toBeLessThan(6_000);
    expect(world.lines('error')).toEqual([expect.stringContaining('asked to wait longer than maxRetryAfterMs')]);
    // The line's fields say what was asked and what holds instead.
    expect(world.sinks.error.mock.calls[0]?.[1]).toEqual({ retryAfterMs: 3_600_000, maxRetryAfterMs: 5_000 });
    expect(world.lines('warn')).toContainEqual(expect.stringContaining('rate limited; pausing every check'));
    await worker.stop();
  });

  it('429 past the default limit of 60 s: paused 60 s', async () => {
    const world = await oneBy(
      (call, id) =>
        call === 1
          ? new RateLimitError({ ...apiError, status: 429, message: 'slow down', retryAfterMs: 3_600_000 })
          : status(id, 'pending'),
      'pending',
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(world.checks).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(world.checks).toHaveLength(2);
    await worker.stop();
  });

  it('429 within the limit: paused as asked, said at warn with the pause, without an error line', async () => {
    const world = await oneBy(
      (call, id) =>
        call === 1 ? new RateLimitError({ ...apiError, status: 429, message: 'slow down', retryAfterMs: 60_000 }) : status(id, 'pending'),
      'pending',
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(59_000);
    expect(world.checks).toHaveLength(1);
    expect(world.sinks.warn.mock.calls).toEqual([
      ['[tap-collections-sdk] settlement worker: rate limited; pausing every check', { pauseMs: 60_000 }],
    ]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(world.checks).toHaveLength(2);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });

  it('a retryable failure (503) keeps the poll schedule; a failure no retry can fix (401) waits maxIntervalMs', async () => {
    const unavailable = new InternalServerError({ ...apiError, status: 503, message: 'down' });
    const retryable = await oneBy((call, id) => (call === 1 ? unavailable : status(id, 'pending')), 'pending');
    const worker = retryable.start({ intervalMs: 500, maxIntervalMs: 10_000 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(retryable.checks.length).toBeGreaterThanOrEqual(2);
    expect(retryable.lines('debug')).toContainEqual(
      expect.stringContaining(`status check of ${retryable.referenceId} failed; still waiting`),
    );
    expect(retryable.lines('error')).toEqual([]);
    await worker.stop();

    const refused = await oneBy(
      (call, id) => (call === 1 ? new AuthenticationError({ ...apiError, status: 401, message: 'bad key' }) : status(id, 'pending')),
      'pending',
    );
    const second = refused.start({ intervalMs: 500, maxIntervalMs: 10_000 });
    await vi.advanceTimersByTimeAsync(9_900);
    expect(refused.checks).toHaveLength(1);
    expect(refused.lines('error')).toEqual([expect.stringContaining(`status check of ${refused.referenceId} failed; still waiting`)]);
    // The reason is the failure's own message, a field of the line.
    expect(refused.sinks.error.mock.calls[0]?.[1]).toEqual({ reason: 'bad key' });
    await vi.advanceTimersByTimeAsync(200);
    expect(refused.checks).toHaveLength(2);
    await second.stop();
  });
});

describe('a 404', () => {
  it('on a pending payment: left open, checked again on the schedule', async () => {
    const world = await oneBy(() => notFound(), 'pending');
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(3_500);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect((await world.record())?.state).toBe('pending');
    expect(world.settled).toEqual([]);
    await worker.stop();
  });

  it('a status found on the recheck is recorded and delivered as the outcome', async () => {
    const world = await oneBy((call, id) => (call === 1 ? notFound() : status(id, 'successful', 'TX-2')), 'unknown');
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.checks).toHaveLength(2);
    expect(await world.record()).toMatchObject({ state: 'successful', transactionCode: 'TX-2' });
    expect(world.settled.map((record) => record.state)).toEqual(['successful']);
    await worker.stop();
  });

  it('a recheck that fails otherwise (503): nothing decided, said, checked again on the schedule; a second 404 then closes it', async () => {
    const unavailable = new InternalServerError({ ...apiError, status: 503, message: 'down' });
    const world = await oneBy((call) => (call === 2 ? unavailable : notFound()), 'unknown');
    const worker = world.start({ notFoundGraceMs: 0, maxIntervalMs: 4_000 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(2);
    expect((await world.record())?.state).toBe('unknown');
    expect(world.settled).toEqual([]);
    expect(world.lines('debug')).toContainEqual(expect.stringContaining(`a 404 for ${world.referenceId} was not judged; still waiting`));
    // The poll schedule's pause (1 s here), not maxIntervalMs: a 503 is the service's passing trouble.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(world.checks).toHaveLength(4);
    expect((await world.record())?.state).toBe('not-sent');
    expect(world.settled.map((record) => record.state)).toEqual(['not-sent']);
    await worker.stop();
  });

  it('not-sent is recorded even when onSettled throws; logged, and the payment is checked no more', async () => {
    const world = await oneBy(() => notFound(), 'unknown');
    const worker = world.start({
      notFoundGraceMs: 0,
      onSettled: () => {
        throw new Error('the shop database is down');
      },
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(world.checks).toHaveLength(2);
    expect((await world.record())?.state).toBe('not-sent');
    expect(world.lines('error')).toEqual([expect.stringContaining(`onSettled threw for ${world.referenceId} (not-sent, recorded)`)]);
    await worker.stop();
  });

  it('too young to close: left open and checked again; closed once the journal says nothing can still arrive', async () => {
    const world = await oneBy(() => notFound(), 'initiating', 0);
    const worker = world.start({ notFoundGraceMs: 4_000 });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(2);
    expect((await world.record())?.state).toBe('initiating');
    expect(world.settled).toEqual([]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await world.record())?.state).toBe('not-sent');
    expect(world.settled.map((record) => record.state)).toEqual(['not-sent']);
    await worker.stop();
  });
});

describe('a 404 that is not judged evidence', () => {
  const misdirected = () => new WrongBaseUrlError('a status check answered HTTP 404 without the envelope', notFound());

  it("a wrong base URL's error line names it when it is known", async () => {
    const world = await oneBy(() => notFound(), 'unknown', 60_000, {
      judgeNotFound: async () => {
        throw new WrongBaseUrlError('a status check answered HTTP 404 without the envelope', notFound(), 'https://wrong.example');
      },
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(1_500);
    expect(world.lines('error')).toEqual([
      `[tap-collections-sdk] settlement worker: no payment is closed on a 404 until a check answers as the Collections API again (first seen for ${world.referenceId}): the base URL https://wrong.example does not answer as it`,
    ]);
    await worker.stop();
  });

  it('a wrong base URL: nothing closed, said once at error, reported until a check answers as the service again', async () => {
    let wrong = true;
    const world = await oneBy((_, id) => (wrong ? notFound() : status(id, 'pending')), 'unknown', 60_000, {
      judgeNotFound: async () => {
        if (wrong) throw misdirected();
      },
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(3_500);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect((await world.record())?.state).toBe('unknown');
    expect(worker.configurationProblem).toBeInstanceOf(WrongBaseUrlError);
    // The error names no base URL: none was given.
    expect(world.lines('error')).toEqual([
      `[tap-collections-sdk] settlement worker: no payment is closed on a 404 until a check answers as the Collections API again (first seen for ${world.referenceId})`,
    ]);
    wrong = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(worker.configurationProblem).toBeUndefined();
    expect(world.lines('warn')).toEqual([
      expect.stringContaining('settlement worker: the base URL answers as the Collections API again; 404s are judged again'),
    ]);
    expect((await world.record())?.state).toBe('pending');
    await worker.stop();
  });

  it('a wrong base URL, then the service’s own 404: cleared (a judged 404 is an answer as the service)', async () => {
    let wrong = true;
    const world = await oneBy(() => notFound(), 'pending', 60_000, {
      judgeNotFound: async () => {
        if (wrong) throw misdirected();
      },
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(1_500);
    expect(worker.configurationProblem).toBeInstanceOf(WrongBaseUrlError);
    wrong = false;
    await vi.advanceTimersByTimeAsync(1_500);
    expect(worker.configurationProblem).toBeUndefined();
    expect(world.lines('warn')).toEqual([
      expect.stringContaining('settlement worker: the base URL answers as the Collections API again; 404s are judged again'),
    ]);
    expect((await world.record())?.state).toBe('pending');
    await worker.stop();
  });

  it('a judgement that cannot be made and no retry can fix (401 from /health): logged at error, checked after maxIntervalMs', async () => {
    const unauthorized = new AuthenticationError({ ...apiError, status: 401, message: 'bad key' });
    const world = await oneBy(() => notFound(), 'unknown', 60_000, {
      judgeNotFound: async () => {
        throw unauthorized;
      },
    });
    const worker = world.start({ notFoundGraceMs: 0, maxIntervalMs: 4_000 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    expect(world.lines('error')).toEqual([expect.stringContaining(`${world.referenceId} could not be recorded; trying again`)]);
    await vi.advanceTimersByTimeAsync(3_800);
    expect(world.checks).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(world.checks).toHaveLength(2);
    expect((await world.record())?.state).toBe('unknown');
    expect(worker.configurationProblem).toBeUndefined();
    await worker.stop();
  });
});

describe('a contradiction', () => {
  it('onContradiction throwing: said at error, the record stays marked, nothing delivered', async () => {
    const world = await settledTheOtherWayMeanwhile();
    const seen: PaymentRecord[] = [];
    const worker = world.start({
      onContradiction: (record) => {
        seen.push(record);
        throw new Error('the shop database is down');
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(seen).toEqual([
      expect.objectContaining({ state: 'failed', contradiction: expect.objectContaining({ statusText: 'successful' }) }),
    ]);
    expect(world.lines('error')).toEqual([expect.stringContaining(`onContradiction threw for ${world.referenceId}`)]);
    expect(world.settled).toEqual([]);
    expect(await world.record()).toMatchObject({ state: 'failed', contradiction: { statusText: 'successful' } });
    await worker.stop();
  });

  it('without onContradiction: one error line naming the payment, its state and the service word', async () => {
    const world = await settledTheOtherWayMeanwhile();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.lines('error')).toEqual([
      expect.stringContaining(`the service contradicts ${world.referenceId}, which the journal records as failed`),
    ]);
    await worker.stop();
  });
});

describe('a payment open past staleAfterMs', () => {
  const pending: Answer = (_, id) => status(id, 'pending');

  it('is given to onStale once, as the journal holds it, and checked on', async () => {
    const world = await oneBy(pending, 'pending', 10_000);
    const stale: PaymentRecord[] = [];
    const worker = world.start({ staleAfterMs: 5_000, onStale: (record) => void stale.push(record) });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect(stale).toEqual([await world.record()]);
    expect(stale[0]).toMatchObject({ referenceId: world.referenceId, state: 'pending' });
    expect(world.lines('warn')).toEqual([]);
    await worker.stop();
  });

  it('younger than staleAfterMs: not reported', async () => {
    const world = await oneBy(pending, 'pending', 10_000);
    const onStale = vi.fn();
    const worker = world.start({ staleAfterMs: 60_000, onStale });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect(onStale).not.toHaveBeenCalled();
    await worker.stop();
  });

  it('without onStale: one warn line naming the payment, when it opened and its state', async () => {
    const world = await oneBy(pending, 'pending', 10_000);
    const worker = world.start({ staleAfterMs: 5_000 });
    await vi.advanceTimersByTimeAsync(5_000);
    const record = (await world.record()) as PaymentRecord;
    expect(world.lines('warn')).toEqual([
      `[tap-collections-sdk] settlement worker: ${world.referenceId} has been open since ${record.createdAt}; still checking it, once a minute`,
    ]);
    expect(vi.mocked(world.sinks.warn).mock.calls[0]?.[1]).toEqual({ state: 'pending' });
    await worker.stop();
  });

  it('onStale throwing: said at error, and the payment is checked on', async () => {
    const world = await oneBy(pending, 'pending', 10_000);
    const worker = world.start({
      staleAfterMs: 5_000,
      onStale: () => {
        throw new Error('the pager is down');
      },
    });
    await vi.advanceTimersByTimeAsync(5_000);
    const checks = world.checks.length;
    expect(world.lines('error')).toEqual([`[tap-collections-sdk] settlement worker: reporting stale payment ${world.referenceId} failed`]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.checks.length).toBeGreaterThan(checks);
    await worker.stop();
  });

  it.for([
    ['settled by the time it is reported', 'successful'],
    ['gone from the journal by then', undefined],
  ] as const)('%s: not reported', async ([, state]) => {
    const world = await oneBy(pending, 'pending', 10_000);
    // The report reads the record after the check: by then a till settled it (or an operator purged it).
    const get = world.journal.get.bind(world.journal);
    world.journal.get = async (referenceId) => {
      const record = await get(referenceId);
      if (record === undefined || world.checks.length === 0) return record;
      return state === undefined ? undefined : { ...record, state };
    };
    const onStale = vi.fn();
    const worker = world.start({ staleAfterMs: 5_000, onStale });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(1);
    expect(onStale).not.toHaveBeenCalled();
    expect(world.lines('warn')).toEqual([]);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });
});

describe('bookkeeping', () => {
  it('429s without Retry-After in a row: the pause grows (the backoff of the 1st, then the 2nd rate limit)', async () => {
    const world = await oneBy(
      (call, id) => (call <= 2 ? new RateLimitError({ ...apiError, status: 429, message: 'slow down' }) : status(id, 'pending')),
      'pending',
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    const [first, second, third] = world.checks as [number, number, number];
    // backoffDelayMs(1) is 250–500 ms, backoffDelayMs(2) 500–1000 ms.
    expect(second - first).toBeGreaterThanOrEqual(250);
    expect(third - second).toBeGreaterThanOrEqual(500);
    await worker.stop();
  });

  it.for([
    ['found closed by someone else', 'successful'],
    ['closed not-sent on a 404', 'not-sent'],
    ['settled by someone else while its final status was read', 'failed'],
  ] as const)('a payment %s frees its place: the next payment is leased', async ([, closed]) => {
    const world = await oneBy(async (call, id) => {
      if (id === world.referenceId && closed === 'not-sent') return notFound();
      if (call === 1 && closed === 'failed') {
        await world.writeNow({ state: 'failed', statusText: 'failed', by: 'a till' });
        return status(id, 'failed');
      }
      if (call === 1) await world.writeNow({ state: 'successful', statusText: 'successful', by: 'a till' });
      return status(id, 'pending');
    }, 'unknown');
    const worker = world.start({ maxLeasedPayments: 1, scanIntervalMs: 1_000, notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect((await world.record())?.state).toBe(closed);
    const checksOfFirst = world.checks.length;
    const next = await world.openAnother();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checkedIds.slice(checksOfFirst)).toContain(next);
    expect(world.checkedIds.slice(checksOfFirst)).not.toContain(world.referenceId);
    await worker.stop();
  });

  it('a check cut by stop(): nothing is decided or said about the payment afterwards', async () => {
    const world = await oneBy(
      (_, __, signal) => new Promise<Error>((resolve) => signal?.addEventListener('abort', () => resolve(signal.reason as Error))),
      'unknown',
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    await worker.stop();
    expect([...world.lines('debug'), ...world.lines('warn'), ...world.lines('error')]).not.toContainEqual(
      expect.stringContaining(world.referenceId),
    );
    expect((await world.record())?.state).toBe('unknown');
  });

  it('a final status for a payment purged from the journal meanwhile: nothing delivered or said, checked no more', async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending');
    world.purgeOnceChecked();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toEqual([]);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });
});

/** Counts the journal's reads of records (`get`) from now on. */
function countReads(journal: MemoryJournal): { count: number } {
  const reads = { count: 0 };
  const get = journal.get.bind(journal);
  journal.get = (referenceId) => {
    reads.count++;
    return get(referenceId);
  };
  return reads;
}

describe('what a check costs the journal (a read or a write only when the answer can tell something new)', () => {
  it.for(['pending', 'unknown'] as const)(
    'the same pending word again (the record was %s): the journal is neither read nor written',
    async (state) => {
      const world = await oneBy((_, id) => status(id, 'pending'), state);
      const worker = world.start();
      await vi.advanceTimersByTimeAsync(100);
      expect(world.checks).toHaveLength(1);
      // An unknown record is written pending once (the payment exists); a pending one is left as it is.
      const recorded = (await world.record()) as PaymentRecord;
      expect(recorded).toMatchObject({ state: 'pending', statusText: 'pending', version: state === 'pending' ? 1 : 2 });
      const reads = countReads(world.journal);
      await vi.advanceTimersByTimeAsync(3_500);
      expect(world.checks.length).toBeGreaterThanOrEqual(3);
      expect(reads.count).toBe(0);
      expect((await world.record())?.version).toBe(recorded.version);
      await worker.stop();
    },
  );

  it('once a recheck found it pending, a later 404 reads nothing: a pending payment is never closed on a 404', async () => {
    const world = await oneBy((call, id) => (call === 2 ? status(id, 'pending') : notFound()), 'unknown');
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(2);
    expect(await world.record()).toMatchObject({ state: 'pending', statusText: 'pending' });
    const reads = countReads(world.journal);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(world.checks.length).toBeGreaterThanOrEqual(4);
    expect(reads.count).toBe(0);
    expect((await world.record())?.state).toBe('pending');
    await worker.stop();
  });

  it.for([
    ['settled the same way by someone else', 'settled'],
    ['purged from the journal', 'purged'],
  ] as const)('a final status for a payment %s meanwhile: one read, nothing written', async ([, meanwhile]) => {
    const world = await oneBy(async (_, id) => {
      // Version 1, the record as oneBy wrote it: written without a read, which would count.
      if (meanwhile === 'settled') await world.journal.transition(id, 1, { state: 'successful', statusText: 'successful', by: 'a till' });
      return status(id, 'successful');
    }, 'pending');
    const get = world.journal.get.bind(world.journal);
    const reads = { count: 0 };
    world.journal.get = async (referenceId) => {
      if (world.checks.length === 0) return get(referenceId);
      reads.count++;
      return meanwhile === 'purged' ? undefined : get(referenceId);
    };
    const transition = vi.spyOn(world.journal, 'transition');
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(1);
    expect(reads.count).toBe(1);
    // The till's write alone.
    expect(transition).toHaveBeenCalledTimes(meanwhile === 'settled' ? 1 : 0);
    expect(world.settled).toEqual([]);
    await worker.stop();
  });
});

describe('what a check says', () => {
  it("a contradiction without onContradiction: the error line's details are the record's state and the service's word", async () => {
    const world = await settledTheOtherWayMeanwhile();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.sinks.error.mock.calls.map((call) => call[1])).toEqual([{ state: 'failed', statusText: 'successful' }]);
    await worker.stop();
  });

  it('a 503 is not a 404: never judged as one, never rechecked, the record stays as it was', async () => {
    const unavailable = new InternalServerError({ ...apiError, status: 503, message: 'down' });
    const judgeNotFound = vi.fn(async () => undefined);
    const world = await oneBy(() => unavailable, 'unknown', 60_000, { judgeNotFound });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(3_500);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect(judgeNotFound).not.toHaveBeenCalled();
    expect((await world.record())?.state).toBe('unknown');
    expect(world.lines('debug').filter((line) => line.includes('a 404'))).toEqual([]);
    await worker.stop();
  });

  it('a payment open exactly staleAfterMs at a check is reported then', async () => {
    const world = await oneBy((_, id) => status(id, 'pending'), 'pending', 10_000);
    const createdAt = Date.parse(((await world.record()) as PaymentRecord).createdAt);
    const onStale = vi.fn();
    // oneBy wrote it 10 s ago and then waited 1 s: the first check, made as the worker starts, is at 11 000 ms of age.
    const worker = world.start({ staleAfterMs: 11_000, onStale, intervalMs: 5_000, maxIntervalMs: 5_000 });
    await vi.advanceTimersByTimeAsync(0);
    expect(world.checks).toEqual([createdAt + 11_000]);
    expect(onStale).toHaveBeenCalledTimes(1);
    await worker.stop();
  });
});

describe('a pending word for a payment changed meanwhile', () => {
  it('closed not-sent by someone else: a contradiction, given to onContradiction; nothing delivered, checked no more', async () => {
    const world = await oneBy(async (_, id) => {
      await world.writeNow({ state: 'not-sent', by: 'another worker' });
      return status(id, 'pending');
    }, 'unknown');
    const seen: PaymentRecord[] = [];
    const worker = world.start({ onContradiction: (record) => void seen.push(record) });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(seen).toEqual([
      expect.objectContaining({ state: 'not-sent', contradiction: expect.objectContaining({ statusText: 'pending' }) }),
    ]);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toEqual([]);
    await worker.stop();
  });

  it('purged from the journal: nothing said at error, the payment is checked on', async () => {
    const world = await oneBy((_, id) => status(id, 'pending'), 'unknown');
    world.purgeOnceChecked();
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(3_500);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });
});

describe('a 404 on a payment changed meanwhile', () => {
  it('settled by someone else before the worker read it: nothing delivered, checked no more', async () => {
    const world = await oneBy(async () => {
      await world.writeNow({ state: 'failed', statusText: 'failed', by: 'a till' });
      return notFound();
    }, 'unknown');
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toEqual([]);
    expect((await world.record())?.state).toBe('failed');
    await worker.stop();
  });

  it('closed not-sent by someone else while the recheck found it at the service: reported, never delivered', async () => {
    const world = await oneBy(async (call, id) => {
      if (call === 1) return notFound();
      await world.writeNow({ state: 'not-sent', by: 'another worker' });
      return status(id, 'successful');
    }, 'unknown');
    const seen: PaymentRecord[] = [];
    const worker = world.start({ notFoundGraceMs: 0, onContradiction: (record) => void seen.push(record) });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(2);
    expect(seen).toEqual([
      expect.objectContaining({ state: 'not-sent', contradiction: expect.objectContaining({ statusText: 'successful' }) }),
    ]);
    // The other writer had the outcome it recorded; the service contradicts it: a person decides, the shop is not told.
    expect(world.settled).toEqual([]);
    await worker.stop();
  });

  it('purged from the journal by the time of the verdict: nothing said at error, checked on', async () => {
    const world = await oneBy(() => notFound(), 'unknown');
    world.purgeOnceChecked();
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(3_500);
    expect(world.checks.length).toBeGreaterThanOrEqual(3);
    expect(world.lines('error')).toEqual([]);
    expect(world.settled).toEqual([]);
    await worker.stop();
  });

  it('closed not-sent without onSettled: nothing said but the close; checked no more', async () => {
    const world = await oneBy(() => notFound(), 'unknown');
    const worker = world.start({ notFoundGraceMs: 0, onSettled: undefined });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checks).toHaveLength(2);
    expect((await world.record())?.state).toBe('not-sent');
    expect([...world.lines('debug'), ...world.lines('warn'), ...world.lines('error')]).toEqual([]);
    await worker.stop();
  });
});

describe('leases lost during a check', () => {
  it('lost and leased again while its check is out: checked again as soon as that check ends', async () => {
    let answer: () => void = () => undefined;
    const world = await oneBy(async (call, id) => {
      if (call === 1) await new Promise<void>((resolve) => (answer = resolve));
      return status(id, 'pending');
    }, 'pending');
    // The first renewal finds the lease gone (it ran out in the store); the next scan leases the payment again.
    const renew = world.journal.renew.bind(world.journal);
    let lost = false;
    world.journal.renew = async (owner, ids, leaseMs) => {
      if (lost) return renew(owner, ids, leaseMs);
      lost = true;
      await world.journal.release(owner, ids);
      return [];
    };
    const worker = world.start({ leaseMs: 60_000, scanIntervalMs: 1_000, intervalMs: 20_000, maxIntervalMs: 20_000 });
    await vi.advanceTimersByTimeAsync(22_000);
    expect(lost).toBe(true);
    expect(world.checks).toHaveLength(1);
    answer();
    await vi.advanceTimersByTimeAsync(10);
    expect(world.checks).toHaveLength(2);
    await worker.stop();
  });

  it('lost while its final status was being recorded: nothing delivered or written (the payment is no longer its own)', async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending');
    const get = world.journal.get.bind(world.journal);
    let slowed = false;
    world.journal.get = async (referenceId) => {
      const record = await get(referenceId);
      if (world.checks.length > 0 && !slowed) {
        // A slow read across the worker's next renewal, which finds the lease taken.
        slowed = true;
        await new Promise((resolve) => setTimeout(resolve, 25_000));
      }
      return record;
    };
    world.journal.renew = async () => [];
    const worker = world.start({ leaseMs: 60_000 });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(slowed).toBe(true);
    expect(world.checks).toHaveLength(1);
    expect(world.settled).toEqual([]);
    expect(await world.record()).toMatchObject({ state: 'pending', version: 1 });
    await worker.stop();
  });
});

describe('after a final status', () => {
  it("the process's watch of the record is dropped (it holds open records only)", async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'unknown');
    const before = (await world.record()) as PaymentRecord;
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.settled).toHaveLength(1);
    // Still watched, the version written before would count the 6 s since; forgotten, it is a first sight.
    expect(world.watch.watched(before)).toBe(0);
    await worker.stop();
  });

  it('a failed first check makes a new payment a re-check: its next checks leave the first-check token of each window', async () => {
    const unavailable = new InternalServerError({ ...apiError, status: 503, message: 'down' });
    const world = await oneBy(() => unavailable, 'pending', 0);
    // 2 tokens per window, one of them kept for first checks: a re-check waits for both to be free.
    const worker = world.start({ requestsPerSecond: 2, initialDelayMs: 0, intervalMs: 0, maxIntervalMs: 0 });
    await vi.advanceTimersByTimeAsync(5_000);
    const gaps = world.checks.slice(1).map((at, index) => at - (world.checks[index] as number));
    expect(gaps.length).toBeGreaterThanOrEqual(2);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1_000);
    await worker.stop();
  });
});

describe('a 404 when the service refuses duplicate references: the worker sends the create again', () => {
  type Resend = NonNullable<SettlementWorkerContext['resend']>;
  type World = Awaited<ReturnType<typeof oneBy>>;
  /** A resend that writes `to` on the record as the real one does, and says whether it sent it (`sent`). */
  const writing =
    (world: () => World, asked: string[], to: PaymentChange['state'], sent = true): Resend =>
    async (record, by) => {
      asked.push(`${record.state} by ${by}`);
      await world().writeNow({ state: to, statusText: to, by });
      return { record: (await world().record()) as PaymentRecord, sent };
    };

  it('an open payment the service does not hold is sent again once; the record it leaves is checked on its schedule', async () => {
    const asked: string[] = [];
    const world: World = await oneBy((call, id) => (call === 1 ? notFound() : status(id, 'pending')), 'initiating', 60_000, {
      resend: writing(() => world, asked, 'pending'),
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(100);
    expect(asked).toEqual([expect.stringMatching(/^initiating by /)]);
    // The 404 led to the resend, not to a verdict: no second status check, nothing closed.
    expect(world.checks).toHaveLength(1);
    expect((await world.record())?.state).toBe('pending');
    await vi.advanceTimersByTimeAsync(1_500);
    expect(world.checks).toHaveLength(2);
    expect(world.settled).toEqual([]);
    await worker.stop();
  });

  it.each(['moved on by another writer', 'gone from the journal'] as const)(
    'a payment %s before its resend is not sent again: checked again, nothing said',
    async (meanwhile) => {
      const asked: string[] = [];
      const world: World = await oneBy(
        async (call, id) => {
          if (call === 1 && meanwhile === 'moved on by another writer')
            await world.writeNow({ state: 'pending', statusText: 'pending', by: 'a till' });
          return call === 1 ? notFound() : status(id, 'pending');
        },
        'initiating',
        60_000,
        { resend: writing(() => world, asked, 'pending') },
      );
      if (meanwhile === 'gone from the journal') world.purgeOnceChecked();
      const worker = world.start({ notFoundGraceMs: 0 });
      await vi.advanceTimersByTimeAsync(2_500);
      expect(asked).toEqual([]);
      expect(world.checks.length).toBeGreaterThanOrEqual(2);
      expect(world.lines('error')).toEqual([]);
      await worker.stop();
    },
  );

  it('a resend that fails is no verdict: nothing closed, no second check, said at error', async () => {
    const world = await oneBy((call, id) => (call === 1 ? notFound() : status(id, 'pending')), 'initiating', 60_000, {
      resend: async () => {
        throw new Error('the journal write failed');
      },
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(100);
    expect((await world.record())?.state).toBe('initiating');
    expect(world.checks).toHaveLength(1);
    expect(world.lines('error')).toEqual([expect.stringContaining(`${world.referenceId} could not be recorded; trying again`)]);
    await worker.stop();
  });

  it('a resend under way when the worker stops ends with the stop: nothing decided, nothing said', async () => {
    let began = false;
    const world = await oneBy(() => notFound(), 'initiating', 60_000, {
      resend: (_record, _by, signal) =>
        new Promise((_, reject) => {
          began = true;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(100);
    expect(began).toBe(true);
    await worker.stop();
    expect((await world.record())?.state).toBe('initiating');
    expect(world.checks).toHaveLength(1);
    expect(world.lines('error')).toEqual([]);
    expect(world.lines('warn')).toEqual([]);
  });

  it.each([
    ['this worker’s resend settled it: onSettled hears it once', true, ['successful']],
    ['another writer’s resend settled it: that writer delivers it, not this worker', false, []],
  ])('%s, and it is checked no more', async (_, sent, delivered) => {
    const asked: string[] = [];
    const world: World = await oneBy(() => notFound(), 'initiating', 60_000, {
      resend: writing(() => world, asked, 'successful', sent),
    });
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(asked).toHaveLength(1);
    expect(world.settled.map((record) => record.state)).toEqual(delivered);
    expect(world.checks).toHaveLength(1);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });

  it('after this worker’s resend settled it, an onSettled that throws is said at error (recorded); no onSettled, nothing said', async () => {
    for (const onSettled of [
      () => {
        throw new Error('the shop database is down');
      },
      undefined,
    ]) {
      const asked: string[] = [];
      const world: World = await oneBy(() => notFound(), 'initiating', 60_000, { resend: writing(() => world, asked, 'failed') });
      const worker = world.start({ notFoundGraceMs: 0, onSettled });
      await vi.advanceTimersByTimeAsync(10_000);
      expect((await world.record())?.state).toBe('failed');
      expect(world.lines('error')).toEqual(
        onSettled === undefined ? [] : [expect.stringContaining(`onSettled threw for ${world.referenceId} (failed, recorded)`)],
      );
      await worker.stop();
    }
  });
});

describe('where a payment was pushed, told before its first check', () => {
  const here: PaymentDeployment = { baseUrl: 'https://collections.example', account: 'account-1' };
  const other: PaymentDeployment = { baseUrl: 'https://sandbox.collections.example', account: 'account-9' };
  /** The client's deployment check: a record of `other` is another deployment's. */
  const mismatchOf = async (record: Pick<PaymentRecord, 'referenceId' | 'state' | 'deployment'>) =>
    record.deployment?.baseUrl === other.baseUrl ? new DeploymentMismatchError(record, other, here) : undefined;

  it('not told (the key function failed): never checked, said at error, its lease left to lapse; checked once told', async () => {
    for (const failure of [new Error('the key function failed'), new ConfigurationError('the API key could not be read')]) {
      const told: string[] = [];
      const world = await oneBy(
        (_, id) => status(id, 'successful'),
        'pending',
        60_000,
        {
          deploymentMismatch: async (record) => {
            told.push(record.referenceId);
            if (told.length > 1) return undefined;
            // A configuration problem is answered; anything else is thrown.
            if (failure instanceof ConfigurationError) return failure;
            throw failure;
          },
        },
        here,
      );
      const worker = world.start();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(told).toEqual([world.referenceId]);
      expect(world.checks).toEqual([]);
      expect(world.lines('error')).toEqual([
        expect.stringContaining(`settlement worker: could not tell where ${world.referenceId} was pushed; trying again`),
      ]);
      // Its lease (30 s) lapses; leased again, it is told where it went this time, and checked.
      await vi.advanceTimersByTimeAsync(30_000);
      expect(told).toEqual([world.referenceId, world.referenceId]);
      expect(world.checks).toHaveLength(1);
      expect((await world.record())?.state).toBe('successful');
      await worker.stop();
    }
  });

  it("another deployment's: never checked, said at error once per deployment, later ones at debug; reported", async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending', 60_000, { deploymentMismatch: mismatchOf }, other);
    const second = await world.openAnother({ deployment: other });
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(world.checks).toEqual([]);
    const errors = world.lines('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`payments pushed to ${other.baseUrl} (account ${other.account}) are left open`);
    expect(errors[0]).toContain(`configured for ${here.baseUrl} (account ${here.account})`);
    const firstSeen = [world.referenceId, second].find((id) => errors[0]?.includes(`first seen: ${id}`));
    const laterOne = firstSeen === second ? world.referenceId : second;
    expect(world.lines('debug')).toContainEqual(
      expect.stringContaining(`settlement worker: ${laterOne} was pushed to another deployment; set aside`),
    );
    expect(worker.configurationProblem).toBeInstanceOf(DeploymentMismatchError);
    await worker.stop();
  });

  it('the problem is reported for 3 minutes after the last such payment, then cleared; one met after that is said again', async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending', 60_000, { deploymentMismatch: mismatchOf }, other);
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(world.lines('error')).toHaveLength(1);
    // Settled by a worker of its own deployment: never met again here.
    await world.writeNow({ state: 'failed', statusText: 'failed', by: 'its own worker' });
    // Met at the start: reported for 3 minutes from then, to the millisecond.
    await vi.advanceTimersByTimeAsync(179_899);
    expect(worker.configurationProblem).toBeInstanceOf(DeploymentMismatchError);
    await vi.advanceTimersByTimeAsync(1);
    expect(worker.configurationProblem).toBeUndefined();
    await world.openAnother({ deployment: other });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(world.lines('error')).toHaveLength(2);
    expect(worker.configurationProblem).toBeInstanceOf(DeploymentMismatchError);
    expect(world.checks).toEqual([]);
    await worker.stop();
  });

  it('told only after stop(): nothing said or set aside', async () => {
    let tell: (error: DeploymentMismatchError) => void = () => undefined;
    const world = await oneBy(
      (_, id) => status(id, 'successful'),
      'pending',
      60_000,
      { deploymentMismatch: () => new Promise((resolve) => (tell = resolve)) },
      other,
    );
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(100);
    const renew = vi.spyOn(world.journal, 'renew');
    const stopped = worker.stop();
    tell(new DeploymentMismatchError({ referenceId: world.referenceId, state: 'pending' }, other, here));
    await stopped;
    expect(world.lines('error')).toEqual([]);
    expect(renew).not.toHaveBeenCalled();
    expect(worker.configurationProblem).toBeUndefined();
  });

  it('two other deployments: each said at error', async () => {
    const third: PaymentDeployment = { baseUrl: 'https://old.collections.example', account: 'account-7' };
    const world = await oneBy(
      (_, id) => status(id, 'successful'),
      'pending',
      60_000,
      {
        deploymentMismatch: async (record) =>
          record.deployment !== undefined && record.deployment.baseUrl !== here.baseUrl
            ? new DeploymentMismatchError(record, record.deployment, here)
            : undefined,
      },
      other,
    );
    await world.openAnother({ deployment: third });
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(1_000);
    const errors = world.lines('error');
    expect(errors).toHaveLength(2);
    expect(errors.filter((line) => line.includes(`pushed to ${other.baseUrl}`))).toHaveLength(1);
    expect(errors.filter((line) => line.includes(`pushed to ${third.baseUrl}`))).toHaveLength(1);
    await worker.stop();
  });

  it("this client's own: checked as any other, at once once told", async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending', 60_000, { deploymentMismatch: mismatchOf }, here);
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(world.checks).toHaveLength(1);
    expect(world.settled.map((record) => record.state)).toEqual(['successful']);
    expect(worker.configurationProblem).toBeUndefined();
    await worker.stop();
  });
});

describe('at start', () => {
  it("a lease shorter than a check's time limit is warned about; the defaults are not", async () => {
    const short = await oneBy((_, id) => status(id, 'pending'), 'pending');
    const worker = short.start({ leaseMs: 20_000 });
    expect(short.lines('warn')).toEqual([
      expect.stringContaining(
        "settlement worker: leaseMs (20000 ms) is shorter than a check's time limit (timeoutMs 30000 ms): checks are cut short to fit the lease and may never finish; make leaseMs at least twice timeoutMs",
      ),
    ]);
    await worker.stop();
    const defaults = await oneBy((_, id) => status(id, 'pending'), 'pending');
    const other = defaults.start();
    expect(defaults.lines('warn')).toEqual([]);
    await other.stop();
  });
});

describe('who a change is by', () => {
  it("the worker's journal writes name it: worker:<its id>", async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending');
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(1_000);
    const history = await world.journal.history(world.referenceId);
    expect(history.at(-1)).toMatchObject({ by: `worker:${worker.workerId}` });
    await worker.stop();
  });
});

describe('checks that meet other work', () => {
  it('a payment leased again during its check is told where it went again before its next check', async () => {
    let finishFirst: () => void = () => undefined;
    let told = 0;
    const world = await oneBy(
      (call, id) =>
        call === 1
          ? new Promise<CollectionStatus>((resolve) => (finishFirst = () => resolve(status(id, 'pending'))))
          : status(id, 'pending'),
      'pending',
      60_000,
      {
        deploymentMismatch: async () => {
          told++;
          return undefined;
        },
      },
      { baseUrl: 'https://collections.example', account: 'account-1' },
    );
    const worker = world.start({ leaseMs: 3_000, intervalMs: 200, maxIntervalMs: 200, scanIntervalMs: 100 });
    await vi.advanceTimersByTimeAsync(50);
    expect([told, world.checks.length]).toEqual([1, 1]);
    // The lease is lost under the check (as after a stall), then leased to this worker again while the check is out.
    await world.journal.release(worker.workerId, [world.referenceId]);
    expect(await world.journal.lease({ owner: 'another-worker', leaseMs: 60_000, limit: 1 })).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_100);
    await world.journal.release('another-worker', [world.referenceId]);
    await vi.advanceTimersByTimeAsync(200);
    expect(world.checks).toHaveLength(1);
    finishFirst();
    await vi.advanceTimersByTimeAsync(50);
    expect([told, world.checks.length]).toEqual([2, 2]);
    await worker.stop();
  });

  it("a result the journal cannot record while the journal's outage is being reported is not said again", async () => {
    const world = await oneBy((_, id) => status(id, 'successful'), 'pending');
    world.journal.transition = async () => {
      throw new Error('the database is restarting');
    };
    const worker = world.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(world.checks).toHaveLength(1);
    expect(world.lines('warn')).toEqual([expect.stringContaining('settlement worker: could not use the journal')]);
    expect(world.lines('error')).toEqual([]);
    await worker.stop();
  });

  it("a 404's second check waits out a 429 pause that began while the 404 was being judged", async () => {
    const second = randomUUID();
    const world = await oneBy(
      (_, id, signal) =>
        id === second
          ? answerAfter(50, () => new RateLimitError({ ...apiError, status: 429, message: 'slow down', retryAfterMs: 5_000 }), signal)
          : notFound(),
      'unknown',
      60_000,
      { judgeNotFound: () => new Promise((resolve) => setTimeout(resolve, 100)) },
    );
    await world.openAnother({ referenceId: second });
    const startedAt = Date.now();
    const worker = world.start({ notFoundGraceMs: 0 });
    await vi.advanceTimersByTimeAsync(4_000);
    // Checked once; its second check (before it may be closed) waits for the pause from 50 ms to 5 050 ms.
    expect(world.checkedIds.filter((id) => id === world.referenceId)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    const times = world.checks.filter((_, index) => world.checkedIds[index] === world.referenceId).map((at) => at - startedAt);
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect(times[1]).toBeGreaterThanOrEqual(5_050);
    await worker.stop();
  });

  it("a 404 that arrives while another check's 429 pauses the worker is asked again after the pause, not judged", async () => {
    let judged = 0;
    let limited = 0;
    const second = randomUUID();
    const world = await oneBy(
      (_, id, signal) =>
        id === second
          ? answerAfter(100, notFound, signal)
          : limited++ === 0
            ? new RateLimitError({ ...apiError, status: 429, message: 'slow down', retryAfterMs: 5_000 })
            : status(id, 'pending'),
      'unknown',
      60_000,
      {
        judgeNotFound: async () => {
          judged++;
        },
      },
    );
    await world.openAnother({ referenceId: second, state: 'unknown', statusText: undefined, sendWindowMs: 1_000 });
    const worker = world.start({ notFoundGraceMs: 600_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(world.checkedIds.filter((id) => id === second)).toHaveLength(1);
    expect(judged).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(world.checkedIds.filter((id) => id === second).length).toBeGreaterThanOrEqual(2);
    expect(judged).toBeGreaterThanOrEqual(1);
    await worker.stop();
  });
});
