/**
 * The settlement worker's options and their defaults, checked before it starts; the public shapes of the
 * worker and what it needs from its client.
 *
 * @module
 */
import { DEFAULTS as CLIENT_DEFAULTS, isTimerMs } from '../core/config.js';
import { type ConfigurationError, type NotFoundError, RequestValidationError, type ValidationIssue } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { attemptWindowMs } from '../core/retry.js';
import type { PaymentJournal, PaymentRecord } from '../journal/journal.js';
import type { RecordWatch } from '../journal/record-watch.js';
import { POLL_DEFAULTS, type PollSchedule, SLOWEST_CHECK_PAUSE_MS } from './poller.js';
import type { CollectionStatus } from './schemas.js';
import type { StatusWords } from './status-words.js';

/** Options of {@link CollectionsClient.startSettlementWorker}. Every duration is in milliseconds. */
export interface SettlementWorkerOptions {
  /**
   * Status checks per second of the whole worker, all payments together, in any 1 s window. On a client with a
   * shared budget (the client's `requestsPerSecond`), a cap for this worker within it. @defaultValue 10
   */
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
  /**
   * Called when the service answers something that contradicts a payment the journal has closed (it holds a
   * collection recorded `not-sent` or `rejected`, or settled it the other way): the record keeps its state and is
   * marked (`record.contradiction`) and is never given to `onSettled`; a person must look at it. Without it, an
   * `error` line says so.
   * @defaultValue none (an `error` line)
   */
  onContradiction?: ((record: PaymentRecord) => void | Promise<void>) | undefined;
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
   * The grace beyond the attempt window of the payment's last sender (recorded with it: 3 × 30 s + 2 × 8 s with the
   * defaults) during which a 404 still means "not visible yet" for an `initiating` or `unknown` record; after both,
   * the record becomes `not-sent`. Measured twice: by the journal's clock from the record's last write, and by this
   * process's own monotonic clock from when it first saw that version (a worker that starts waits that long once).
   * Only the service's own 404 counts (see `configurationProblem`). `pending` records never become `not-sent`.
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
  /**
   * Set while the worker's last judged 404 was not the Collections service's own answer (no error envelope, or a
   * base URL that has not proved to serve the API: a wrong `baseUrl` or proxy): the `ConfigurationError` naming
   * `baseUrl`. Meanwhile no payment is closed on a 404 (each stays open and is checked on); it was logged at `error`
   * when it began, and the CLI worker's `/healthz` answers 503. Cleared (`undefined`) as soon as a check answers as
   * the service does again (a status, or its own 404).
   *
   * Also set while the worker meets payments whose push went to another deployment (another base URL, or another
   * account's key): the `ConfigurationError` naming both base URLs and both accounts. Such a payment is never asked
   * about; it stays open, set aside for a few minutes at a time (its lease held, so it is not leased again at once),
   * for a worker of its own deployment. Cleared once no such payment has been met for 3 minutes (`MISMATCH_MEMORY_MS`).
   * @defaultValue `undefined`
   */
  readonly configurationProblem: ConfigurationError | undefined;
}

/**
 * How long a payment of another deployment is set aside (its lease held) before the worker looks at it again, and
 * how long after the last such payment the worker's `configurationProblem` stays set.
 */
export const SET_ASIDE_MS = 60_000;
/** See {@link SettlementWorker.configurationProblem}. */
export const MISMATCH_MEMORY_MS = 3 * SET_ASIDE_MS;

/** What a deployment check reads of a record. */
export type DeployedRecord = Pick<PaymentRecord, 'referenceId' | 'state' | 'deployment'>;

/** What the worker needs from its client. */
export interface SettlementWorkerContext {
  readonly journal: PaymentJournal;
  /**
   * One status request, no retries, limited to `timeoutMs`, aborted by `signal`; `beforeSend` is awaited right
   * before the request leaves (after the client's concurrency slot and key function): the worker's budget. On a client
   * with a shared budget it is given `shared`, the shared token's take, which it awaits after its own token.
   */
  readonly check: (
    referenceId: string,
    timeoutMs: number,
    signal: AbortSignal,
    beforeSend?: (shared?: () => Promise<void>) => Promise<void>,
  ) => Promise<CollectionStatus>;
  /** The client's limit on a `Retry-After` (the worker pauses at most this long on a 429). @defaultValue 60000 */
  readonly maxRetryAfterMs?: number | undefined;
  /**
   * True when `check` awaits its `beforeSend` right before the request leaves (the client's does). Otherwise the
   * worker takes the token itself just before calling `check`. @defaultValue false
   */
  readonly tokenAtSend?: boolean | undefined;
  /**
   * The one judgement of a status check's 404 (see `NotFoundEvidence.judge`): resolves when it is the service's own
   * answer; rejects with `WrongBaseUrlError` when not, or with the `/health` check's error when it cannot tell.
   */
  readonly judgeNotFound: (error: NotFoundError) => Promise<void>;
  /** This process's watch of open records (the second measure of their age; see `RecordWatch`). */
  readonly watch: RecordWatch;
  /**
   * Whether the client's answers are evidence about a record (see `JournalBinding.deploymentMismatch`): `undefined`
   * when they are, else the error naming both deployments. @defaultValue every record is this client's
   */
  readonly deploymentMismatch?: ((record: DeployedRecord) => Promise<ConfigurationError | undefined>) | undefined;
  /** The client's per-attempt time limit. */
  readonly timeoutMs: number;
  /** The client's retries after a first attempt (bounds how long an `initiate` can last). */
  readonly maxRetries: number;
  readonly logger: LevelLogger;
  /** The client's status words: what each answered word means. */
  readonly statusWords: StatusWords;
  /**
   * For a service that refuses duplicate references: sends an open record's create again (after its status check
   * answered the service's own 404), writing as `by`, ended by `signal` (the worker's stop), and resolves with the record afterwards and whether this call
   * sent it (`sent`), or `undefined` when it may not be resent (then the 404 is judged as before). @defaultValue none
   */
  readonly resend?:
    | ((record: PaymentRecord, by: string, signal: AbortSignal) => Promise<{ record: PaymentRecord; sent: boolean } | undefined>)
    | undefined;
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
  for (const key of ['onSettled', 'onStale', 'onContradiction'] as const) {
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

export { SLOWEST_CHECK_PAUSE_MS } from './poller.js';

/** The share of a lease period's budget a worker leases for (the rest is slack for late answers and renewals). */
const LEASE_SHARE = 0.5;

/** How many payments a worker leases, and how many tokens a second it keeps for first checks. */
export interface WorkerShares {
  /** Payments leased for re-checks. */
  readonly quota: number;
  /** Payments leased beyond the quota, rotating through new ones; quota and reserve never pass `maxLeasedPayments`. */
  readonly reserve: number;
  /** Tokens a second only first checks may take. */
  readonly firstCheckTokens: number;
}

/**
 * The worker's shares of its plan: payments at the fastest pace need one check per `maxIntervalMs` each, and the
 * budget keeps this many on schedule (leasing more would only make them wait while another worker idles).
 */
export function workerShares({ requestsPerSecond, leaseMs, maxIntervalMs, maxLeasedPayments }: Plan): WorkerShares {
  const perLease = Math.max(1, Math.floor((requestsPerSecond * leaseMs * LEASE_SHARE) / 1_000));
  const share = Math.max(1, Math.min(perLease, Math.ceil((requestsPerSecond * Math.max(maxIntervalMs, 1_000)) / 1_000)));
  // The reserve rotates through new payments; quota and reserve together never pass maxLeasedPayments.
  const reserve = maxLeasedPayments < 2 ? 0 : Math.max(1, Math.min(Math.ceil(share / 4), Math.floor(maxLeasedPayments / 2)));
  return {
    quota: Math.min(share, maxLeasedPayments - reserve),
    reserve,
    firstCheckTokens: requestsPerSecond < 2 ? 0 : Math.max(1, Math.floor(requestsPerSecond / 10)),
  };
}

/** What {@link settlementBoundMs} is computed from: the workers' options, and two facts about the backlog. */
export interface SettlementBoundInputs
  extends Pick<
    SettlementWorkerOptions,
    'notFoundGraceMs' | 'leaseMs' | 'scanIntervalMs' | 'maxIntervalMs' | 'intervalMs' | 'requestsPerSecond'
  > {
  /**
   * The largest attempt window among the open records (`sendWindowOf`); `Infinity` (a record whose window is not
   * known) makes the bound `Infinity`. @defaultValue the default client's: 3 attempts × 30 s + 2 backoffs × 8 s = 106 s
   */
  readonly sendWindowMs?: number | undefined;
  /** How many payments are open when the faults stop. @defaultValue 0 */
  readonly openPayments?: number | undefined;
}

/**
 * The liveness bound, in milliseconds: once faults stop (the service answers as itself, the journal is reachable, no
 * process crashes, no clock steps) and at least one settlement worker runs, every open payment whose outcome the
 * service can state (it holds the collection settled, or holds none) reaches that final state within
 *
 * `leaseMs + scanIntervalMs + openPayments / requestsPerSecond + 2 × (sendWindowMs + notFoundGraceMs) + 2 × max(60 s, maxIntervalMs)`
 *
 * - `leaseMs + scanIntervalMs`: the payments of a worker that died are taken by another;
 * - `openPayments / requestsPerSecond`: a payment's turn in the workers' budget (their `requestsPerSecond` together);
 * - `2 × (sendWindowMs + notFoundGraceMs)`: before `not-sent`, the journal's clock must say the record is that old and
 *   the deciding process must have watched it unchanged that long on its own clock; the bound does not count on the
 *   two waits overlapping (a worker that first reads the record, after a restart or a lease taken over, just as the
 *   journal's clock allows the verdict, waits the whole window again);
 * - `2 × max(60 s, maxIntervalMs)`: the longest pause between two checks of one payment, before the check that
 *   decides and before its recheck.
 *
 * A payment the service keeps `pending`, or whose window is not known (`Infinity`: the bound is `Infinity`), reaches
 * no final state by itself: `onStale` reports it once it has been open `staleAfterMs`, and it is checked at least once
 * a minute meanwhile. With every default and no backlog: 383 000 ms (6 min 23 s).
 */
export function settlementBoundMs(inputs: SettlementBoundInputs = {}): number {
  const { sendWindowMs, openPayments = 0, ...options } = inputs;
  const worker = plan(options);
  const window = sendWindowMs ?? attemptWindowMs(CLIENT_DEFAULTS.maxRetries, CLIENT_DEFAULTS.timeoutMs);
  if (!(window >= 0 && window < Number.POSITIVE_INFINITY)) return Number.POSITIVE_INFINITY;
  const pause = Math.max(SLOWEST_CHECK_PAUSE_MS, worker.maxIntervalMs);
  const backlogMs = Math.ceil((openPayments / worker.requestsPerSecond) * 1000);
  return worker.leaseMs + worker.scanIntervalMs + backlogMs + 2 * (window + worker.notFoundGraceMs) + 2 * pause;
}
