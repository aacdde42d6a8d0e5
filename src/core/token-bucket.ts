/**
 * A request budget that holds in every window: at most `perSecond` takes in any 1 s window, however the
 * takes bunch up. A classic token bucket refilled at a steady rate lets a full bucket plus a second's refill
 * through in one window (2× the rate); here each token comes back exactly one second after it was spent,
 * which is the tightest bucket that still allows a burst of `perSecond` at once. No timers: callers ask
 * when the next token is free and schedule themselves.
 *
 * @module
 */

/** The window the budget is counted over, in milliseconds. */
export const BUDGET_WINDOW_MS = 1_000;

/** At most `perSecond` takes in any window of `windowMs`. */
export class TokenBucket {
  /** When each of the last `perSecond` tokens was spent, as a ring (oldest at `#next`). */
  readonly #spentAt: Float64Array;
  readonly #windowMs: number;
  #next = 0;

  /**
   * @param perSecond - a whole number ≥ 1.
   * @param windowMs - how long a spent token stays spent; longer than 1 s leaves room for the time between
   * taking a token and the request leaving. @defaultValue {@link BUDGET_WINDOW_MS}
   */
  constructor(perSecond: number, windowMs: number = BUDGET_WINDOW_MS) {
    this.#spentAt = new Float64Array(perSecond).fill(Number.NEGATIVE_INFINITY);
    this.#windowMs = windowMs;
  }

  /** When `count` tokens are free (≤ `now` when they are free now), in the clock's milliseconds. @defaultValue count 1 */
  availableAt(now: number, count = 1): number {
    // The ring holds spending times oldest first from #next: the count-th oldest frees the count-th token.
    const index = (this.#next + Math.min(count, this.#spentAt.length) - 1) % this.#spentAt.length;
    return Math.max(now, (this.#spentAt[index] as number) + this.#windowMs);
  }

  /** How many tokens are free at `now`. */
  free(now: number): number {
    let count = 0;
    for (const spent of this.#spentAt) if (spent + this.#windowMs <= now) count++;
    return count;
  }

  /** Spends a token if one is free at `now`; false (spending nothing) otherwise. */
  take(now: number): boolean {
    if (this.availableAt(now) > now) return false;
    this.#spentAt[this.#next] = now;
    this.#next = (this.#next + 1) % this.#spentAt.length;
    return true;
  }
}
