/** Shared pieces of the Collections client tests: paths, builders, the 422 problem body, handlers, fake-time helpers. */
import { HttpResponse, http } from 'msw';
import { expect, onTestFinished, vi } from 'vitest';
import {
  type CollectionInput,
  type CollectionStatus,
  CollectionsClient,
  type CollectionsClientOptions,
  MemoryJournal,
  type PaymentRecord,
} from '../../src/index.js';
import { paymentFingerprint } from '../../src/journal/fingerprint.js';
import { collectionsError, validationProblem as simulatorValidationProblem } from '../../src/testing/simulator/envelopes.js';
import { API_KEY, COLLECTIONS_BASE_URL } from './fixtures.js';
import type { RecordedRequest } from './msw.js';

export const INITIATE_PATH = '/v1/collections/mobile-money';
export const INITIATE_URL = `${COLLECTIONS_BASE_URL}${INITIATE_PATH}`;
export const CHECK_URL = `${COLLECTIONS_BASE_URL}/v1/collections/check/:referenceId`;
export const DETAILS_URL = `${COLLECTIONS_BASE_URL}/v1/collections/:id`;
export const HEALTH_URL = `${COLLECTIONS_BASE_URL}/health`;

export const PRODUCT_ID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';
export const REFERENCE_ID = 'c0a8012e-7d3b-4f6a-9b1c-2d3e4f5a6b7c';
export const checkPath = (referenceId: string = REFERENCE_ID) => `/v1/collections/check/${referenceId}`;
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A CollectionsClient against the msw base URL; logging off unless the test says otherwise. */
export function collectionsClient(options: CollectionsClientOptions = {}): CollectionsClient {
  return new CollectionsClient({ apiKey: API_KEY, baseUrl: COLLECTIONS_BASE_URL, logLevel: 'off', ...options });
}

/** A valid creation input. */
export function collectionInput(overrides: Partial<CollectionInput> = {}): CollectionInput {
  return { productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 25, referenceId: REFERENCE_ID, ...overrides };
}

/** A status check's `data` (section 2 of the Collections document). */
export function collectionStatus(overrides: Partial<CollectionStatus> & Record<string, unknown> = {}): CollectionStatus {
  return { referenceId: REFERENCE_ID, statusText: 'pending', transactionCode: null, reason: null, ...overrides };
}

/** The 200 envelope of the status check. */
export function statusBody(status: Partial<CollectionStatus> & Record<string, unknown> = {}) {
  return { success: true, data: collectionStatus(status) };
}

/**
 * The HTTP 422 validation problem body of section 7, as the simulator answers it: every documented field with its
 * documented value (`type`, `instance`, the item's `message` and `requestId` are not given a value there; these are
 * examples).
 */
export function validationProblem(
  instance = checkPath('not-a-uuid'),
  errors: { message: string; rule: string; field: string }[] = [
    { message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'params.referenceId' },
  ],
) {
  return JSON.parse(simulatorValidationProblem(instance, errors, 'req-01HZX3K9Q7M2V8T4C6B1N5R0PE').body) as Record<string, unknown> & {
    errors: { message: string; rule: string; field: string }[];
  };
}

/** A 202 handler that accepts the posted collection (echoing its referenceId, status pending). */
export function acceptCollection() {
  return http.post(INITIATE_URL, async ({ request }) => {
    const { referenceId } = (await request.json()) as { referenceId: string };
    return HttpResponse.json({ success: true, data: { referenceId, status: 'pending' } }, { status: 202 });
  });
}

type Reply = () => Response | Promise<Response>;

/** Answers successive requests with `replies` in order; the last one repeats. */
export function inOrder(...replies: Reply[]): () => Response | Promise<Response> {
  let index = 0;
  return () => {
    const reply = replies[Math.min(index, replies.length - 1)];
    index++;
    if (!reply) throw new Error('no reply configured');
    return reply();
  };
}

/** A status check answering the given statuses in order (the last repeats). */
export function statusesInOrder(...statusTexts: string[]) {
  return http.get(CHECK_URL, inOrder(...statusTexts.map((statusText) => () => HttpResponse.json(statusBody({ statusText })))));
}

/** A JSON response of any status. */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpResponse.json(body as Parameters<typeof HttpResponse.json>[0], { status, headers });

/** The JSON body of recorded request number `index`; fails the test when there is none. */
export function sentBody(requests: readonly RecordedRequest[], index = 0): Record<string, unknown> {
  const body = requests[index]?.body;
  if (body === null || typeof body !== 'object') throw new Error(`request ${index} has no JSON body`);
  return body as Record<string, unknown>;
}

export { rejectionOf } from './tap.js';

/** The issue paths of a RequestValidationError, sorted. */
export function issuePaths(error: unknown): string[] {
  expect(error).toMatchObject({ name: 'RequestValidationError' });
  return (error as { issues: { path: string }[] }).issues.map((issue) => issue.path).sort();
}

/** Fakes the timers a poll or a retry uses (msw needs none of them), and the monotonic clock with them. */
export function useFakeClock(): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'], now: new Date('2026-11-21T10:00:00.000Z') });
}

/**
 * Fakes only this process's monotonic clock (`performance.now()`, what the SDK's own watch of an open record runs on);
 * timers and `Date` stay real. Move it with {@link watchFor}; `vi.useRealTimers()` restores it.
 */
export function useFakeMonotonicClock(): void {
  vi.useFakeTimers({ toFake: ['performance'] });
}

/** How far {@link useRunningMonotonicClock}'s clock was moved ahead of real time; undefined while it is not in use. */
let runningAheadMs: number | undefined;

/**
 * Fakes this process's monotonic clock as one that runs with real time, and that {@link watchFor} moves on further:
 * for a settlement worker, whose schedule, leases and pauses are read on that clock (a frozen one stops it). Timers and
 * `Date` are real; a clock faked by {@link useFakeMonotonicClock} gives way. Restored when the test ends.
 */
export function useRunningMonotonicClock(): void {
  vi.useRealTimers();
  const real = performance.now.bind(performance);
  runningAheadMs = 0;
  const spy = vi.spyOn(performance, 'now').mockImplementation(() => real() + (runningAheadMs ?? 0));
  onTestFinished(() => {
    spy.mockRestore();
    runningAheadMs = undefined;
  });
}

/** Moves the faked monotonic clock on by `ms`: this process has watched its open records that much longer. */
export function watchFor(ms: number): void {
  if (runningAheadMs === undefined) vi.advanceTimersByTime(ms);
  else runningAheadMs += ms;
}

/** The Collections service's own 404: its error envelope (`success: false`, a string `code`), as the simulator answers it. */
export const serviceNotFound = () => json(404, JSON.parse(collectionsError(404, 'E_NOT_FOUND', 'Collection not found', 'req-404').body));

/** `GET /health` answering 200: the base URL proves it serves the Collections API. */
export const healthy = () => http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' }));

/** Wraps a promise so its outcome can be read synchronously while fake time is advanced. */
export function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown; rejected: boolean } = { settled: false, rejected: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, rejected: true, error }),
  );
  return state;
}

/**
 * Lets the work in flight outside the fake clock run between two steps of it: the event loop's I/O (msw) and Web
 * Crypto's jobs on the thread pool (a key's identity, a fingerprint, a sealed number). Without waiting for the pool,
 * fake time raced ahead of a job on a loaded machine and fired a request's time limit before the job ended.
 */
async function letWorkInFlightRun(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await globalThis.crypto.subtle.digest('SHA-256', new Uint8Array(1));
  await new Promise((resolve) => setImmediate(resolve));
}

/** Advances fake time in `stepMs` steps (letting I/O run between them) until `state` settles or `limitMs` passes. */
export async function advanceUntilSettled(state: { settled: boolean }, stepMs = 50, limitMs = 60_000): Promise<number> {
  let advanced = 0;
  while (!state.settled && advanced < limitMs) {
    await vi.advanceTimersByTimeAsync(stepMs);
    await letWorkInFlightRun();
    advanced += stepMs;
  }
  return advanced;
}

/** Advances fake time by `ms` in `stepMs` steps, letting in-process I/O (msw) run between the steps. */
export async function advanceTime(ms: number, stepMs = 5): Promise<void> {
  for (let advanced = 0; advanced < ms; advanced += stepMs) {
    await vi.advanceTimersByTimeAsync(Math.min(stepMs, ms - advanced));
    await letWorkInFlightRun();
  }
}

/** One scripted answer of {@link scriptedFetch}: a response, a dropped connection, or no answer until aborted. */
export type ScriptedReply = Response | 'drop' | 'hang';

/**
 * A `fetch` test double that needs no timers and no sockets (so `vi.getTimerCount()` sees only the SDK's
 * own timers): answers successive calls with `replies` (the last repeats), records each URL.
 */
export function scriptedFetch(...replies: (() => ScriptedReply)[]) {
  const urls: string[] = [];
  const fetch = (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(input, init);
    urls.push(request.url);
    const signal = init?.signal ?? request.signal;
    const reply = replies[Math.min(urls.length - 1, replies.length - 1)]?.();
    if (reply === undefined) return Promise.reject(new Error('no reply scripted'));
    if (reply === 'drop') return Promise.reject(new TypeError('fetch failed'));
    if (reply === 'hang') {
      return new Promise((_resolve, reject) => {
        signal?.throwIfAborted();
        // Holds the request, as a real fetch does: a Request's signal is linked to its source weakly.
        signal?.addEventListener('abort', () => reject(signal.reason ?? request), { once: true });
      });
    }
    return Promise.resolve(reply);
  };
  return { fetch, urls };
}

/** Lets in-process I/O run (without moving fake time) until `condition` holds; fails after `turns` turns. */
export async function flushUntil(condition: () => boolean, turns = 200): Promise<void> {
  for (let turn = 0; turn < turns && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!condition()) throw new Error('flushUntil: the condition never held');
}

/**
 * A journal holding a record as an earlier process would have left it for `collectionInput()`, written `ageMs`
 * ago by the journal's own clock (the journal stamps its writes; its clock is moved on after the write).
 */
export async function journalWithEarlier(
  state: PaymentRecord['state'],
  ageMs: number,
  fields: Partial<PaymentRecord> = {},
): Promise<{ journal: MemoryJournal; record: PaymentRecord; clock: { offsetMs: number } }> {
  const clock = { offsetMs: -ageMs };
  const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
  const fingerprint = await paymentFingerprint({
    referenceId: REFERENCE_ID,
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260977123456',
  });
  const record = await journal.insert({
    referenceId: REFERENCE_ID,
    state,
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint,
    ...fields,
  });
  clock.offsetMs = 0;
  return { journal, record: record as PaymentRecord, clock };
}
