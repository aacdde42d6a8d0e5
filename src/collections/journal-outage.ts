/**
 * Whether a settlement worker's journal answers, as the worker sees it through its own calls: when the store goes
 * away (a database restarting or unreachable) every lease, renewal and record of every payment fails, each cycle.
 * Said once, with the first failure's cause, and once when a call answers again; the worker's own lines for those
 * failures are held back meanwhile, so an outage of minutes is two lines, not one per payment per cycle.
 *
 * @module
 */
import type { LevelLogger } from '../core/logger.js';
import type { PaymentJournal } from '../journal/journal.js';
import { reasonOf } from './worker-outcome.js';

/** Tracks one worker's journal: {@link JournalOutage.watch} wraps the store; {@link JournalOutage.down} says what was seen. */
export class JournalOutage {
  readonly #logger: Pick<LevelLogger, 'warn'>;
  readonly #who: string;
  /**
   * Counts the changes between answering and not. A call's outcome counts only when no change happened since the
   * call started: a call sent before the store went away that answers late does not announce it back, and one that
   * failed before it came back does not announce it gone again.
   */
  #epoch = 0;
  #downSince: number | undefined;

  constructor(logger: Pick<LevelLogger, 'warn'>, who = 'settlement worker') {
    this.#logger = logger;
    this.#who = who;
  }

  /** True from a failed call of the journal until a call started after it answers. */
  get down(): boolean {
    return this.#downSince !== undefined;
  }

  /** The same store; every method that returns a promise has its outcome observed on the way back. */
  watch(journal: PaymentJournal): PaymentJournal {
    return new Proxy(journal, {
      get: (target, property) => {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const epoch = this.#epoch;
          const result: unknown = value.apply(target, args);
          if (!(result instanceof Promise)) return result;
          return result.then(
            (answer: unknown) => {
              this.#answered(epoch);
              return answer;
            },
            (error: unknown) => {
              this.#failed(epoch, error);
              throw error;
            },
          );
        };
      },
    });
  }

  #failed(epoch: number, error: unknown): void {
    if (this.#downSince !== undefined || epoch !== this.#epoch) return;
    this.#epoch++;
    this.#downSince = Date.now();
    // A warning, like every failure the worker waits out by itself: nothing is lost, and it says when it is over.
    this.#logger.warn(`${this.#who}: could not use the journal; leases, checks and records wait until it answers`, reasonOf(error));
  }

  #answered(epoch: number): void {
    if (this.#downSince === undefined || epoch !== this.#epoch) return;
    const seconds = Math.round((Date.now() - this.#downSince) / 1000);
    this.#epoch++;
    this.#downSince = undefined;
    this.#logger.warn(`${this.#who}: the journal answers again (after ${seconds} s); settling goes on`);
  }
}
