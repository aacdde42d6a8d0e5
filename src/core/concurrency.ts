/**
 * A counting semaphore for `maxConcurrentRequests`. Waiters leave the queue when their signal aborts,
 * so a cancelled call never holds or later takes a slot.
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

  /** Runs `task` once a slot is free. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#limit === Number.POSITIVE_INFINITY) return task();
    // A released slot is handed straight to the next waiter, so a newcomer cannot slip in between.
    if (this.#active < this.#limit) this.#active++;
    else await this.#waitForSlot(signal);
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }

  #waitForSlot(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(grant);
        if (index !== -1) this.#waiting.splice(index, 1);
        reject(signal?.reason);
      };
      this.#waiting.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
