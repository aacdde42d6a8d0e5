/** The retry policy as pure functions: what is retried, how long to wait, what `Retry-After` means. */
import { describe, expect, it } from 'vitest';
import { apiErrorFor } from '../../src/core/errors.js';
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, backoffDelayMs, decideRetry, isUnknownOutcome, parseRetryAfter } from '../../src/core/retry.js';
import {
  type ApiError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  RateLimitError,
  ResponseValidationError,
  TimeoutError,
} from '../../src/index.js';

const NOW = Date.parse('2026-11-21T10:00:00.000Z');
const MAX_RETRY_AFTER = 60_000;

function httpError(status: number, retryAfterMs?: number): ApiError {
  return apiErrorFor({
    status,
    code: undefined,
    message: `HTTP ${status}`,
    requestId: undefined,
    body: undefined,
    service: 'tap',
    retryAfterMs,
  });
}

const connectionError = (sent: boolean) => new ConnectionError('failed', { cause: new Error('ECONNRESET'), requestMayHaveBeenSent: sent });

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    ['30', 30_000],
    [' 5 ', 5000],
    ['1.5', 1500],
    ['120', 120_000],
  ])('reads delay-seconds %j as %i ms', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), NOW)).toBe(90_000);
  });

  it('reads an HTTP date in the past as 0', () => {
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:59:00 GMT', NOW)).toBe(0);
  });

  it('reads the obsolete HTTP date forms too', () => {
    expect(parseRetryAfter('Saturday, 21-Nov-26 10:00:10 GMT', NOW)).toBe(10_000);
    // asctime carries no zone: it is GMT whatever the machine's time zone.
    expect(parseRetryAfter('Sat Nov 21 10:00:20 2026', NOW)).toBe(20_000);
  });

  it.each([null, undefined])('returns undefined for an absent header (%j)', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it.each(['', '   ', 'soon', 'soon 5', 'later 2026', 'abc', '1e3', '120 seconds', '-1', '-30', '5s', 'NaN', '2026-11-21'])(
    'ignores the unreadable value %j',
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    },
  );

  it('uses the current time by default', () => {
    const parsed = parseRetryAfter(new Date(Date.now() + 10_000).toUTCString());
    expect(parsed).toBeGreaterThan(8000);
    expect(parsed).toBeLessThanOrEqual(10_000);
  });
});

describe('backoffDelayMs', () => {
  it('doubles from 250–500 ms with equal jitter', () => {
    expect(BACKOFF_BASE_MS).toBe(500);
    expect(backoffDelayMs(1, () => 0)).toBe(250);
    expect(backoffDelayMs(1, () => 1)).toBe(500);
    expect(backoffDelayMs(1, () => 0.5)).toBe(375);
    expect(backoffDelayMs(2, () => 0)).toBe(500);
    expect(backoffDelayMs(2, () => 1)).toBe(1000);
    expect(backoffDelayMs(3, () => 0)).toBe(1000);
    expect(backoffDelayMs(3, () => 1)).toBe(2000);
    expect(backoffDelayMs(4, () => 1)).toBe(4000);
  });

  it('caps at 8 s', () => {
    expect(BACKOFF_MAX_MS).toBe(8000);
    expect(backoffDelayMs(5, () => 0)).toBe(4000);
    expect(backoffDelayMs(5, () => 1)).toBe(8000);
    expect(backoffDelayMs(10, () => 0)).toBe(4000);
    expect(backoffDelayMs(10, () => 1)).toBe(8000);
    expect(backoffDelayMs(50, () => 0.999)).toBeLessThanOrEqual(8000);
  });

  it('stays within [ceiling/2, ceiling] for any random value', () => {
    for (let retry = 1; retry <= 10; retry++) {
      const ceiling = Math.min(8000, 500 * 2 ** (retry - 1));
      for (const random of [0, 0.01, 0.25, 0.5, 0.75, 0.99, 1]) {
        const delay = backoffDelayMs(retry, () => random);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it('uses Math.random by default, within bounds', () => {
    for (let i = 0; i < 20; i++) {
      const delay = backoffDelayMs(1);
      expect(delay).toBeGreaterThanOrEqual(250);
      expect(delay).toBeLessThanOrEqual(500);
    }
  });
});

describe('decideRetry', () => {
  it.each([
    ['a connection error', connectionError(true)],
    ['a refused connection', connectionError(false)],
    ['a timeout', new TimeoutError(100)],
    ['408', httpError(408)],
    ['429', httpError(429)],
    ['500', httpError(500)],
    ['502', httpError(502)],
    ['503', httpError(503)],
    ['504', httpError(504)],
  ])('retries %s with a backoff pause', (_label, error) => {
    const decision = decideRetry(error, 1, 2, MAX_RETRY_AFTER);
    expect(decision.retry).toBe(true);
    if (!decision.retry) return;
    expect(decision.delayMs).toBeGreaterThanOrEqual(250);
    expect(decision.delayMs).toBeLessThanOrEqual(500);
  });

  it.each([
    ['400', httpError(400)],
    ['401', httpError(401)],
    ['403', httpError(403)],
    ['404', httpError(404)],
    ['409', httpError(409)],
    ['422', httpError(422)],
    ['501', httpError(501)],
    ['a ResponseValidationError', new ResponseValidationError({ issues: [], body: '', service: 'tap', status: 200, requestId: undefined })],
    ['a plain Error', new Error('boom')],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('never retries %s', (_label, error) => {
    expect(decideRetry(error, 1, 10, MAX_RETRY_AFTER)).toEqual({ retry: false });
  });

  it('maps status to the right class (sanity for the fixtures above)', () => {
    expect(httpError(400)).toBeInstanceOf(BadRequestError);
    expect(httpError(409)).toBeInstanceOf(ConflictError);
    expect(httpError(429)).toBeInstanceOf(RateLimitError);
    expect(httpError(503)).toBeInstanceOf(InternalServerError);
  });

  it('stops once the retries are spent', () => {
    expect(decideRetry(httpError(503), 2, 2, MAX_RETRY_AFTER).retry).toBe(true);
    expect(decideRetry(httpError(503), 3, 2, MAX_RETRY_AFTER)).toEqual({ retry: false });
    expect(decideRetry(httpError(503), 1, 0, MAX_RETRY_AFTER)).toEqual({ retry: false });
  });

  it('grows the pause with the retry number', () => {
    const decision = decideRetry(new TimeoutError(10), 3, 5, MAX_RETRY_AFTER);
    expect(decision.retry && decision.delayMs).toBeGreaterThanOrEqual(1000);
    expect(decision.retry && decision.delayMs).toBeLessThanOrEqual(2000);
  });

  it('honours Retry-After exactly, including 0', () => {
    expect(decideRetry(httpError(429, 1500), 1, 2, MAX_RETRY_AFTER)).toEqual({ retry: true, delayMs: 1500 });
    expect(decideRetry(httpError(503, 0), 1, 2, MAX_RETRY_AFTER)).toEqual({ retry: true, delayMs: 0 });
    expect(decideRetry(httpError(429, MAX_RETRY_AFTER), 1, 2, MAX_RETRY_AFTER)).toEqual({ retry: true, delayMs: MAX_RETRY_AFTER });
  });

  it('gives up at once when Retry-After exceeds maxRetryAfterMs', () => {
    expect(decideRetry(httpError(429, MAX_RETRY_AFTER + 1), 1, 2, MAX_RETRY_AFTER)).toEqual({ retry: false });
    expect(decideRetry(httpError(429, 5000), 1, 2, 0)).toEqual({ retry: false });
  });

  it('does not retry a 409 even with a Retry-After', () => {
    expect(decideRetry(httpError(409, 0), 1, 2, MAX_RETRY_AFTER)).toEqual({ retry: false });
  });
});

describe('isUnknownOutcome', () => {
  it.each([
    [connectionError(true), true],
    [connectionError(false), false],
    [new TimeoutError(10), true],
    [httpError(408), true],
    [httpError(500), true],
    [httpError(503), true],
    [httpError(429), false],
    [httpError(409), false],
    [httpError(400), false],
    [new Error('x'), false],
  ])('%o → %s', (error, expected) => {
    expect(isUnknownOutcome(error)).toBe(expected);
  });
});
