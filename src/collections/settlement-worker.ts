/**
 * The settlement worker: settles every open payment of a journal with one scheduler (a due-time queue and
 * one timer), one request budget for the whole worker, and leases so that workers in several processes or
 * machines share the open payments without two of them checking one payment at once. Its options are in
 * `settlement-worker-options.ts`.
 *
 * About 400 lines: the scheduler, the lease bookkeeping and the stop sequence share their state; split
 * apart, each would need the others' internals.
 *
 * @module
 */
import { type DueItem, DueQueue } from '../core/due-queue.js';
import { ApiError, NotFoundError } from '../core/errors.js';
import { backoffDelayMs, isRetryable } from '../core/retry.js';
import { BUDGET_WINDOW_MS, TokenBucket } from '../core/token-bucket.js';
import { newReferenceId } from '../core/uuid.js';
import { isOpenPaymentState, type PaymentChange, type PaymentRecord, type PaymentState } from '../journal/journal.js';
import { advance, decide, type PaymentObservation, settleNotFound } from '../journal/state-machine.js';
import { scrubObservation } from './journal-binding.js';
import { pollPauseMs } from './poller.js';
import type { CollectionStatus } from './schemas.js';
import {
  type Plan,
  plan,
  type SettlementWorker,
  type SettlementWorkerContext,
  type SettlementWorkerOptions,
} from './settlement-worker-options.js';

export type { SettlementWorker, SettlementWorkerContext, SettlementWorkerOptions } from './settlement-worker-options.js';

interface Held extends DueItem {
  readonly referenceId: string;
  state: PaymentState;
  statusText: string | undefined;
  /** The next pause number of the poll schedule. */
  pauses: number;
  /** When our lease runs out at the latest: measured from before the lease call was sent. */
  leaseUntil: number;
  queued: boolean;
  /** No longer ours (lease lost, settled, or stopped). */
  gone: boolean;
}

/**
 * A spent token stays spent a little longer than the 1 s window: between taking it and the request leaving
 * lie a few asynchronous steps (the key, the pipeline), whose delays differ from request to request, and
 * the budget must hold where the request leaves, also when the event loop lags by a few hundred milliseconds under load. The cost is 20 % of the peak rate.
 */
const BUDGET_GUARD_MS = 250;
/** Ids per renew or release statement. */
const BATCH = 1_000;
/** Records per lease statement: large, since a store may scan all its records per call. */
const LEASE_BATCH = 5_000;

/** Starts a worker; see {@link CollectionsClient.startSettlementWorker}. */
export function startSettlementWorker(context: SettlementWorkerContext, options: SettlementWorkerOptions = {}): SettlementWorker {
  return new Worker(context, options);
}

class Worker implements SettlementWorker {
  readonly workerId: string = newReferenceId();
  readonly done: Promise<void>;
  readonly #context: SettlementWorkerContext;
  readonly #plan: Plan;
  readonly #onSettled: SettlementWorkerOptions['onSettled'];
  readonly #signal: AbortSignal | undefined;
  readonly #queue = new DueQueue<Held>();
  readonly #held = new Map<string, Held>();
  /** Payments with a check of this worker in flight: a lease lost and taken again must not start a second one. */
  readonly #checking = new Set<string>();
  readonly #bucket: TokenBucket;
  readonly #abort = new AbortController();
  readonly #tasks = new Set<Promise<void>>();
  /** A lease must have this much left beyond a check's time limit when the check starts. */
  readonly #leaseMarginMs: number;
  /** Who the journal's history names for this worker's writes. */
  readonly #by: string;
  #resolveDone!: () => void;
  #stopped: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #inFlight = 0;
  #pausedUntil = 0;
  #rateLimited = 0;
  #nextScanAt = 0;
  #nextRenewAt: number;
  #scanning: Promise<void> | undefined;
  #renewing: Promise<void> | undefined;

  constructor(context: SettlementWorkerContext, options: SettlementWorkerOptions) {
    this.#plan = plan(options);
    options.signal?.throwIfAborted();
    this.#context = context;
    this.#onSettled = options.onSettled;
    this.#signal = options.signal;
    this.#bucket = new TokenBucket(this.#plan.requestsPerSecond, BUDGET_WINDOW_MS + BUDGET_GUARD_MS);
    this.#leaseMarginMs = Math.min(1_000, Math.ceil(this.#plan.leaseMs / 10));
    this.#by = `worker:${this.workerId}`;
    this.#nextRenewAt = Date.now() + this.#plan.leaseMs / 3;
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve;
    });
    this.#signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#pump();
  }

  readonly #onAbort = () => {
    void this.stop();
  };

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
    while (this.#tasks.size > 0 || this.#scanning || this.#renewing) {
      await Promise.allSettled([...this.#tasks, this.#scanning, this.#renewing]);
    }
    const ids = [...this.#held.keys()];
    this.#held.clear();
    this.#queue.clear();
    for (let start = 0; start < ids.length; start += BATCH) {
      await this.#context.journal.release(this.workerId, ids.slice(start, start + BATCH)).catch((error: unknown) => {
        this.#context.logger.warn('settlement worker: could not release leases; they run out by themselves', reasonOf(error));
      });
    }
    this.#resolveDone();
  }

  /** Starts whatever is due, then arms the one timer for the next thing that will be. */
  #pump(): void {
    if (this.#stopped) return;
    const now = Date.now();
    if (!this.#scanning && now >= this.#nextScanAt) {
      const head = this.#queue.peek();
      // A worker already behind its schedule leaves new payments to workers that have time for them.
      const behind = head !== undefined && head.dueAt < now - this.#plan.maxIntervalMs;
      const room = Math.min(LEASE_BATCH, this.#plan.maxLeasedPayments - this.#held.size);
      if (behind || room <= 0) this.#nextScanAt = now + this.#plan.scanIntervalMs;
      else this.#scanning = this.#scan(room);
    }
    if (!this.#renewing && now >= this.#nextRenewAt) {
      if (this.#held.size === 0) this.#nextRenewAt = now + this.#plan.leaseMs / 3;
      else this.#renewing = this.#renew();
    }
    for (;;) {
      // Read the clock per check: starting a check takes some synchronous work, and a time read once for
      // the whole loop would date the last tokens and leases too early.
      const at = Date.now();
      if (this.#inFlight >= this.#plan.maxConcurrentChecks || at < this.#pausedUntil) break;
      const head = this.#queue.peek();
      if (head === undefined || head.dueAt > at) break;
      if (head.gone) {
        this.#queue.pop();
        head.queued = false;
        continue;
      }
      const checkMs = Math.min(this.#context.timeoutMs, head.leaseUntil - at - this.#leaseMarginMs);
      if (checkMs < this.#leaseMarginMs) {
        // Too little lease left to finish a check inside it: wait for the renewal rather than risk
        // checking while another worker may already hold the payment.
        this.#queue.pop();
        head.dueAt = Math.max(this.#nextRenewAt, at + this.#leaseMarginMs);
        this.#queue.push(head);
        continue;
      }
      if (!this.#bucket.take(at)) break;
      this.#queue.pop();
      head.queued = false;
      this.#track(this.#check(head, checkMs));
    }
    this.#arm(Date.now());
  }

  #arm(now: number): void {
    let at = Math.min(
      this.#scanning ? Number.POSITIVE_INFINITY : this.#nextScanAt,
      this.#renewing ? Number.POSITIVE_INFINITY : this.#nextRenewAt,
    );
    const head = this.#queue.peek();
    if (head !== undefined && this.#inFlight < this.#plan.maxConcurrentChecks) {
      at = Math.min(at, Math.max(head.dueAt, this.#pausedUntil, this.#bucket.availableAt(now)));
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
    entry.dueAt = Math.max(Date.now() + pauseMs, this.#pausedUntil);
    entry.queued = true;
    this.#queue.push(entry);
  }

  /** Leases up to `room` open payments nobody holds. Called only with room > 0, so it always awaits first. */
  async #scan(room: number): Promise<void> {
    const { journal, logger } = this.#context;
    let full = false;
    try {
      const sentAt = Date.now();
      const records = await journal.lease({ owner: this.workerId, leaseMs: this.#plan.leaseMs, limit: room });
      full = records.length === room;
      for (const record of records) this.#adopt(record, sentAt + this.#plan.leaseMs);
    } catch (error) {
      logger.warn('settlement worker: could not lease open payments; trying again', reasonOf(error));
    } finally {
      // A full batch means more may be waiting: look again at once.
      this.#nextScanAt = full ? Date.now() : Date.now() + this.#plan.scanIntervalMs;
      this.#scanning = undefined;
      this.#pump();
    }
  }

  #adopt(record: PaymentRecord, leaseUntil: number): void {
    const known = this.#held.get(record.referenceId);
    if (known !== undefined) {
      known.leaseUntil = leaseUntil;
      return;
    }
    const entry: Held = {
      referenceId: record.referenceId,
      state: record.state,
      statusText: record.statusText,
      pauses: 1,
      leaseUntil,
      dueAt: 0,
      queued: false,
      gone: false,
    };
    this.#held.set(record.referenceId, entry);
    // Leased again while a check from before the lease was lost is still in flight: due when that check ends.
    if (this.#checking.has(record.referenceId)) return;
    // A payment initiated a moment ago is given the schedule's quiet start; one taken over is due now.
    this.#schedule(entry, Date.parse(record.createdAt) + this.#plan.initialDelayMs - Date.now());
  }

  /** Renews every lease held. Called only with leases held, so it always awaits first. */
  async #renew(): Promise<void> {
    const { journal, logger } = this.#context;
    const sentAt = Date.now();
    this.#nextRenewAt = sentAt + this.#plan.leaseMs / 3;
    try {
      const ids = [...this.#held.keys()];
      for (let start = 0; start < ids.length; start += BATCH) {
        // A store that answers at once (memory) would otherwise renew 100 000 leases in one turn of the loop.
        if (start > 0) await new Promise((resolve) => setTimeout(resolve, 0));
        const batch = ids.slice(start, start + BATCH);
        const kept = new Set(await journal.renew(this.workerId, batch, this.#plan.leaseMs));
        for (const id of batch) {
          const entry = this.#held.get(id);
          if (entry === undefined) continue;
          if (kept.has(id)) entry.leaseUntil = sentAt + this.#plan.leaseMs;
          else this.#forget(entry);
        }
      }
    } catch (error) {
      // The leases run out by the local bound; no check starts past it.
      logger.warn('settlement worker: could not renew leases; trying again', reasonOf(error));
      this.#nextRenewAt = Date.now() + Math.min(1_000, this.#plan.leaseMs / 10);
    } finally {
      this.#renewing = undefined;
      this.#pump();
    }
  }

  #forget(entry: Held): void {
    entry.gone = true;
    this.#held.delete(entry.referenceId);
  }

  async #check(entry: Held, timeoutMs: number): Promise<void> {
    this.#inFlight++;
    this.#checking.add(entry.referenceId);
    try {
      let status: CollectionStatus;
      try {
        status = await this.#context.check(entry.referenceId, timeoutMs, this.#abort.signal);
      } catch (error) {
        await this.#checkFailed(entry, error);
        return;
      }
      this.#rateLimited = 0;
      // An unknown word was warned about (once per payment and word) where the client read it.
      const observation = scrubObservation(this.#context.statusWords.observation(status), this.#context.logger);
      if (observation.state !== 'pending') {
        await this.#settle(entry, observation);
      } else {
        // Written when it tells something new: an initiating or unknown payment exists, or a new word.
        if (entry.state !== 'pending' || entry.statusText !== observation.statusText) {
          const moved = await advance(this.#context.journal, entry.referenceId, observation, this.#by);
          if (moved.record !== undefined && !isOpenPaymentState(moved.record.state)) {
            this.#forget(entry);
            return;
          }
          entry.state = 'pending';
          entry.statusText = observation.statusText;
        }
        this.#schedule(entry, pollPauseMs(entry.pauses++, this.#plan));
      }
    } catch (error) {
      this.#context.logger.error(`settlement worker: ${entry.referenceId} could not be recorded; trying again`, reasonOf(error));
      this.#schedule(entry, this.#plan.maxIntervalMs);
    } finally {
      this.#inFlight--;
      this.#checking.delete(entry.referenceId);
      const successor = this.#held.get(entry.referenceId);
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
      const pauseMs = error.retryAfterMs ?? backoffDelayMs(this.#rateLimited);
      this.#pausedUntil = Math.max(this.#pausedUntil, Date.now() + pauseMs);
      logger.warn('settlement worker: rate limited; pausing every check', { pauseMs });
      this.#schedule(entry, 0);
      return;
    }
    if (error instanceof NotFoundError && (entry.state === 'initiating' || entry.state === 'unknown')) {
      if (await this.#notFound(entry)) return;
    }
    if (isRetryable(error) || error instanceof NotFoundError) {
      logger.debug(`settlement worker: status check of ${entry.referenceId} failed; still waiting`, reasonOf(error));
      this.#schedule(entry, pollPauseMs(entry.pauses++, this.#plan));
      return;
    }
    // 400/401/403/422 or an unreadable answer: nothing this payment can fix; keep it open, slowly.
    logger.error(`settlement worker: status check of ${entry.referenceId} failed; still waiting`, reasonOf(error));
    this.#schedule(entry, this.#plan.maxIntervalMs);
  }

  /**
   * After a 404: closes the payment as `not-sent` when the journal proves nothing can still arrive (see
   * `settleNotFound`; its second status check takes a token like any other). True when the payment is no
   * longer this worker's to check. `not-sent` is recorded before `onSettled` hears of it: delivered first, a
   * close that then lost its race (an attempt began meanwhile) would have announced a false outcome.
   */
  async #notFound(entry: Held): Promise<boolean> {
    const { journal } = this.#context;
    const verdict = await settleNotFound(
      journal,
      entry.referenceId,
      this.#plan.notFoundGraceMs,
      async () => {
        if (!this.#bucket.take(Date.now())) throw new BudgetSpent();
        try {
          const again = await this.#context.check(entry.referenceId, this.#context.timeoutMs, this.#abort.signal);
          return scrubObservation(this.#context.statusWords.observation(again), this.#context.logger);
        } catch (error) {
          if (error instanceof NotFoundError) return 'not-found';
          throw error;
        }
      },
      this.#by,
    ).catch((error: unknown) => {
      if (error instanceof BudgetSpent) return undefined;
      throw error;
    });
    const record = verdict?.record;
    if (record === undefined || isOpenPaymentState(record.state)) {
      if (record !== undefined) entry.state = record.state;
      return false;
    }
    if (verdict?.applied && this.#onSettled !== undefined) {
      try {
        await this.#onSettled(record);
      } catch (error) {
        this.#context.logger.error(`settlement worker: onSettled threw for ${entry.referenceId} (not-sent, recorded)`, reasonOf(error));
      }
    }
    this.#forget(entry);
    return true;
  }

  /**
   * Delivers the final status (`onSettled`), then records it. In that order, a crash between the two
   * delivers twice rather than never; a status is a fact about the service, so delivering it is never false.
   */
  async #settle(entry: Held, observation: Extract<PaymentObservation, { kind: 'status' }>): Promise<void> {
    const { journal, logger } = this.#context;
    const current = await journal.get(entry.referenceId);
    if (current === undefined || !isOpenPaymentState(current.state)) {
      // Settled by someone else (a till's own poll, recover()): they had the outcome; nothing to deliver.
      // A final record is never leased again: its lease needs no release (one write less per payment).
      this.#forget(entry);
      return;
    }
    if (entry.gone) return;
    const decision = decide(current, observation, this.#by);
    if (this.#onSettled !== undefined && decision.kind === 'change') {
      try {
        await this.#onSettled(mergeChange(current, decision.change));
      } catch (error) {
        logger.error(`settlement worker: onSettled threw for ${entry.referenceId}; it stays open and is delivered again`, reasonOf(error));
        this.#schedule(entry, this.#plan.maxIntervalMs);
        return;
      }
    }
    await advance(journal, entry.referenceId, observation, this.#by);
    this.#forget(entry);
  }
}

/** The token for a 404's second status check was not there: the verdict waits for the payment's next turn. */
class BudgetSpent extends Error {}

/** The record as it will read once `change` is written (what `onSettled` is given before the write). */
function mergeChange(record: PaymentRecord, change: PaymentChange): PaymentRecord {
  const merged: Record<string, unknown> = { ...record };
  for (const [key, value] of Object.entries(change)) if (value !== undefined && key !== 'by' && key !== 'requestId') merged[key] = value;
  // The version the write after delivery gives it; the journal stamps its own `updatedAt` then, so the one
  // delivered is this worker's clock at delivery.
  merged.version = record.version + 1;
  merged.updatedAt = new Date().toISOString();
  delete merged.decidableAt;
  return merged as unknown as PaymentRecord;
}

function reasonOf(error: unknown): { reason: string } {
  return { reason: error instanceof Error ? error.message : String(error) };
}
