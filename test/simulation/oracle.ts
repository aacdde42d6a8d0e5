/**
 * The oracle's own rules: every rule the invariants judge by, written from the public contract (CONTRACT.md: "Status
 * words", "One payment state machine", "Evidence for `not-sent`", "Errors"), never taken from the SDK under test. An
 * oracle that imports the rule it judges agrees with any slip in it (STYLE.md, the VOPR section): a word moved to the
 * wrong list, a window formula one attempt short, a 404 taken as evidence would change the checker with the checked.
 * `oracle.test.ts` keeps this file and invariants.ts free of imports from `src/` other than types.
 *
 * No vitest import (see scheduler.ts).
 */

/** What a status word means (CONTRACT, "Status words": the defaults; the simulated clients set no `statusWords`). */
const WORDS: { readonly [meaning in 'successful' | 'failed' | 'pending']: readonly string[] } = {
  successful: ['successful', 'success', 'completed'],
  failed: ['failed', 'cancelled', 'canceled', 'expired', 'declined'],
  pending: ['pending', 'processing'],
};

/** The meaning of `word` (compared without regard to case or surrounding blanks), or `undefined` for a word in no list. */
export function meaningOfWord(word: string): 'successful' | 'failed' | 'pending' | undefined {
  const normalized = word.trim().toLowerCase();
  for (const meaning of ['successful', 'failed', 'pending'] as const) if (WORDS[meaning].includes(normalized)) return meaning;
  return undefined;
}

/** True for a word that settles a payment. */
export function isSettledWord(word: string): boolean {
  const meaning = meaningOfWord(word);
  return meaning === 'successful' || meaning === 'failed';
}

/** CONTRACT, "One payment state machine": the wait between two attempts, at its longest (3 × 30 s + 2 × 8 s). */
const BACKOFF_MS = 8_000;

/** The attempt window of a client: its attempts, their time limits and the backoff between them. */
export function attemptWindow(settings: { readonly maxRetries: number; readonly timeoutMs: number }): number {
  return (settings.maxRetries + 1) * settings.timeoutMs + settings.maxRetries * BACKOFF_MS;
}

/** The grace a reader gives a 404 unless told (CONTRACT, "Payments that survive a crash"). */
export const DEFAULT_GRACE_MS = 10_000;

/** The states a payment may still leave. */
export function isOpenState(state: string): boolean {
  return state === 'initiating' || state === 'pending' || state === 'unknown';
}

/**
 * The window a record is judged with (CONTRACT, "Evidence for `not-sent`"): a record that carries no window (its
 * writer was the previous release) has the longest one possible, so no age ever decides it; one that carries a window
 * is judged with the true window of the client that last sent it (`senderWindowMs`, the oracle's own formula of that
 * client's settings), never with the number the SDK wrote, which a slip could have shortened.
 */
export function judgedWindow(record: { readonly sendWindowMs?: number | undefined }, senderWindowMs: number | undefined): number {
  if (!carriesWindow(record)) return Number.POSITIVE_INFINITY;
  return senderWindowMs ?? (record.sendWindowMs as number);
}

/**
 * Whether a record states a window an age can pass (CONTRACT, "A window the journal does not know is the longest one
 * possible"): a finite number of milliseconds. A record without one, and one whose window is stated as unbounded (a
 * store's upgrade writes `Infinity` into open records of the previous release; a resend of such a record keeps the
 * longest window of its writers, `Infinity`, since the previous release's push may still arrive), is never decided by
 * age: it settles by the service's answer or waits for a person.
 */
export function carriesWindow(record: { readonly sendWindowMs?: number | undefined }): boolean {
  const window = record.sendWindowMs;
  return typeof window === 'number' && Number.isFinite(window) && window >= 0;
}

/** Clocks of the processes drift by up to 0.01 %: a measure may be that much long, so bounds are shortened by twice it. */
export const DRIFT_ALLOWANCE = 1 - 2e-4;

/** The earliest true age (ms since the version's write, or since the decider's first sight of it) a verdict may come at. */
export function verdictAge(windowMs: number, graceMs: number): number {
  return (windowMs + Math.max(0, graceMs)) * DRIFT_ALLOWANCE;
}

/**
 * CONTRACT, "Evidence for `not-sent`", "Only the service's own 404 counts": a 404 is evidence only when it is the
 * service's enveloped answer from a base URL that is the service's. `lastAnswer` is the last status answer the decider
 * had (the simulated service's label: `'404'`, `'bare 404'`, a word).
 */
export function notFoundIsEvidence(lastAnswer: string | undefined, baseUrlWrong: boolean): boolean {
  return !baseUrlWrong && lastAnswer !== 'bare 404';
}

/**
 * CONTRACT, "Errors": every error the SDK throws is a `TapCollectionsError`. Judged by the class chain's names (the
 * oracle imports no class of the SDK).
 */
export function isSdkError(error: unknown): boolean {
  for (
    let proto = error === null || typeof error !== 'object' ? null : Object.getPrototypeOf(error);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  )
    if ((proto as { constructor?: { name?: string } }).constructor?.name === 'TapCollectionsError') return true;
  return false;
}
