/**
 * Waiting for a collection to settle: the schedule of status checks, and the waiter that rides out
 * transient failures until a deadline that nothing (not even a request in flight) can overrun.
 *
 * @module
 */
import { isTimerMs, MAX_TIMER_MS, type RequestOptions } from '../core/config.js';
import {
  ApiError,
  NotFoundError,
  PollTimeoutError,
  RequestValidationError,
  TimeoutError,
  UnknownOutcomeError,
  type ValidationIssue,
} from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { monotonicNow } from '../core/monotonic.js';
import { isRetryable } from '../core/retry.js';
import { sleep } from '../core/sleep.js';
import { isNotSentVerdict } from './not-found-evidence.js';
import type { CollectionStatus } from './schemas.js';
import { normalizeStatusWord, type StatusWords } from './status-words.js';

/** Options of {@link CollectionsClient.pollUntilSettled}. Every duration is in milliseconds. @group Polling */
export interface PollOptions extends RequestOptions {
  /** The whole wait; past it the call rejects with {@link PollTimeoutError}. @defaultValue 120000 */
  maxWaitMs?: number | undefined;
  /**
   * The pause after the first check, made at once: a customer needs some seconds to see the prompt and
   * enter their PIN, so checking sooner only costs requests.
   * @defaultValue `intervalMs` when you set it (it is then the first pause), else 5000
   */
  initialDelayMs?: number | undefined;
  /** The growing pauses start here; each is 1.5× the one before. @defaultValue 1500 */
  intervalMs?: number | undefined;
  /** The largest pause. @defaultValue 2000 */
  maxIntervalMs?: number | undefined;
  /**
   * How long after the poll starts a 404 is read as "not visible yet" (a collection accepted a moment
   * ago) rather than "no such collection", for a payment no journal holds open. A payment the journal holds
   * `initiating` or `unknown` waits for the journal's verdict instead (see `pollUntilSettled`). @defaultValue 10000
   */
  notFoundGraceMs?: number | undefined;
  /**
   * Called with the first status seen and again whenever `statusText` changes: show "waiting for the
   * customer…" at the till. An exception it throws is logged, never allowed to end the wait.
   * @defaultValue none
   */
  onUpdate?: ((status: CollectionStatus) => void) | undefined;
  /**
   * More words that end this wait, added to the client's `statusWords` successful and failed words (compared
   * without regard to case or surrounding blanks). With a journal, every word here must be one the client's
   * `statusWords` files as successful or failed (else {@link RequestValidationError}): the journal records what a
   * settled word means, and it could not know. A word in none of the lists keeps the wait going and is logged at
   * `warn` once per payment and word; {@link PollTimeoutError} names it.
   * @defaultValue none (the client's `statusWords` successful and failed words)
   */
  settledStatuses?: readonly string[] | undefined;
}

/** The default schedule, chosen from the polling benchmark (`npm run bench`; see docs/guide/polling.md). @group Polling */
export const POLL_DEFAULTS = {
  /** The whole wait: 2 minutes. */
  maxWaitMs: 120_000,
  /** The pause after the first check: 5 s. */
  initialDelayMs: 5_000,
  /** The first of the growing pauses: 1.5 s. */
  intervalMs: 1_500,
  /** The largest pause: 2 s. */
  maxIntervalMs: 2_000,
  /** How long a 404 is waited out: 10 s. */
  notFoundGraceMs: 10_000,
} as const;

/** How much each pause grows over the one before. @group Polling */
export const POLL_GROWTH = 1.5;
/** Each pause is scaled by a random factor in `[1 - POLL_JITTER, 1 + POLL_JITTER]`, so a fleet started together spreads out. @group Polling */
export const POLL_JITTER = 0.1;

/** No extra settled words, shared by every poll that does not pass `settledStatuses` (no Set per poll). */
const NO_EXTRA_SETTLED: ReadonlySet<string> = new Set();

/** The timings of a poll schedule. */
export type PollSchedule = Pick<Required<PollOptions>, 'initialDelayMs' | 'intervalMs' | 'maxIntervalMs'>;

/**
 * The pause before status check number `pauseNumber + 1` (0 is the pause after the first check):
 * `initialDelayMs`, then `intervalMs` growing by {@link POLL_GROWTH} up to `maxIntervalMs`, each jittered.
 *
 * @group Polling
 */
export function pollPauseMs(pauseNumber: number, schedule: PollSchedule, random: () => number = Math.random): number {
  const base =
    pauseNumber === 0 ? schedule.initialDelayMs : Math.min(schedule.maxIntervalMs, schedule.intervalMs * POLL_GROWTH ** (pauseNumber - 1));
  return Math.round(base * (1 - POLL_JITTER + 2 * POLL_JITTER * random()));
}

/** The settings of one poll, after its options were checked. */
interface PollPlan extends PollSchedule {
  readonly maxWaitMs: number;
  readonly notFoundGraceMs: number;
  readonly onUpdate: ((status: CollectionStatus) => void) | undefined;
  /** `settledStatuses`, normalized: words that end this poll besides the client's successful and failed words. */
  readonly alsoSettled: ReadonlySet<string>;
}

function planPoll(options: PollOptions, words: StatusWords, journaled: boolean): PollPlan {
  // The options as given are checked first, so an issue names what the caller wrote, not a derived value.
  const issues: ValidationIssue[] = [];
  const range = `must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`;
  if (options.maxWaitMs !== undefined && !isTimerMs(options.maxWaitMs)) {
    issues.push({ path: 'options.maxWaitMs', message: `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}` });
  }
  for (const key of ['initialDelayMs', 'intervalMs', 'maxIntervalMs', 'notFoundGraceMs'] as const) {
    if (options[key] !== undefined && !isTimerMs(options[key], 0)) issues.push({ path: `options.${key}`, message: range });
  }
  if (options.onUpdate !== undefined && typeof options.onUpdate !== 'function') {
    issues.push({ path: 'options.onUpdate', message: 'must be a function' });
  }
  const settled = options.settledStatuses;
  if (
    settled !== undefined &&
    !(Array.isArray(settled) && settled.length > 0 && settled.every((word) => typeof word === 'string' && word !== ''))
  ) {
    issues.push({ path: 'options.settledStatuses', message: 'must be a non-empty array of non-empty strings' });
  } else if (settled !== undefined && journaled) {
    const unmapped = settled.filter((word) => {
      const meaning = words.meaningOf(word);
      return meaning !== 'successful' && meaning !== 'failed';
    });
    if (unmapped.length > 0) {
      issues.push({
        path: 'options.settledStatuses',
        message: `${unmapped.map((word) => JSON.stringify(word)).join(', ')} must be a successful or failed word of the client option statusWords: the journal records what a settled word means`,
      });
    }
  }
  // Only checked values reach arithmetic: a BigInt or a Symbol would make Math.max throw a TypeError.
  const intervalMs = isTimerMs(options.intervalMs, 0) ? options.intervalMs : POLL_DEFAULTS.intervalMs;
  const maxIntervalMs = isTimerMs(options.maxIntervalMs, 0) ? options.maxIntervalMs : Math.max(POLL_DEFAULTS.maxIntervalMs, intervalMs);
  const intervalsValid = !issues.some((issue) => issue.path === 'options.intervalMs' || issue.path === 'options.maxIntervalMs');
  if (intervalsValid && maxIntervalMs < intervalMs) {
    issues.push({ path: 'options.maxIntervalMs', message: 'must not be less than intervalMs' });
  }
  if (issues.length > 0) throw new RequestValidationError(issues, 'options');
  return {
    maxWaitMs: options.maxWaitMs ?? POLL_DEFAULTS.maxWaitMs,
    // A caller who sets intervalMs means it as the first pause; the quiet start belongs to the default schedule.
    initialDelayMs: options.initialDelayMs ?? options.intervalMs ?? POLL_DEFAULTS.initialDelayMs,
    intervalMs,
    maxIntervalMs,
    notFoundGraceMs: options.notFoundGraceMs ?? POLL_DEFAULTS.notFoundGraceMs,
    onUpdate: options.onUpdate,
    alsoSettled: settled === undefined ? NO_EXTRA_SETTLED : new Set(settled.map(normalizeStatusWord)),
  };
}

/** A payment open an hour is checked at most once a minute (`maxIntervalMs` aside): the slowest pace of checks. */
export const SLOWEST_CHECK_PAUSE_MS = 60_000;
/** A payment open this long is checked at most once a minute (the pause grows with age until then). */
const SLOW_AFTER_MS = 60 * 60_000;

/**
 * A settlement worker's pause before a payment's next check: the `scheduled` pause, slowed with the payment's age
 * (`ageMs`): a minute's pause after an hour, 30 s after half an hour, the schedule's for young payments.
 */
export function agedPauseMs(scheduled: number, ageMs: number, maxIntervalMs: number): number {
  const slowest = Math.max(SLOWEST_CHECK_PAUSE_MS, maxIntervalMs);
  return Math.max(scheduled, Math.min(slowest, Math.round((ageMs * SLOWEST_CHECK_PAUSE_MS) / SLOW_AFTER_MS)));
}

/**
 * One status check: a single attempt limited to `timeoutMs`, whose waits before sending (the key function,
 * the concurrency queue) end at `deadline` (`monotonicNow()` ms) with a `TimeoutError`. The poll itself rides failures out.
 * A 404 comes back judged by the one 404 rule: `UnknownOutcomeError` (a verdict not yet provable: keep waiting),
 * a `NotFoundError` carrying a recorded `not-sent` verdict (end now), or a plain `NotFoundError` (the grace applies).
 */
export type StatusCheck = (timeoutMs: number, deadline: number) => Promise<CollectionStatus>;

/**
 * Checks at once, then by the schedule, until `statusText` is a successful or failed word of the client's
 * status words (or one of `settledStatuses`). Transient
 * failures (network, timeouts, 408, 429, 5xx, and 404 during the grace period) keep it waiting; a
 * `Retry-After` stretches the next pause.
 *
 * The deadline needs no timer of its own: a pause is cut to the time left, and a status request's time
 * limit never runs past it, so a request in flight is cut at the deadline too. A waiting poll holds one
 * timer, and none is left when it ends, however it ends.
 *
 * @param requestTimeoutMs - The time limit of one status request (the call's or the client's `timeoutMs`).
 */
export async function pollUntilSettled(
  referenceId: string,
  check: StatusCheck,
  options: PollOptions,
  requestTimeoutMs: number,
  logger: LevelLogger,
  words: StatusWords,
  journaled: boolean,
): Promise<CollectionStatus> {
  const plan = planPoll(options, words, journaled);
  const { signal } = options;
  signal?.throwIfAborted();
  const started = monotonicNow();
  const deadline = started + plan.maxWaitMs;
  let lastStatus: CollectionStatus | undefined;
  // A 404 seen, and no status ever: nothing with this reference was seen (the timeout says so).
  let sawNotFound = false;
  // The journal's "not provable yet" for the 404s since the last status: what the poll ends with at its deadline.
  let undecided: UnknownOutcomeError | undefined;
  // Words the status words do not name, by normalized word (made on the first one only: most polls never see one).
  let unrecognized: Map<string, string> | undefined;
  const timedOut = () =>
    undecided ??
    new PollTimeoutError(referenceId, lastStatus, plan.maxWaitMs, sawNotFound && lastStatus === undefined, [
      ...(unrecognized?.values() ?? []),
    ]);
  for (let pauseNumber = 0; ; pauseNumber++) {
    let pauseMs = pollPauseMs(pauseNumber, plan);
    const remainingMs = deadline - monotonicNow();
    if (remainingMs < 1) throw timedOut();
    const cutByDeadline = remainingMs < requestTimeoutMs;
    try {
      const status = await check(Math.min(requestTimeoutMs, remainingMs), deadline);
      undecided = undefined;
      if (lastStatus?.statusText !== status.statusText) notify(plan.onUpdate, status, logger);
      lastStatus = status;
      const meaning = words.meaningOf(status.statusText);
      if (meaning === 'successful' || meaning === 'failed' || plan.alsoSettled.has(normalizeStatusWord(status.statusText))) return status;
      if (words.warnIfUnknown(referenceId, status.statusText, logger)) {
        unrecognized ??= new Map();
        const normalized = normalizeStatusWord(status.statusText);
        if (!unrecognized.has(normalized)) unrecognized.set(normalized, logger.redact(status.statusText));
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof NotFoundError || error instanceof UnknownOutcomeError) sawNotFound = true;
      if (isNotSentVerdict(error)) throw error;
      if (error instanceof UnknownOutcomeError) undecided = error;
      if (cutByDeadline && error instanceof TimeoutError) throw timedOut();
      const waitingFor404 =
        error instanceof UnknownOutcomeError || (error instanceof NotFoundError && monotonicNow() - started < plan.notFoundGraceMs);
      if (!waitingFor404 && !isRetryable(error)) throw error;
      if (error instanceof ApiError && error.retryAfterMs !== undefined) pauseMs = Math.max(pauseMs, error.retryAfterMs);
      logger.debug(`status check of ${referenceId} failed; still waiting`, { reason: (error as Error).message });
    }
    const leftMs = deadline - monotonicNow();
    if (pauseMs >= leftMs) {
      await sleep(Math.max(0, leftMs), signal);
      throw timedOut();
    }
    await sleep(pauseMs, signal);
  }
}

function notify(onUpdate: PollPlan['onUpdate'], status: CollectionStatus, logger: LevelLogger): void {
  try {
    onUpdate?.(status);
  } catch (error) {
    // The payment goes on whatever the display does; ending the wait here would lose its outcome.
    logger.error('onUpdate threw; still waiting', { reason: error instanceof Error ? error.message : String(error) });
  }
}
