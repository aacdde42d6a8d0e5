/**
 * A counting semaphore for `maxConcurrentRequests`. Waiters leave the queue when their signal aborts
 * or their time limit (a poll's deadline) passes, so a cancelled or expired call never holds or later
 * takes a slot.
 *
 * @module
 */

/** Limits how many attempts run at once; with `Infinity` it costs nothing. */
export class ConcurrencyLimit {
  readonly #limit: number;
  #active = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Whether there is no limit (`Infinity`): callers may skip {@link run} and its async step. */
  get unlimited(): boolean {
    return this.#limit === Number.POSITIVE_INFINITY;
  }

  /**
   * Runs `task` once a slot is free. While queued, an abort of `signal` rejects with its reason, and
   * `wait` (when given) rejects with its `onLimit()` after `limitMs`.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, wait?: { limitMs: number; onLimit: () => unknown }): Promise<T> {
    if (this.#limit === Number.POSITIVE_INFINITY) return task();
    // A released slot is handed straight to the next waiter, so a newcomer cannot slip in between.
    if (this.#active < this.#limit) this.#active++;
    else await this.#waitForSlot(signal, wait);
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }

  #waitForSlot(signal: AbortSignal | undefined, wait: { limitMs: number; onLimit: () => unknown } | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const detach = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const grant = () => {
        detach();
        resolve();
      };
      const leave = (reason: unknown) => {
        detach();
        const index = this.#waiting.indexOf(grant);
        if (index !== -1) this.#waiting.splice(index, 1);
        reject(reason);
      };
      const onAbort = () => leave(signal?.reason);
      const timer = wait === undefined ? undefined : setTimeout(() => leave(wait.onLimit()), Math.max(0, wait.limitMs));
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
