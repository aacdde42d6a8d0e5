/**
 * Bounding a wait the SDK does not control (a caller's async key function, a journal's answer): it ends at the
 * signal's abort or at a time limit, whichever comes first, and leaves no timer or listener behind.
 *
 * @module
 */

/**
 * Resolves or rejects as `promise` does, unless `signal` aborts first (rejects with its reason) or `limitMs`
 * passes first (rejects with `onLimit()`). `promise` is left to settle on its own; its rejection is handled.
 *
 * @param keepsAlive - whether the time limit's timer keeps a Node.js process alive (`false` for background work, such
 *   as a budget renewal, that must not hold a process open by itself). @defaultValue true
 */
export function boundedWait<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  limitMs: number,
  onLimit: () => unknown,
  keepsAlive = true,
): Promise<T> {
  promise.catch(() => undefined);
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(signal?.reason);
    };
    const timer = setTimeout(
      () => {
        finish();
        reject(onLimit());
      },
      Math.max(0, limitMs),
    );
    const handle = timer as { unref?: () => void };
    if (!keepsAlive && typeof handle.unref === 'function') handle.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        finish();
        resolve(value);
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
  });
}
