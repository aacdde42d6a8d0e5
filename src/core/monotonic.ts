/**
 * This process's monotonic clock, for every deadline and wait the SDK computes: a step of the wall clock (NTP, a
 * suspended VM set right, an operator) must never lengthen an attempt past the window its journal record states, nor
 * cut a wait short. Readings are milliseconds from an arbitrary origin: compare them only with each other, in one
 * process, never with `Date.now()` or a journal's clock.
 *
 * @module
 */

/** Milliseconds on this process's monotonic clock (`performance.now()`). */
export function monotonicNow(): number {
  return performance.now();
}
