/**
 * `waitForSettlement`: a till waits for the journal to record the payment's final state, written by any process
 * (usually a settlement worker), and sends nothing to the service itself. A journal that can `watch` (PostgreSQL:
 * `LISTEN`/`NOTIFY`) wakes the waiter when the state is written; any other is read on a schedule.
 *
 * @module
 */
import { isTimerMs } from '../core/config.js';
import { JournalError, PaymentContradictionError, PollTimeoutError, RequestValidationError, type ValidationIssue } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { isOpenPaymentState, type PaymentJournal, type PaymentRecord } from '../journal/journal.js';

/** Options of `CollectionsClient.waitForSettlement`. */
export interface WaitForSettlementOptions {
  /** Stops waiting (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
  /** How long to wait before rejecting with `PollTimeoutError`. @defaultValue 120000 (2 min) */
  maxWaitMs?: number;
}

/** Reads on a schedule start this often and slow to {@link SLOWEST_READ_MS}. */
const FIRST_READ_MS = 250;
const SLOWEST_READ_MS = 2_000;
/** With a watching journal, a read this often anyway: a safety net should a notification ever be lost. */
const WATCHED_READ_MS = 15_000;

/** Waits for the final record of `referenceId` (already checked, lower case); see `CollectionsClient.waitForSettlement`. */
export async function waitForSettlement(
  journal: PaymentJournal,
  referenceId: string,
  options: WaitForSettlementOptions,
  logger: LevelLogger,
): Promise<PaymentRecord> {
  const { signal, maxWaitMs = 120_000 } = options;
  const issues: ValidationIssue[] = [];
  if (!isTimerMs(maxWaitMs, 0)) issues.push({ path: 'maxWaitMs', message: 'must be a whole number of milliseconds ≥ 0' });
  if (signal !== undefined && !(signal instanceof AbortSignal)) issues.push({ path: 'signal', message: 'must be an AbortSignal' });
  if (issues.length > 0) throw new RequestValidationError(issues, 'waitForSettlement options');
  signal?.throwIfAborted();

  return new Promise<PaymentRecord>((resolve, reject) => {
    let finished = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let unwatch: (() => void) | undefined;
    let watching = false;
    let reading = false;
    let again = false;
    let reads = 0;
    let last: PaymentRecord | undefined;

    const finish = (settle: () => void) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      unwatch?.();
      settle();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(
      () => finish(() => reject(new PollTimeoutError(referenceId, last?.statusText ?? last?.state, maxWaitMs))),
      maxWaitMs,
    );

    const schedule = () => {
      if (finished) return;
      clearTimeout(timer);
      const pause = watching ? WATCHED_READ_MS : Math.min(SLOWEST_READ_MS, FIRST_READ_MS * 1.5 ** reads);
      timer = setTimeout(read, pause);
    };
    // One read at a time; a wake-up during a read reads once more after it.
    const read = async () => {
      if (finished) return;
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        const record = await journal.get(referenceId);
        reads++;
        if (record !== undefined) last = record;
        if (record !== undefined && !isOpenPaymentState(record.state)) {
          // A final record the service contradicted is no answer to hand a till (see PaymentContradictionError).
          const { contradiction } = record;
          if (contradiction !== undefined) {
            const error = new PaymentContradictionError({ referenceId, recordState: record.state, ...contradiction });
            finish(() => reject(error));
          } else finish(() => resolve(record));
          return;
        }
      } catch (error) {
        // A journal that cannot be read for a while (a database restart) is waited out until maxWaitMs.
        logger.warn(`waitForSettlement: could not read the journal for ${referenceId}; trying again`, {
          reason: error instanceof Error ? error.message : String(error),
        });
      } finally {
        reading = false;
      }
      if (again) {
        again = false;
        void read();
        return;
      }
      schedule();
    };

    const start = async () => {
      if (journal.watch !== undefined) {
        try {
          // Watch first, then read: a state written between the two still wakes the waiter.
          const stop = await journal.watch(referenceId, () => void read());
          if (finished) stop();
          else {
            unwatch = stop;
            watching = true;
          }
        } catch (error) {
          logger.debug('waitForSettlement: the journal cannot be watched; reading it on a schedule', {
            reason: error instanceof Error ? error.message : String(error),
          });
        }
      }
      await read();
    };
    start().catch((error: unknown) => finish(() => reject(new JournalError('waitForSettlement failed', referenceId, error))));
  });
}
