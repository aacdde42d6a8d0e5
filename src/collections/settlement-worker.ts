/**
 * The settlement worker: settles every open payment of a journal with one scheduler (a due-time queue and
 * one timer), one request budget for the whole worker, and leases so that workers in several processes or
 * machines share the open payments without two of them checking one payment at once. Its options are in
 * `settlement-worker-options.ts`.
 *
 * The scheduler (pump, timer, tokens) and the checks are here; what a check's answer does to the payment is in
 * `worker-settling.ts`, and which payments the worker holds in `worker-leases.ts` (scan, adopt, renew, park, set
 * aside, release on stop). Both call back through narrow hooks: the leases hand each payment they adopt to the
 * scheduler and ask it to look again after each lease step; the settling steps say at the moment they decide whether
 * a payment is done, checked again on its schedule, or retried. What stands alone is elsewhere too: the shares of a
 * plan (`settlement-worker-options.ts`), the pause by age (`poller.ts`), the record `onSettled` is given and the
 * pause after a 429 (`worker-outcome.ts`).
 *
 * @module
 */
import { DueQueue } from '../core/due-queue.js';
import { ApiError, type ConfigurationError, NotFoundError } from '../core/errors.js';
import { monotonicNow } from '../core/monotonic.js';
import { isRetryable } from '../core/retry.js';
import { sleep } from '../core/sleep.js';
import { BUDGET_WINDOW_MS, TokenBucket } from '../core/token-bucket.js';
import { newReferenceId } from '../core/uuid.js';
import { isOpenPaymentState } from '../journal/journal.js';
import { DeploymentMismatchError } from './deployment.js';
import { scrubObservation } from './journal-binding.js';
import { JournalOutage } from './journal-outage.js';
import { WrongBaseUrlError } from './not-found-evidence.js';
import { agedPauseMs, pollPauseMs } from './poller.js';
import type { CollectionStatus } from './schemas.js';
import {
  MISMATCH_MEMORY_MS,
  type Plan,
  plan,
  type SettlementWorker,
  type SettlementWorkerContext,
  type SettlementWorkerOptions,
  workerShares,
} from './settlement-worker-options.js';
import { type Held, WorkerLeases } from './worker-leases.js';
import { rateLimitPauseMs, reasonOf } from './worker-outcome.js';
import { WorkerSettling } from './worker-settling.js';

export type { SettlementWorker, SettlementWorkerContext, SettlementWorkerOptions } from './settlement-worker-options.js';

/**
 * A spent token stays spent a little longer than the 1 s window: it is taken right before the request leaves
 * (the transport's `beforeSend`), but ky's steps still lie between, and under load (2 000 checks a second) a 50 ms
 * guard let 2 016 through in one window. The cost is 20 % of the peak rate.
 */
const BUDGET_GUARD_MS = 250;

/** Starts a worker; see {@link CollectionsClient.startSettlementWorker}. */
export function startSettlementWorker(context: SettlementWorkerContext, options: SettlementWorkerOptions = {}): SettlementWorker {
  return new Worker(context, options);
}

class Worker implements SettlementWorker {
  readonly workerId: string = newReferenceId();
  readonly done: Promise<void>;
  readonly #context: SettlementWorkerContext;
  readonly #plan: Plan;
  readonly #signal: AbortSignal | undefined;
  readonly #queue = new DueQueue<Held>();
  /** First checks of new payments: served before every re-check, so old payments never starve a new one. */
  readonly #fresh = new DueQueue<Held>();
  /** Payments already reported as stale. */
  readonly #reported = new Set<string>();
  readonly #onStale: SettlementWorkerOptions['onStale'];
  /** Checks waiting for a token at the wire. */
  #waitingForToken = 0;
  /** Checks started that have not taken their token yet (in the client's queue, or its key function). */
  #starting = 0;
  /** Tokens of each window only first checks of new payments may take (none with a budget of 1). */
  readonly #firstCheckTokens: number;
  readonly #leases: WorkerLeases;
  /** Payments with a check of this worker in flight: a lease lost and taken again must not start a second one. */
  readonly #checking = new Set<string>();
  readonly #bucket: TokenBucket;
  readonly #abort = new AbortController();
  readonly #tasks = new Set<Promise<void>>();
  /** A lease must have this much left beyond a check's time limit when the check starts. */
  readonly #leaseMarginMs: number;
  readonly #settling: WorkerSettling;
  #resolveDone!: () => void;
  #stopped: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #inFlight = 0;
  #pausedUntil = 0;
  #rateLimited = 0;
  #configurationProblem: ConfigurationError | undefined;
  /** The last payment of another deployment met, and when (`monotonicNow()`): reported until it is long past. */
  #otherDeployment: { error: DeploymentMismatchError; at: number } | undefined;
  /** The deployments (base URL and account) of payments set aside so far: each said once at `error`. */
  readonly #saidDeployments = new Set<string>();
  /** Says once when the journal stops answering and once when it is back; the failures between are not logged again. */
  readonly #outage: JournalOutage;

  constructor(context: SettlementWorkerContext, options: SettlementWorkerOptions) {
    this.#plan = plan(options);
    options.signal?.throwIfAborted();
    this.#outage = new JournalOutage(context.logger);
    this.#context = { ...context, journal: this.#outage.watch(context.journal) };
    this.#onStale = options.onStale;
    const { leaseMs } = this.#plan;
    const shares = workerShares(this.#plan);
    this.#firstCheckTokens = shares.firstCheckTokens;
    if (leaseMs < context.timeoutMs) {
      context.logger.warn(
        `settlement worker: leaseMs (${leaseMs} ms) is shorter than a check's time limit (timeoutMs ${context.timeoutMs} ms): checks are cut short to fit the lease and may never finish; make leaseMs at least twice timeoutMs`,
      );
    }
    this.#signal = options.signal;
    this.#bucket = new TokenBucket(this.#plan.requestsPerSecond, BUDGET_WINDOW_MS + BUDGET_GUARD_MS);
    this.#leaseMarginMs = Math.min(1_000, Math.ceil(this.#plan.leaseMs / 10));
    this.#settling = new WorkerSettling(this.#context, this.#plan, `worker:${this.workerId}`, options, this.#abort.signal, {
      forget: (entry) => this.#leases.forget(entry),
      later: (entry) => this.#later(entry),
      retry: (entry) => this.#schedule(entry, this.#plan.maxIntervalMs),
      checkAgain: async (referenceId) => {
        // A verdict's second check is a status check like any other: it waits out the worker's 429 pause too.
        while (monotonicNow() < this.#pausedUntil) await sleep(this.#pausedUntil - monotonicNow(), this.#abort.signal);
        return this.#send(referenceId, this.#context.timeoutMs, this.#takeToken);
      },
      stopped: () => this.#stopped !== undefined,
    });
    this.#leases = new WorkerLeases(this.workerId, this.#context, this.#plan, shares, this.#outage, {
      adopted: (entry, pauseMs) => this.#adopted(entry, pauseMs),
      changed: () => this.#pump(),
      track: (task) => this.#track(task),
    });
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    // Not `once`: a signal aborts once, and stop() removes the listener first thing, also when it is called directly.
    this.#signal?.addEventListener('abort', this.#onAbort);
    this.#pump();
  }

  readonly #onAbort = () => {
    void this.stop();
  };

  get configurationProblem(): ConfigurationError | undefined {
    if (this.#configurationProblem !== undefined) return this.#configurationProblem;
    const other = this.#otherDeployment;
    return other !== undefined && monotonicNow() - other.at < MISMATCH_MEMORY_MS ? other.error : undefined;
  }

  /**
   * A payment pushed to another deployment: never asked about here. Said at `error` once per deployment (naming both
   * base URLs and accounts), reported as unhealthy, and set aside: its lease held for a while, then left to lapse, so
   * it is neither checked nor leased again in a loop, and a worker of its own deployment can take it.
   */
  #otherDeploymentMet(entry: Held, error: DeploymentMismatchError): void {
    const seen = `${error.recorded.baseUrl} ${error.recorded.account}`;
    if (!this.#saidDeployments.has(seen) || this.configurationProblem === undefined) {
      this.#saidDeployments.add(seen);
      this.#context.logger.error(
        `settlement worker: payments pushed to ${error.recorded.baseUrl} (account ${error.recorded.account}) are left open: this worker's client is configured for ${error.configured.baseUrl} (account ${error.configured.account}), whose answers are no evidence about them (first seen: ${entry.referenceId}). Run a worker configured for that deployment; for a rotated API key, declare the former account (formerAccounts / COLLECTIONS_FORMER_ACCOUNTS).`,
      );
    } else {
      this.#context.logger.debug(`settlement worker: ${entry.referenceId} was pushed to another deployment; set aside`);
    }
    this.#otherDeployment = { error, at: monotonicNow() };
    this.#leases.setAside(entry);
  }

  /** A 404 that is not the service's own: said once at `error` as it starts, then the worker reports unhealthy. */
  #misdirected(error: WrongBaseUrlError, referenceId: string): void {
    if (this.#configurationProblem === undefined) {
      this.#context.logger.error(
        `settlement worker: no payment is closed on a 404 until a check answers as the Collections API again (first seen for ${referenceId})${error.baseUrl === undefined ? '' : `: the base URL ${error.baseUrl} does not answer as it`}`,
        reasonOf(error),
      );
    }
    this.#configurationProblem = error;
  }

  /** A check answered as the service does (a status, or its own 404 from a proved base URL). */
  #answeredLikeTheService(): void {
    if (this.#configurationProblem === undefined) return;
    this.#configurationProblem = undefined;
    this.#context.logger.warn('settlement worker: the base URL answers as the Collections API again; 404s are judged again');
  }

  stop(): Promise<void> {
    this.#stopped ??= this.#shutDown();
    return this.#stopped;
  }

  async #shutDown(): Promise<void> {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#abort.abort(new DOMException('The settlement worker stopped', 'AbortError'));
    // Settling steps in progress (onSettled, journal writes) finish: cutting them would deliver twice.
    while (this.#tasks.size > 0 || this.#leases.running.length > 0) {
      await Promise.allSettled([...this.#tasks, ...this.#leases.running]);
    }
    this.#queue.clear();
    this.#fresh.clear();
    await this.#leases.releaseAll();
    this.#resolveDone();
  }

  /**
   * Starts whatever is due, then arms the one timer for the next thing that will be. Every time the worker keeps (due
   * times, leases, pauses, tokens) is on this process's monotonic clock: a step of the wall clock must neither delay a
   * renewal past the lease the journal holds nor start a check early.
   */
  #pump(): void {
    if (this.#stopped) return;
    this.#leases.startDue(monotonicNow());
    for (;;) {
      // Read the clock per check: starting a check takes some synchronous work, and a time read once for
      // the whole loop would date the last tokens and leases too early.
      const at = monotonicNow();
      if (this.#inFlight >= this.#plan.maxConcurrentChecks || at < this.#pausedUntil) break;
      // The token is taken where the request leaves (beforeSend); one check waiting for it is enough.
      // Never more started than tokens free: a check started now must not wait behind others for a token while
      // a new payment's first check, due a moment later, waits behind it.
      if (this.#waitingForToken > 0) break;
      const free = this.#bucket.free(at) - this.#starting;
      if (free <= 0) break;
      const fresh = this.#fresh.peek();
      const queue = fresh !== undefined && fresh.dueAt <= at ? this.#fresh : this.#queue;
      // Re-checks leave a token or two of every window to first checks, also while none waits (a new payment may be
      // leased any moment, and a token spent now stays spent 1.25 s): a new payment is checked on time however many
      // old ones fill the budget.
      if (queue === this.#queue && free <= this.#firstCheckTokens) break;
      const head = queue.peek();
      if (head === undefined || head.dueAt > at) break;
      if (head.gone) {
        queue.pop();
        head.queued = false;
        continue;
      }
      const checkMs = Math.min(this.#context.timeoutMs, head.leaseUntil - at - this.#leaseMarginMs);
      if (checkMs < this.#leaseMarginMs) {
        // Too little lease left to finish a check inside it: wait for the renewal rather than risk
        // checking while another worker may already hold the payment (one under way, as after this process was
        // suspended past its leases, ends soon: look again a margin later, not a renewal period).
        queue.pop();
        head.dueAt = Math.max(this.#leases.renewing ? at : this.#leases.nextRenewAt, at + this.#leaseMarginMs);
        queue.push(head);
        continue;
      }
      queue.pop();
      head.queued = false;
      this.#starting++;
      this.#track(this.#check(head, checkMs));
    }
    this.#arm(monotonicNow());
  }

  #arm(now: number): void {
    let at = this.#leases.nextDueAt;
    const head = this.#queue.peek();
    const fresh = this.#fresh.peek();
    if (this.#inFlight < this.#plan.maxConcurrentChecks && this.#waitingForToken === 0 && this.#starting === 0) {
      // A first check needs one free token; a re-check one more than those kept for first checks.
      if (fresh !== undefined) at = Math.min(at, Math.max(fresh.dueAt, this.#pausedUntil, this.#bucket.availableAt(now)));
      if (head !== undefined) {
        at = Math.min(at, Math.max(head.dueAt, this.#pausedUntil, this.#bucket.availableAt(now, this.#firstCheckTokens + 1)));
      }
    }
    if (at === this.#timerAt && this.#timer !== undefined) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = at === Number.POSITIVE_INFINITY ? undefined : setTimeout(this.#onTimer, Math.max(0, at - now));
  }

  readonly #onTimer = () => {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#pump();
  };

  #track(task: Promise<void>): void {
    this.#tasks.add(task);
    void task.finally(() => this.#tasks.delete(task));
  }

  #schedule(entry: Held, pauseMs: number): void {
    if (entry.gone || entry.queued || this.#stopped) return;
    entry.dueAt = Math.max(monotonicNow() + pauseMs, this.#pausedUntil);
    entry.queued = true;
    (entry.fresh ? this.#fresh : this.#queue).push(entry);
  }

  /**
   * The pause before a payment's next check: the poll schedule, slowed with the payment's age (a payment
   * open an hour is checked at most once a minute; `maxIntervalMs` aside), and a stale one reported once.
   */
  #pauseOf(entry: Held): number {
    const scheduled = pollPauseMs(entry.pauses++, this.#plan);
    // An age: the journal's clock (`createdAt`) against this machine's wall clock, the only two that compare.
    const ageMs = Date.now() - entry.createdAt;
    if (!(ageMs > 0)) return scheduled;
    if (ageMs >= this.#plan.staleAfterMs && !this.#reported.has(entry.referenceId)) {
      this.#reported.add(entry.referenceId);
      void this.#reportStale(entry.referenceId);
    }
    return agedPauseMs(scheduled, ageMs, this.#plan.maxIntervalMs);
  }

  async #reportStale(referenceId: string): Promise<void> {
    const { journal, logger } = this.#context;
    try {
      const record = await journal.get(referenceId);
      if (record === undefined || !isOpenPaymentState(record.state)) return;
      if (this.#onStale === undefined) {
        logger.warn(`settlement worker: ${referenceId} has been open since ${record.createdAt}; still checking it, once a minute`, {
          state: record.state,
        });
      } else await this.#onStale(record);
    } catch (error) {
      logger.error(`settlement worker: reporting stale payment ${referenceId} failed`, reasonOf(error));
    }
  }

  /**
   * After a check that leaves the payment open: its next check after the pause of its schedule, kept and scheduled,
   * or parked by the leases until it is due.
   */
  #later(entry: Held): void {
    entry.fresh = false;
    const pauseMs = this.#pauseOf(entry);
    if (!this.#leases.park(entry, pauseMs)) this.#schedule(entry, pauseMs);
  }

  /** A payment the leases took up: due after `pauseMs`, once its deployment is known to be this client's. */
  #adopted(entry: Held, pauseMs: number): void {
    // Leased again while a check from before the lease was lost is still in flight: due when that check ends.
    if (this.#checking.has(entry.referenceId)) return;
    if (entry.vetted) this.#schedule(entry, pauseMs);
    else this.#track(this.#vet(entry, pauseMs));
  }

  /**
   * Where the payment's push went, checked before it is scheduled (never between a check's start and its request,
   * which must leave within the lease): this client's deployment → scheduled; another → set aside.
   */
  async #vet(entry: Held, pauseMs: number): Promise<void> {
    try {
      const mismatch = await this.#context.deploymentMismatch?.(entry);
      if (entry.gone || this.#stopped) return;
      if (mismatch instanceof DeploymentMismatchError) {
        this.#otherDeploymentMet(entry, mismatch);
        return;
      }
      if (mismatch !== undefined) throw mismatch;
      entry.vetted = true;
      this.#schedule(entry, pauseMs);
    } catch (error) {
      // The key function failed, say: its lease lapses and it is leased again later.
      this.#context.logger.error(`settlement worker: could not tell where ${entry.referenceId} was pushed; trying again`, reasonOf(error));
      this.#leases.forget(entry);
    } finally {
      this.#pump();
    }
  }

  /**
   * Called by the transport right before the request leaves (after the client's concurrency slot and the key
   * function): the budget is spent where it matters, also while the client is busy with other calls.
   */
  /** One status request; the token is taken where it leaves (or right before, for a `check` without `beforeSend`). */
  async #send(
    referenceId: string,
    timeoutMs: number,
    takeToken: (shared?: () => Promise<void>) => Promise<void>,
  ): Promise<CollectionStatus> {
    if (this.#context.tokenAtSend === true) return this.#context.check(referenceId, timeoutMs, this.#abort.signal, takeToken);
    await takeToken();
    return this.#context.check(referenceId, timeoutMs, this.#abort.signal);
  }

  async #takeFirstToken(token: { taken: boolean }, shared?: () => Promise<void>): Promise<void> {
    if (!token.taken) {
      token.taken = true;
      this.#starting--;
    }
    await this.#takeToken(shared);
  }

  /**
   * The worker's own token, then (on a client with a shared budget) the key's shared one: one check waits for both,
   * so the pump starts no more checks while the shared budget is the narrower one.
   */
  readonly #takeToken = async (shared?: () => Promise<void>): Promise<void> => {
    this.#waitingForToken++;
    try {
      for (;;) {
        const now = monotonicNow();
        if (this.#bucket.take(now)) {
          if (shared !== undefined) await shared();
          return;
        }
        this.#abort.signal.throwIfAborted();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, Math.max(1, this.#bucket.availableAt(now) - now));
          const signal = this.#abort.signal;
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          signal.addEventListener('abort', done, { once: true });
        });
      }
    } finally {
      this.#waitingForToken--;
      queueMicrotask(() => this.#pump());
    }
  };

  async #check(entry: Held, timeoutMs: number): Promise<void> {
    this.#inFlight++;
    this.#checking.add(entry.referenceId);
    const token = { taken: false };
    try {
      if (!entry.vetted) {
        // Leased again while its earlier check was in flight: checked for its deployment first, then due.
        this.#track(this.#vet(entry, 0));
        return;
      }
      let status: CollectionStatus;
      try {
        status = await this.#send(entry.referenceId, timeoutMs, (shared) => this.#takeFirstToken(token, shared));
      } catch (error) {
        await this.#checkFailed(entry, error);
        return;
      }
      this.#rateLimited = 0;
      this.#answeredLikeTheService();
      // An unknown word was warned about (once per payment and word) where the client read it.
      const observation = scrubObservation(this.#context.statusWords.observation(status), this.#context.logger);
      if (observation.state !== 'pending') await this.#settling.settle(entry, observation);
      else await this.#settling.pending(entry, observation);
    } catch (error) {
      if (!this.#outage.down)
        this.#context.logger.error(`settlement worker: ${entry.referenceId} could not be recorded; trying again`, reasonOf(error));
      this.#schedule(entry, this.#plan.maxIntervalMs);
    } finally {
      if (!token.taken) this.#starting--;
      this.#inFlight--;
      this.#checking.delete(entry.referenceId);
      const successor = this.#leases.get(entry.referenceId);
      if (successor !== undefined && successor !== entry) this.#schedule(successor, 0);
      this.#pump();
    }
  }

  async #checkFailed(entry: Held, error: unknown): Promise<void> {
    if (this.#stopped) return;
    const { logger } = this.#context;
    if (error instanceof ApiError && error.status === 429) {
      // One payment's 429 is the whole worker's: every check waits, not just this one.
      this.#rateLimited++;
      const pauseMs = rateLimitPauseMs(error, this.#rateLimited, this.#context.maxRetryAfterMs ?? 60_000, logger);
      this.#pausedUntil = Math.max(this.#pausedUntil, monotonicNow() + pauseMs);
      logger.warn('settlement worker: rate limited; pausing every check', { pauseMs });
      this.#schedule(entry, 0);
      return;
    }
    if (error instanceof NotFoundError && monotonicNow() < this.#pausedUntil) {
      // Another check's 429 paused the worker while this one was out: judging the 404 asks more of the service
      // (`/health`, a second check), so it is asked again once the pause is over.
      this.#schedule(entry, 0);
      return;
    }
    if (error instanceof NotFoundError) {
      try {
        await this.#context.judgeNotFound(error);
        this.#answeredLikeTheService();
        if (
          (entry.state === 'initiating' || entry.state === 'unknown') &&
          ((await this.#settling.resent(entry)) || (await this.#settling.notFound(entry)))
        ) {
          return;
        }
      } catch (problem) {
        if (problem instanceof WrongBaseUrlError) this.#misdirected(problem, entry.referenceId);
        else if (!isRetryable(problem)) throw problem;
        logger.debug(`settlement worker: a 404 for ${entry.referenceId} was not judged; still waiting`, reasonOf(problem));
      }
    }
    if (isRetryable(error) || error instanceof NotFoundError) {
      logger.debug(`settlement worker: status check of ${entry.referenceId} failed; still waiting`, reasonOf(error));
      this.#later(entry);
      return;
    }
    // 400/401/403/422 or an unreadable answer: nothing this payment can fix; keep it open, slowly.
    logger.error(`settlement worker: status check of ${entry.referenceId} failed; still waiting`, reasonOf(error));
    this.#schedule(entry, this.#plan.maxIntervalMs);
  }
}
