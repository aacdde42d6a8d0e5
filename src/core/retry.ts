/**
 * The one retry policy of both clients: what is retried, how long to wait, and which failures leave a
 * create's outcome unknown.
 *
 * @module
 */
import { ApiError, ConnectionError, TimeoutError } from './errors.js';
import type { LevelLogger } from './logger.js';
import { sleep } from './sleep.js';

/** Statuses retried with backoff: the request was not processed, or the service asked us to come back. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/** The first backoff pause, in milliseconds; it doubles per retry. */
export const BACKOFF_BASE_MS = 500;
/** The largest backoff pause, in milliseconds. */
export const BACKOFF_MAX_MS = 8_000;

/**
 * How long after an `initiate` writes its record its push can still reach the service: every attempt's time limit
 * and the longest backoff between them (3 × 30 s + 2 × 8 s = 106 s with the defaults).
 */
export function attemptWindowMs(maxRetries: number, timeoutMs: number): number {
  return (maxRetries + 1) * timeoutMs + maxRetries * BACKOFF_MAX_MS;
}

/** True for a failure worth another attempt: no response, a timeout, or a retryable status. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && RETRYABLE_STATUSES.has(error.status);
}

/**
 * True when a failed attempt may still have taken effect on the server: no response came (a dropped
 * connection after sending, a timeout) or the answer was 408 or 5xx. A refused connection sent nothing.
 */
export function isUnknownOutcome(error: unknown): boolean {
  if (error instanceof ConnectionError) return error.requestMayHaveBeenSent;
  if (error instanceof TimeoutError) return true;
  return error instanceof ApiError && (error.status === 408 || error.status >= 500);
}

/** Exponential backoff with "equal jitter": half the pause fixed, half random, so a fleet spreads out. */
export function backoffDelayMs(retryNumber: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (retryNumber - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** The three HTTP-date forms (RFC 9110 §5.6.7): IMF-fixdate, RFC 850 and asctime. */
const HTTP_DATE = /^[a-z]{3,9},? (\d{1,2}[ -][a-z]{3}[ -]\d{2,4}|[a-z]{3} {1,2}\d{1,2}) \d{2}:\d{2}:\d{2}( GMT| \d{4})$/i;

/**
 * Parses `Retry-After`: delay-seconds or an HTTP date. Returns milliseconds (≥ 0), or `undefined` when
 * absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // Date.parse alone accepts almost anything ('-1', 'soon 5' are dates in 2001): only HTTP-date shapes count.
  if (!HTTP_DATE.test(trimmed)) return undefined;
  // asctime carries no zone and HTTP dates are GMT; Date.parse would read it as local time.
  const date = Date.parse(/GMT$/i.test(trimmed) ? trimmed : `${trimmed} GMT`);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * What the next attempt after `error` will do, as a log line says it (`'retrying'` when `undefined`: the request is
 * sent again).
 */
export type NextStep = (error: unknown) => string | undefined;

/** What to do after a failed attempt. */
export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

/**
 * Decides whether to retry after `error`, the failure of retry number `retryNumber - 1` (1 for the
 * first retry). A `Retry-After` is honoured exactly; past `maxRetryAfterMs` the error is final, so a
 * caller is never parked for minutes without knowing.
 */
export function decideRetry(error: unknown, retryNumber: number, maxRetries: number, maxRetryAfterMs: number): RetryDecision {
  if (retryNumber > maxRetries || !isRetryable(error)) return { retry: false };
  const retryAfterMs = error instanceof ApiError ? error.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) {
    return retryAfterMs > maxRetryAfterMs ? { retry: false } : { retry: true, delayMs: retryAfterMs };
  }
  return { retry: true, delayMs: backoffDelayMs(retryNumber) };
}

/**
 * The retry loop from a first attempt's failure on: pauses by {@link decideRetry} (logged at `warn`), then runs
 * `attempt` again, until it succeeds, fails for good, `mayRetry` refuses, or `settings.maxRetries` retries are spent.
 * Aborts promptly with the signal's reason. `nextStep` says what the next attempt will do when that is not a resend
 * (a create whose outcome is unknown checks by reference instead), so the log never says "retrying" for a request
 * that is not sent again.
 */
export async function retryAfterFirst<T>(
  settings: { readonly signal: AbortSignal | undefined; readonly maxRetries: number },
  firstError: unknown,
  attempt: (attemptNumber: number) => Promise<T>,
  mayRetry: (error: unknown) => boolean,
  maxRetryAfterMs: number,
  logger: Pick<LevelLogger, 'warn'>,
  nextStep?: NextStep,
): Promise<T> {
  let error = firstError;
  for (let attemptNumber = 1; ; attemptNumber++) {
    if (settings.signal?.aborted) throw settings.signal.reason;
    if (!mayRetry(error)) throw error;
    const decision = decideRetry(error, attemptNumber, settings.maxRetries, maxRetryAfterMs);
    if (!decision.retry) throw error;
    const step = nextStep?.(error);
    const line =
      step === undefined
        ? `retrying in ${decision.delayMs} ms (retry ${attemptNumber} of ${settings.maxRetries})`
        : `${step} in ${decision.delayMs} ms`;
    logger.warn(line, {
      reason: error instanceof Error ? error.message : String(error),
    });
    await sleep(decision.delayMs, settings.signal);
    settings.signal?.throwIfAborted();
    try {
      return await attempt(attemptNumber + 1);
    } catch (next) {
      error = next;
    }
  }
}
