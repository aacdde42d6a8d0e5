import { delay, HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  type CollectionStatus,
  NotFoundError,
  PermissionDeniedError,
  PollTimeoutError,
  RequestValidationError,
  TapCollectionsError,
  UnprocessableEntityError,
} from '../../src/index.js';
import {
  advanceTime,
  CHECK_URL,
  checkPath,
  collectionsClient,
  flushUntil,
  healthy,
  inOrder,
  issuePaths,
  json,
  REFERENCE_ID,
  rejectionOf,
  statusBody,
  track,
  useFakeClock,
  validationProblem,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();
// `/health` proves the base URL (the client asks it once, before it takes a 404 as the service's answer).
beforeEach(() => server.use(healthy()));

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A fast schedule for real-time tests: the whole poll takes tens of milliseconds. */
const FAST = { initialDelayMs: 10, intervalMs: 5, maxIntervalMs: 20 } as const;

const status =
  (statusText: string, extra: Partial<CollectionStatus> = {}) =>
  () =>
    HttpResponse.json(statusBody({ statusText, ...extra }));
const failing =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    // The Collections envelope (a 404 counts as the service's own only with it).
    json(code, { success: false, code: `E_HTTP_${code}` }, headers);

/**
 * Answers status checks with `replies` in order and stamps each with the (fake) time since the first
 * check; `started()` resolves once the first check arrived, so fake time is advanced from that moment.
 */
function stampRequests(...replies: (() => Response | Promise<Response>)[]) {
  const times: number[] = [];
  let first: number | undefined;
  const next = inOrder(...replies);
  server.use(
    http.get(CHECK_URL, () => {
      first ??= Date.now();
      times.push(Date.now() - first);
      return next();
    }),
  );
  return { times, started: () => flushUntil(() => times.length > 0) };
}

/**
 * The pauses between successive checks match `expected`, each up to `slackMs` late: under the fake clock the
 * response reaches the client a step after the handler stamped it, and the next pause starts from there.
 */
function expectPauses(times: number[], expected: number[], slackMs = 10): void {
  const pauses = times.slice(1).map((time, index) => time - (times[index] ?? 0));
  expect(pauses).toHaveLength(expected.length);
  pauses.forEach((pause, index) => {
    const wanted = expected[index] ?? Number.NaN;
    expect(pause, `pause ${index} of ${JSON.stringify(pauses)}`).toBeGreaterThanOrEqual(wanted);
    expect(pause, `pause ${index} of ${JSON.stringify(pauses)}`).toBeLessThanOrEqual(wanted + slackMs);
  });
}

describe('pollUntilSettled: settling', () => {
  it('polls until successful and resolves with that status', async () => {
    server.use(
      http.get(
        CHECK_URL,
        inOrder(status('pending'), status('pending'), status('successful', { transactionCode: 'TXN-42', reason: 'Paid' })),
      ),
    );
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, FAST);
    expect(settled).toEqual({ referenceId: REFERENCE_ID, statusText: 'successful', transactionCode: 'TXN-42', reason: 'Paid' });
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(request).toMatchObject({ method: 'GET', path: checkPath() });
  });

  it('RESOLVES (does not throw) with a failed status', async () => {
    server.use(
      http.get(CHECK_URL, inOrder(status('pending'), status('failed', { transactionCode: 'INTERNAL_SYSTEM_ERROR', reason: 'Declined' }))),
    );
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, FAST);
    expect(settled).toMatchObject({ statusText: 'failed', transactionCode: 'INTERNAL_SYSTEM_ERROR', reason: 'Declined' });
    expect(requests).toHaveLength(2);
  });

  it('checks at once: an already settled collection takes one request', async () => {
    server.use(http.get(CHECK_URL, status('successful')));
    const started = performance.now();
    await collectionsClient().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 5_000 });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(requests).toHaveLength(1);
  });

  it('keeps waiting through an unknown interim status, pausing by the schedule (no hot loop)', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { times, started } = stampRequests(status('processing'));
    const poll = track(
      collectionsClient().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 1_000, intervalMs: 400, maxIntervalMs: 600, maxWaitMs: 60_000 }),
    );
    await started();
    await advanceTime(995);
    expect(times).toEqual([0]);
    await advanceTime(2_525);
    // initialDelayMs, then intervalMs growing ×1.5 and capped: 1000, 400, 600 (not 900), 600, 600.
    expectPauses(times, [1_000, 400, 600, 600, 600]);
    expect(poll.settled).toBe(false);
    server.use(http.get(CHECK_URL, status('successful')));
    await advanceTime(600);
    expect(poll.value).toMatchObject({ statusText: 'successful' });
    expect(times).toHaveLength(6);
    expect(requests).toHaveLength(7);
  });

  it('takes intervalMs as the first pause when it is set without initialDelayMs (the contract’s meaning)', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { times, started } = stampRequests(status('pending'));
    const poll = track(collectionsClient().pollUntilSettled(REFERENCE_ID, { intervalMs: 100, maxIntervalMs: 150, maxWaitMs: 60_000 }));
    await started();
    await advanceTime(400);
    // 100 first (not the default schedule's 5 s), then 100 growing ×1.5 to the 150 cap.
    expectPauses(times, [100, 100, 150]);
    expect(poll.settled).toBe(false);
  });

  it('jitters each pause by at most ±10%', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(1);
    const { times, started } = stampRequests(status('pending'), status('pending'), status('successful'));
    const poll = track(collectionsClient().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 1_000, intervalMs: 500, maxIntervalMs: 500 }));
    await started();
    await advanceTime(2_000);
    expect(poll.value).toMatchObject({ statusText: 'successful' });
    expectPauses(times, [1_100, 550]);
  });
});

describe('pollUntilSettled: onUpdate', () => {
  it('is called with the first status and on each change only', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('pending'), status('processing'), status('successful'))));
    const seen: CollectionStatus[] = [];
    await collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, onUpdate: (update) => seen.push(update) });
    expect(seen.map((update) => update.statusText)).toEqual(['pending', 'processing', 'successful']);
    expect(seen[0]).toEqual(statusBody({ statusText: 'pending' }).data);
    expect(requests).toHaveLength(4);
  });

  it('is called once when the first status is already settled', async () => {
    server.use(http.get(CHECK_URL, status('failed')));
    const onUpdate = vi.fn();
    await collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, onUpdate });
    expect(onUpdate).toHaveBeenCalledTimes(1);
    expect(onUpdate).toHaveBeenCalledWith(expect.objectContaining({ statusText: 'failed' }));
  });

  it('an onUpdate that throws does not end the wait (it is logged)', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('processing'), status('successful'))));
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const onUpdate = vi.fn(() => {
      throw new Error('display broke');
    });
    const settled = await collectionsClient({ logger, logLevel: 'error' }).pollUntilSettled(REFERENCE_ID, { ...FAST, onUpdate });
    expect(settled.statusText).toBe('successful');
    expect(onUpdate).toHaveBeenCalledTimes(3);
    expect(logger.error).toHaveBeenCalledTimes(3);
    expect(requests).toHaveLength(3);
  });
});

describe('pollUntilSettled: transient failures ride out', () => {
  it('honours Retry-After: 1 of a 429 mid-poll', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { times, started } = stampRequests(status('pending'), failing(429, { 'retry-after': '1' }), status('successful'));
    const poll = track(collectionsClient().pollUntilSettled(REFERENCE_ID, FAST));
    await started();
    await advanceTime(1_000);
    expect(times).toHaveLength(2);
    await advanceTime(50);
    // The 429 came 10 ms in; the next check waited the second it asked for, not the 5 ms interval.
    expectPauses(times, [10, 1_000]);
    expect(poll.value).toMatchObject({ statusText: 'successful' });
  });

  it('rides out a 503 storm', async () => {
    server.use(http.get(CHECK_URL, inOrder(...Array.from({ length: 5 }, () => failing(503)), status('successful'))));
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, FAST);
    expect(settled.statusText).toBe('successful');
    expect(requests).toHaveLength(6);
  });

  it.each([408, 429, 500, 502, 504])('rides out a %i', async (code) => {
    server.use(http.get(CHECK_URL, inOrder(failing(code), status('successful'))));
    expect((await collectionsClient().pollUntilSettled(REFERENCE_ID, FAST)).statusText).toBe('successful');
    expect(requests).toHaveLength(2);
  });

  it('rides out network errors', async () => {
    server.use(
      http.get(CHECK_URL, inOrder(status('pending'), HttpResponse.error, HttpResponse.error, HttpResponse.error, status('successful'))),
    );
    const onUpdate = vi.fn();
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, onUpdate });
    expect(settled.statusText).toBe('successful');
    expect(requests).toHaveLength(5);
    expect(onUpdate.mock.calls.map(([update]) => update.statusText)).toEqual(['pending', 'successful']);
  });

  it('rides out a status request past timeoutMs', async () => {
    let calls = 0;
    server.use(
      http.get(CHECK_URL, async () => {
        calls++;
        if (calls === 1) await delay(300);
        return HttpResponse.json(statusBody({ statusText: 'successful' }));
      }),
    );
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, timeoutMs: 30 });
    expect(settled.statusText).toBe('successful');
    expect(calls).toBe(2);
  });

  it('does not use maxRetries: each failure costs one request, then the poll pauses', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { times, started } = stampRequests(failing(500, { 'retry-after': '0' }), status('successful'));
    const poll = track(
      collectionsClient({ maxRetries: 5 }).pollUntilSettled(REFERENCE_ID, { initialDelayMs: 200, intervalMs: 100, maxIntervalMs: 100 }),
    );
    await started();
    await advanceTime(250);
    expectPauses(times, [200]);
    expect(poll.value).toMatchObject({ statusText: 'successful' });
  });
});

describe('pollUntilSettled: failures that end the wait', () => {
  it.each([
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
  ] as const)('%i ends it at once', async (code, errorClass) => {
    server.use(
      http.get(
        CHECK_URL,
        inOrder(status('pending'), () => json(code, { success: false, code: `E_${code}` }), status('successful')),
      ),
    );
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, FAST));
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ status: code, code: `E_${code}` });
    expect(requests).toHaveLength(2);
  });

  it('422 ends it at once with the problem details', async () => {
    server.use(http.get(CHECK_URL, () => json(422, validationProblem(checkPath()))));
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, FAST));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ code: 'E_VALIDATION_ERROR', errors: [{ field: 'params.referenceId', rule: 'uuid' }] });
    expect(requests).toHaveLength(1);
  });

  it('404 within notFoundGraceMs keeps polling', async () => {
    server.use(http.get(CHECK_URL, inOrder(failing(404), failing(404), status('pending'), status('successful'))));
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, notFoundGraceMs: 5_000 });
    expect(settled.statusText).toBe('successful');
    // Four status checks, and /health once (asked before the first 404 was taken as the service's answer).
    expect(requests.map((request) => request.path.split('/')[1])).toEqual(['v1', 'health', 'v1', 'v1', 'v1']);
  });

  it('404 after notFoundGraceMs ends it with NotFoundError', async () => {
    useFakeClock();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { times, started } = stampRequests(failing(404));
    const poll = track(
      collectionsClient().pollUntilSettled(REFERENCE_ID, {
        initialDelayMs: 100,
        intervalMs: 100,
        maxIntervalMs: 100,
        notFoundGraceMs: 250,
      }),
    );
    await started();
    await advanceTime(1_000);
    expect(poll.error).toBeInstanceOf(NotFoundError);
    // 0, 100, 200 are within the grace; 300 is past it.
    expectPauses(times, [100, 100, 100]);
  });

  it('404 with notFoundGraceMs 0 ends it at the first check', async () => {
    server.use(http.get(CHECK_URL, failing(404)));
    expect(await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, notFoundGraceMs: 0 }))).toBeInstanceOf(
      NotFoundError,
    );
    expect(requests.map((request) => request.path.split('/')[1])).toEqual(['v1', 'health']);
  });
});

describe('pollUntilSettled: the deadline', () => {
  it('rejects with PollTimeoutError carrying the last status seen', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('processing'))));
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 80 }));
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    const timeout = error as PollTimeoutError<CollectionStatus>;
    expect(timeout.referenceId).toBe(REFERENCE_ID);
    expect(timeout.lastStatus).toEqual(statusBody({ statusText: 'processing' }).data);
    expect(timeout.message).toContain('80 ms');
    expect(requests.length).toBeGreaterThanOrEqual(2);
  });

  it('has lastStatus undefined when no status was seen', async () => {
    server.use(http.get(CHECK_URL, failing(503)));
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 60 }));
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect((error as PollTimeoutError).lastStatus).toBeUndefined();
    expect(requests.length).toBeGreaterThanOrEqual(2);
  });

  it('cuts a status request in flight (a handler that never answers)', async () => {
    server.use(
      http.get(
        CHECK_URL,
        inOrder(status('pending'), async () => {
          await delay('infinite');
          return HttpResponse.json(statusBody({ statusText: 'successful' }));
        }),
      ),
    );
    const started = performance.now();
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 100 }));
    expect(performance.now() - started).toBeLessThan(600);
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect((error as PollTimeoutError<CollectionStatus>).lastStatus?.statusText).toBe('pending');
    expect(requests).toHaveLength(2);
  });

  it('cuts a Retry-After longer than the deadline', async () => {
    useFakeClock();
    server.use(http.get(CHECK_URL, failing(429, { 'retry-after': '3600' })));
    const poll = track(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 500 }));
    await advanceTime(510);
    expect(poll.error).toBeInstanceOf(PollTimeoutError);
    expect(requests).toHaveLength(1);
  });
});

describe('pollUntilSettled: aborting', () => {
  it('rejects promptly with the signal reason while waiting between polls', async () => {
    server.use(http.get(CHECK_URL, status('pending')));
    const controller = new AbortController();
    const poll = collectionsClient().pollUntilSettled(REFERENCE_ID, { initialDelayMs: 10_000, signal: controller.signal });
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    const started = performance.now();
    controller.abort();
    const error = await rejectionOf(poll);
    expect(performance.now() - started).toBeLessThan(200);
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: 'AbortError' });
    expect(error).not.toBeInstanceOf(PollTimeoutError);
    expect(requests).toHaveLength(1);
  });

  it('rejects promptly with the signal reason while a request is in flight', async () => {
    server.use(
      http.get(CHECK_URL, async () => {
        await delay('infinite');
        return HttpResponse.json(statusBody());
      }),
    );
    const controller = new AbortController();
    const reason = new Error('customer walked away');
    const poll = collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, signal: controller.signal });
    await vi.waitFor(() => expect(requests).toHaveLength(1));
    const started = performance.now();
    controller.abort(reason);
    expect(await rejectionOf(poll)).toBe(reason);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('rejects with the reason of an already-aborted signal and sends nothing', async () => {
    server.use(http.get(CHECK_URL, status('successful')));
    const reason = new Error('already gone');
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
    expect(requests).toHaveLength(0);
  });

  it('is not mistaken for the deadline when the caller aborts first', async () => {
    server.use(http.get(CHECK_URL, status('pending')));
    const error = await rejectionOf(
      collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 10_000, signal: AbortSignal.timeout(40) }),
    );
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(error).not.toBeInstanceOf(PollTimeoutError);
  });
});

describe('pollUntilSettled: bad input (nothing is sent)', () => {
  it.each([
    ['options.maxIntervalMs', { intervalMs: 500, maxIntervalMs: 100 }],
    ['options.maxWaitMs', { maxWaitMs: 0 }],
    ['options.maxWaitMs', { maxWaitMs: -1 }],
    ['options.maxWaitMs', { maxWaitMs: 1.5 }],
    ['options.maxWaitMs', { maxWaitMs: Number.POSITIVE_INFINITY }],
    ['options.initialDelayMs', { initialDelayMs: -1 }],
    ['options.intervalMs', { intervalMs: Number.NaN, maxIntervalMs: 100 }],
    ['options.notFoundGraceMs', { notFoundGraceMs: '10' }],
    ['options.onUpdate', { onUpdate: 'not a function' }],
    ['options.timeoutMs', { timeoutMs: 0 }],
    ['options.signal', { signal: { aborted: false } }],
  ])('refuses %s in %j', async (path, options) => {
    server.use(http.get(CHECK_URL, status('successful')));
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, options as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(issuePaths(error)).toEqual([path]);
    expect(requests).toHaveLength(0);
  });

  it('names every bad option at once', async () => {
    const error = await rejectionOf(
      collectionsClient().pollUntilSettled(REFERENCE_ID, { maxWaitMs: 0, intervalMs: 500, maxIntervalMs: 100, onUpdate: 3 as never }),
    );
    expect(issuePaths(error)).toEqual(['options.maxIntervalMs', 'options.maxWaitMs', 'options.onUpdate']);
    expect(requests).toHaveLength(0);
  });

  it('refuses a referenceId that is not a UUID', async () => {
    const error = await rejectionOf(collectionsClient().pollUntilSettled('abc', FAST));
    expect(issuePaths(error)).toEqual(['referenceId']);
    expect(requests).toHaveLength(0);
  });

  it('accepts intervalMs alone above the default largest pause', async () => {
    server.use(http.get(CHECK_URL, status('successful')));
    await collectionsClient().pollUntilSettled(REFERENCE_ID, { intervalMs: 5_000 });
    expect(requests).toHaveLength(1);
  });
});
