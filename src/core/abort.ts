/**
 * An abort controller that follows a parent signal. Used instead of `AbortSignal.any`, whose composite
 * signals stay registered with their sources: with one per attempt and per poll, thousands of pending
 * polls would keep thousands of them alive.
 *
 * @module
 */

/** A controller that aborts (with the parent's reason) when `parent` does; `release()` detaches it. */
export function followingController(parent: AbortSignal | undefined): { controller: AbortController; release: () => void } {
  const controller = new AbortController();
  if (!parent) return { controller, release: noop };
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, release: noop };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, release: () => parent.removeEventListener('abort', onAbort) };
}

function noop(): void {}
