/**
 * The deadline (`maxWaitMs`) and the caller's signal bound every wait of a call: the concurrency queue,
 * an async `apiKey()` function, the pause and the request. A fake clock and a scripted fetch: nothing
 * here waits in real time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { boundedWait } from '../../src/core/wait.js';
import { ConfigurationError, PollTimeoutError } from '../../src/index.js';
import {
  advanceTime,
  collectionsClient,
  flushUntil,
  REFERENCE_ID,
  scriptedFetch,
  statusBody,
  track,
  useFakeClock,
} from '../helpers/collections.js';

const pending = () =>
  new Response(JSON.stringify(statusBody({ statusText: 'pending' })), { headers: { 'content-type': 'application/json' } });
/** A key function that answers after `ms` (fake time). */
const slowKey = (ms: number) => () => new Promise<string>((resolve) => setTimeout(() => resolve('slow-key-0001'), ms));
const abortError = () => new DOMException('The operation was aborted.', 'AbortError');

afterEach(() => {
  vi.useRealTimers();
});

describe('the poll deadline bounds every wait', () => {
  it('while queued behind maxConcurrentRequests: PollTimeoutError at maxWaitMs, not when the slot frees', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(() => 'hang');
    const client = collectionsClient({ fetch, maxConcurrentRequests: 1, timeoutMs: 5_000 });
    const holder = track(client.checkStatus(REFERENCE_ID, { maxRetries: 0 }));
    await flushUntil(() => urls.length === 1);
    const poll = track(client.pollUntilSettled(REFERENCE_ID, { maxWaitMs: 300 }));
    await advanceTime(310, 10);
    expect(poll.error).toBeInstanceOf(PollTimeoutError);
    expect(urls).toHaveLength(1);
    expect(holder.settled).toBe(false);
    await advanceTime(5_000, 100);
    expect(holder.settled).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('while an async apiKey() is slow: PollTimeoutError at maxWaitMs', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(pending);
    const poll = track(collectionsClient({ fetch, apiKey: slowKey(3_000) }).pollUntilSettled(REFERENCE_ID, { maxWaitMs: 300 }));
    await advanceTime(310, 10);
    expect(poll.error).toBeInstanceOf(PollTimeoutError);
    expect(urls).toHaveLength(0);
    await advanceTime(3_000, 100);
  });
});

describe('the caller’s abort ends every wait at once', () => {
  it.for(['checkStatus', 'pollUntilSettled'] as const)('%s: an abort during a slow apiKey() rejects with the reason', async (method) => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(pending);
    const client = collectionsClient({ fetch, apiKey: slowKey(3_000) });
    const controller = new AbortController();
    const call = track(
      method === 'checkStatus'
        ? client.checkStatus(REFERENCE_ID, { signal: controller.signal })
        : client.pollUntilSettled(REFERENCE_ID, { signal: controller.signal }),
    );
    await advanceTime(20, 10);
    const reason = abortError();
    controller.abort(reason);
    await advanceTime(10, 10);
    expect(call.error).toBe(reason);
    expect(urls).toHaveLength(0);
    await advanceTime(3_000, 100);
  });
});

describe('timeoutMs bounds the key function', () => {
  it('a key function slower than timeoutMs: ConfigurationError, nothing sent', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(pending);
    const call = track(collectionsClient({ fetch, apiKey: slowKey(3_000), timeoutMs: 200 }).checkStatus(REFERENCE_ID, { maxRetries: 0 }));
    await advanceTime(210, 10);
    expect(call.error).toBeInstanceOf(ConfigurationError);
    expect((call.error as Error).message).toMatch(/did not return within timeoutMs \(200 ms\); nothing was sent/);
    expect(urls).toHaveLength(0);
    await advanceTime(3_000, 100);
  });
});

describe('an abort during a create’s final lookup', () => {
  it('ends the call with the signal’s reason, like any abort', async () => {
    useFakeClock();
    const { fetch, urls } = scriptedFetch(
      () => new Response('', { status: 503 }),
      () => 'hang',
    );
    const controller = new AbortController();
    const call = track(
      collectionsClient({ fetch }).initiate(
        { productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', phoneNumber: '0977123456', amount: 5, referenceId: REFERENCE_ID },
        { maxRetries: 0, signal: controller.signal },
      ),
    );
    await flushUntil(() => urls.length === 2);
    const reason = abortError();
    controller.abort(reason);
    await advanceTime(10, 10);
    expect(call.error).toBe(reason);
  });
});

describe('a bounded wait of background work', () => {
  it("keeps no process alive by its time limit (a budget renewal the journal never answers), a caller's wait does", async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const never = new Promise<never>(() => {});
    const end = new AbortController();
    const before = timers();
    const background = boundedWait(never, end.signal, 60_000, () => new Error('late'), false);
    expect(timers()).toBe(before);
    const foreground = boundedWait(never, end.signal, 60_000, () => new Error('late'));
    expect(timers()).toBe(before + 1);
    end.abort(abortError());
    await expect(background).rejects.toThrow('aborted');
    await expect(foreground).rejects.toThrow('aborted');
    expect(timers()).toBe(before);
  });
});
