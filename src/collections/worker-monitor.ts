/**
 * What a settlement worker's instrumentation sees, gathered from outside the worker: its journal (wrapped, to
 * count the leases it takes and gives back), its status checks (status, duration, 429s) and its `onSettled`
 * (settle latency). The worker itself is not changed; a worker started without a `settlementWorker` hook
 * runs without any of this.
 *
 * @module
 */
import { ApiError } from '../core/errors.js';
import type { Instrumentation, SettlementWorkerEvent, SettlementWorkerView } from '../core/instrumentation.js';
import type { LevelLogger } from '../core/logger.js';
import { monotonicNow } from '../core/monotonic.js';
import { isOpenPaymentState, OPEN_PAYMENT_STATES, type PaymentJournal, type PaymentRecord } from '../journal/journal.js';
import { startSettlementWorker } from './settlement-worker.js';
import type { SettlementWorker, SettlementWorkerContext, SettlementWorkerOptions } from './settlement-worker-options.js';

type Check = SettlementWorkerContext['check'];

/** Instruments one worker: call {@link instrument}, start the worker with what it returns, then {@link started}. */
export class WorkerMonitor {
  readonly #journal: PaymentJournal;
  readonly #leased = new Set<string>();
  /**
   * End times of the checks of the last second (`monotonicNow()`), oldest first (for the budget used). Durations and
   * this window are measured on the monotonic clock: a step of the wall clock would report a negative check, or an
   * hour-long one, and empty or freeze the window.
   */
  readonly #recentChecks: number[] = [];
  #listener: ((event: SettlementWorkerEvent) => void) | undefined;
  readonly #logger: LevelLogger;
  #warnedUncounted = false;

  constructor(journal: PaymentJournal, logger: LevelLogger) {
    this.#journal = journal;
    this.#logger = logger;
  }

  /**
   * The journal's open payments: by its own counts (a cost that does not grow with the journal) when it has
   * them; otherwise by reading every open record, warned about once.
   */
  async #openPayments(): Promise<number> {
    const journal = this.#journal;
    if (typeof journal.counts === 'function') {
      const counts = await journal.counts();
      return OPEN_PAYMENT_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    }
    if (!this.#warnedUncounted) {
      this.#warnedUncounted = true;
      this.#logger.warn(
        'settlement worker metrics: the journal has no counts(); each read of the open payments reads every open record (implement PaymentJournal.counts)',
      );
    }
    return (await journal.list({ states: OPEN_PAYMENT_STATES })).length;
  }

  /** The journal the worker must be given: the same store, its leases counted on the way. */
  journal(): PaymentJournal {
    const inner = this.#journal;
    const leased = this.#leased;
    return {
      insert: (record) => inner.insert(record),
      transition: async (referenceId, version, change) => {
        const result = await inner.transition(referenceId, version, change);
        // A final record is no longer leasable: its lease ends with it.
        if (result.record !== undefined && !isOpenPaymentState(result.record.state)) leased.delete(referenceId);
        // Each contradiction this worker marks is counted once (a record already marked with the word is not written).
        if (result.applied && change.contradiction !== undefined) this.#emit({ type: 'contradiction', state: result.record.state });
        return result;
      },
      now: () => inner.now(),
      history: (referenceId) => inner.history(referenceId),
      get: (referenceId) => inner.get(referenceId),
      list: (filter) => inner.list(filter),
      lease: async (request) => {
        const records = await inner.lease(request);
        for (const record of records) leased.add(record.referenceId);
        return records;
      },
      renew: async (owner, referenceIds, leaseMs) => {
        const kept = await inner.renew(owner, referenceIds, leaseMs);
        const held = new Set(kept);
        for (const id of referenceIds) if (!held.has(id)) leased.delete(id);
        return kept;
      },
      release: async (owner, referenceIds) => {
        await inner.release(owner, referenceIds);
        for (const id of referenceIds) leased.delete(id);
      },
      ...(inner.close === undefined ? {} : { close: () => (inner.close as () => Promise<void>).call(inner) }),
      // Other methods of the store (migrate…) are not the worker's concern.
    };
  }

  /** The status check, timed and reported. */
  check(check: Check): Check {
    return async (referenceId, timeoutMs, signal, beforeSend) => {
      const started = monotonicNow();
      let status: number | undefined;
      try {
        const result = await check(referenceId, timeoutMs, signal, beforeSend);
        status = 200;
        return result;
      } catch (error) {
        status = error instanceof ApiError ? error.status : undefined;
        throw error;
      } finally {
        const now = monotonicNow();
        this.#recentChecks.push(now);
        this.#forgetBefore(now - 1000);
        this.#emit({ type: 'check', status, durationMs: now - started });
        if (status === 429) this.#emit({ type: 'paused' });
      }
    };
  }

  /** The worker's `onSettled`, reporting each settlement once the caller's own `onSettled` has taken it. */
  onSettled(given: SettlementWorkerOptions['onSettled']): (record: PaymentRecord) => Promise<void> {
    return async (record) => {
      await given?.(record);
      const createdAt = Date.parse(record.createdAt);
      // An age: the journal's clock (`createdAt`) against this machine's wall clock, the only two that compare.
      this.#emit({ type: 'settled', state: record.state, latencyMs: Number.isNaN(createdAt) ? 0 : Math.max(0, Date.now() - createdAt) });
    };
  }

  /** Hands the running worker to the hook. */
  started(hooks: Instrumentation, worker: SettlementWorker, requestsPerSecond: number): void {
    const view: SettlementWorkerView = {
      workerId: worker.workerId,
      requestsPerSecond,
      openPayments: () => this.#openPayments(),
      leasedPayments: () => this.#leased.size,
      budgetUsed: () => {
        this.#forgetBefore(monotonicNow() - 1000);
        return Math.min(1, this.#recentChecks.length / requestsPerSecond);
      },
    };
    const listener = hooks.settlementWorker?.(view, worker.done);
    this.#listener = typeof listener === 'function' ? listener : undefined;
    void worker.done.then(() => {
      this.#listener = undefined;
      this.#recentChecks.length = 0;
    });
  }

  #forgetBefore(time: number): void {
    let old = 0;
    while (old < this.#recentChecks.length && (this.#recentChecks[old] as number) <= time) old++;
    if (old > 0) this.#recentChecks.splice(0, old);
  }

  #emit(event: SettlementWorkerEvent): void {
    try {
      this.#listener?.(event);
    } catch {
      // A metrics listener's failure must never change how a payment settles.
    }
  }
}

/**
 * Starts a settlement worker instrumented from outside by `hooks.settlementWorker`: the same worker, given a
 * counting journal, a timed check and a reporting `onSettled`.
 */
export function startMonitoredWorker(
  context: SettlementWorkerContext,
  options: SettlementWorkerOptions,
  hooks: Instrumentation,
): SettlementWorker {
  const monitor = new WorkerMonitor(context.journal, context.logger);
  const worker = startSettlementWorker(
    { ...context, journal: monitor.journal(), check: monitor.check(context.check) },
    {
      ...options,
      journal: undefined,
      // A bad onSettled is left as given, for the worker's own check to name it.
      onSettled:
        options.onSettled === undefined || typeof options.onSettled === 'function'
          ? monitor.onSettled(options.onSettled)
          : options.onSettled,
    },
  );
  monitor.started(hooks, worker, options.requestsPerSecond ?? 10);
  return worker;
}
