/**
 * "No timers left behind": however a poll ends, every timer it started is cleared. This file uses a
 * scripted `fetch` and no msw, so `vi.getTimerCount()` counts only the SDK's own timers (msw's sockets
 * would bring undici's internal timers into the fake clock).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, PollTimeoutError } from '../../src/index.js';
import {
  advanceTime,
  checkPath,
  collectionsClient,
  flushUntil,
  REFERENCE_ID,
  scriptedFetch,
  statusBody,
  track,
  useFakeClock,
} from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';

const FAST = { initialDelayMs: 10, intervalMs: 5, maxIntervalMs: 20 } as const;
const ok = (statusText: string) => () =>
  new Response(JSON.stringify(statusBody({ statusText })), { headers: { 'content-type': 'application/json' } });

afterEach(() => {
  vi.useRealTimers();
});

describe('pollUntilSettled leaves no timers behind', () => {
  it('after settling (through a dropped connection)', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(ok('pending'), () => 'drop', ok('successful'));
    const poll = track(collectionsClient({ fetch }).pollUntilSettled(REFERENCE_ID, FAST));
    await flushUntil(() => vi.getTimerCount() > 0);
    await advanceTime(100);
    expect(poll.value).toMatchObject({ statusText: 'successful' });
    expect(urls).toEqual(Array.from({ length: 3 }, () => `${COLLECTIONS_BASE_URL}${checkPath()}`));
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after a 5xx and a failed status', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(() => new Response('', { status: 503 }), ok('failed'));
    const poll = track(collectionsClient({ fetch }).pollUntilSettled(REFERENCE_ID, FAST));
    await advanceTime(50);
    expect(poll.value).toMatchObject({ statusText: 'failed' });
    expect(urls).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after a failure that ends the wait', async () => {
    useFakeClock();
    const { fetch } = scriptedFetch(ok('pending'), () => new Response('{}', { status: 401 }));
    const poll = track(collectionsClient({ fetch }).pollUntilSettled(REFERENCE_ID, FAST));
    await advanceTime(100);
    expect(poll.error).toBeInstanceOf(AuthenticationError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after the deadline cut a request in flight (its time limit cut to the deadline)', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(ok('pending'), () => 'hang');
    const poll = track(collectionsClient({ fetch }).pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 1_000 }));
    await advanceTime(995);
    expect(poll.settled).toBe(false);
    expect(urls).toHaveLength(2);
    // One timer only: the hanging request's time limit, cut to the deadline (the deadline has no timer of its own).
    expect(vi.getTimerCount()).toBe(1);
    await advanceTime(5);
    expect(poll.error).toBeInstanceOf(PollTimeoutError);
    expect((poll.error as PollTimeoutError).lastStatus).toMatchObject({ statusText: 'pending' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('after the deadline passed while waiting between polls', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(ok('pending'));
    const poll = track(collectionsClient({ fetch }).pollUntilSettled(REFERENCE_ID, { initialDelayMs: 60_000, maxWaitMs: 1_000 }));
    await flushUntil(() => urls.length === 1);
    // One timer only: the pause, cut to the deadline.
    await flushUntil(() => vi.getTimerCount() === 1);
    await advanceTime(1_000, 50);
    expect(poll.error).toBeInstanceOf(PollTimeoutError);
    expect(urls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    ['between polls', scriptedFetch(ok('pending'))],
    ['with a request in flight', scriptedFetch(ok('pending'), () => 'hang')],
  ])('after an abort %s', async (_when, script) => {
    useFakeClock();
    const controller = new AbortController();
    const poll = track(collectionsClient({ fetch: script.fetch }).pollUntilSettled(REFERENCE_ID, { ...FAST, signal: controller.signal }));
    await advanceTime(15);
    expect(poll.settled).toBe(false);
    // One timer: the pause, or the request's time limit.
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    await flushUntil(() => poll.settled);
    expect(poll.error).toMatchObject({ name: 'AbortError' });
    expect(vi.getTimerCount()).toBe(0);
  });
});
