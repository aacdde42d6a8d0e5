/**
 * The settlement worker's options and their defaults, checked before it starts; the public shapes of the
 * worker and what it needs from its client.
 *
 * @module
 */
import { isTimerMs } from '../core/config.js';
import { RequestValidationError, type ValidationIssue } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import type { PaymentJournal, PaymentRecord } from '../journal/journal.js';
import { POLL_DEFAULTS, type PollSchedule } from './poller.js';
import type { CollectionStatus } from './schemas.js';
import type { StatusWords } from './status-words.js';

/** Options of {@link CollectionsClient.startSettlementWorker}. Every duration is in milliseconds. */
export interface SettlementWorkerOptions {
  /** Status checks per second of the whole worker, all payments together, in any 1 s window. @defaultValue 10 */
  requestsPerSecond?: number | undefined;
  /** Status checks (and `onSettled` calls) in progress at once. @defaultValue 16 */
  maxConcurrentChecks?: number | undefined;
  /**
   * Called once for each payment this worker brings to a final state (`successful`, `failed`, or
   * `not-sent`), with the record as the journal will store it. A settled status is delivered before the
   * journal records it (its `updatedAt` is then the worker's clock at delivery; the journal stamps its own):
   * if it throws (or its promise rejects) the payment stays open and is delivered again later; if the
   * process dies in between, another worker delivers it again: make it idempotent by `referenceId`.
   * `not-sent` is delivered after it is recorded, so it is never announced unless it holds.
   */
  onSettled?: ((record: PaymentRecord) => void | Promise<void>) | undefined;
  /**
   * Called once (per worker) for a payment still open `staleAfterMs` after it was created; it keeps being
   * checked, once a minute, until it settles. Without it, a `warn` line says so.
   */
  onStale?: ((record: PaymentRecord) => void | Promise<void>) | undefined;
  /** How long a payment may stay open before it is reported (see `onStale`). @defaultValue 86400000 (24 h) */
  staleAfterMs?: number | undefined;
  /** Stops the worker when aborted (as {@link SettlementWorker.stop}). */
  signal?: AbortSignal | undefined;
  /** The first check of a payment is due this long after its record was created. @defaultValue 5000 */
  initialDelayMs?: number | undefined;
  /** The pause after the first check; each next one is 1.5× longer. @defaultValue 1500 */
  intervalMs?: number | undefined;
  /** The largest pause between two checks of one payment. @defaultValue 2000 */
  maxIntervalMs?: number | undefined;
  /**
   * How long after its record was last written a 404 still means "not visible yet" for an `unknown`
   * record; after it, the record becomes `not-sent`. An `initiating` record waits at least as long as an
   * `initiate` call of this client can last (its attempts, timeouts and backoff), so a request still in
   * flight elsewhere is never declared not sent. `pending` records never become `not-sent`.
   * @defaultValue 10000
   */
  notFoundGraceMs?: number | undefined;
  /**
   * How long a lease lasts unless renewed; renewed every third of it. It also sizes what the worker takes: about
   * what its budget checks in half a lease period, at most `requestsPerSecond × maxIntervalMs / 1000` payments at
   * the fastest pace, so several workers share a backlog. Keep it above twice the client's `timeoutMs` (a
   * `warn` at start says when it is not longer than `timeoutMs`). @defaultValue 30000
   */
  leaseMs?: number | undefined;
  /** The most open payments this worker leases at once (the rest are left to other workers). @defaultValue 1000 */
  maxLeasedPayments?: number | undefined;
  /** How often the worker looks for open payments nobody holds. @defaultValue 1000 */
  scanIntervalMs?: number | undefined;
  /** The journal to settle. @defaultValue the client's `journal` */
  journal?: PaymentJournal | undefined;
}

/** A running settlement worker. */
export interface SettlementWorker {
  /** This worker's lease owner id (unique per worker). */
  readonly workerId: string;
  /**
   * Stops taking work, aborts the checks in flight, lets `onSettled` calls and journal writes in progress
   * finish, releases every lease, and resolves when no request is in flight and no timer is left.
   */
  stop(): Promise<void>;
  /** Resolves once the worker has stopped (by {@link SettlementWorker.stop} or its `signal`). */
  readonly done: Promise<void>;
}

/** What the worker needs from its client. */
export interface SettlementWorkerContext {
  readonly journal: PaymentJournal;
  /**
   * One status request, no retries, limited to `timeoutMs`, aborted by `signal`; `beforeSend` is awaited right
   * before the request leaves (after the client's concurrency slot and key function): the worker's budget.
   */
  readonly check: (
    referenceId: string,
    timeoutMs: number,
    signal: AbortSignal,
    beforeSend?: () => Promise<void>,
  ) => Promise<CollectionStatus>;
  /** The client's limit on a `Retry-After` (the worker pauses at most this long on a 429). @defaultValue 60000 */
  readonly maxRetryAfterMs?: number;
  /**
   * True when `check` awaits its `beforeSend` right before the request leaves (the client's does). Otherwise the
   * worker takes the token itself just before calling `check`. @defaultValue false
   */
  readonly tokenAtSend?: boolean;
  /** The client's per-attempt time limit. */
  readonly timeoutMs: number;
  /** The client's retries after a first attempt (bounds how long an `initiate` can last). */
  readonly maxRetries: number;
  readonly logger: LevelLogger;
  /** The client's status words: what each answered word means. */
  readonly statusWords: StatusWords;
}

/** The options after checking, every default applied. */
export interface Plan extends PollSchedule {
  requestsPerSecond: number;
  maxConcurrentChecks: number;
  notFoundGraceMs: number;
  leaseMs: number;
  maxLeasedPayments: number;
  scanIntervalMs: number;
  staleAfterMs: number;
}

/**
 * Checks the options as given (each issue names the option) and applies the defaults.
 * @throws {@link RequestValidationError} naming each bad option.
 */
export function plan(options: SettlementWorkerOptions): Plan {
  const issues: ValidationIssue[] = [];
  const whole = (key: 'requestsPerSecond' | 'maxConcurrentChecks' | 'maxLeasedPayments', fallback: number) => {
    const value = options[key] ?? fallback;
    if (!Number.isSafeInteger(value) || value < 1) issues.push({ path: `options.${key}`, message: 'must be a whole number ≥ 1' });
    return value;
  };
  const ms = (key: keyof PollSchedule | 'notFoundGraceMs' | 'leaseMs' | 'scanIntervalMs' | 'staleAfterMs', fallback: number, min = 0) => {
    const value = options[key] ?? fallback;
    if (!isTimerMs(value, min)) issues.push({ path: `options.${key}`, message: `must be a whole number of milliseconds ≥ ${min}` });
    return value;
  };
  for (const key of ['onSettled', 'onStale'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function')
      issues.push({ path: `options.${key}`, message: 'must be a function' });
  }
  const result: Plan = {
    requestsPerSecond: whole('requestsPerSecond', 10),
    maxConcurrentChecks: whole('maxConcurrentChecks', 16),
    maxLeasedPayments: whole('maxLeasedPayments', 1_000),
    initialDelayMs: ms('initialDelayMs', POLL_DEFAULTS.initialDelayMs),
    intervalMs: ms('intervalMs', POLL_DEFAULTS.intervalMs),
    maxIntervalMs: ms('maxIntervalMs', Math.max(POLL_DEFAULTS.maxIntervalMs, options.intervalMs ?? 0)),
    notFoundGraceMs: ms('notFoundGraceMs', POLL_DEFAULTS.notFoundGraceMs),
    leaseMs: ms('leaseMs', 30_000, 100),
    scanIntervalMs: ms('scanIntervalMs', 1_000, 1),
    staleAfterMs: ms('staleAfterMs', 86_400_000, 1),
  };
  if (result.maxIntervalMs < result.intervalMs) issues.push({ path: 'options.maxIntervalMs', message: 'must not be less than intervalMs' });
  if (issues.length > 0) throw new RequestValidationError(issues, 'options');
  return result;
}
