/**
 * The service's request id (`x-request-id`) of the response a parsed answer came from, kept beside the answer
 * rather than in it: a status or a 202 the caller receives keeps its documented shape, while whatever records
 * the answer in the journal (a status check, a poll, the worker, `recover()`, the create) finds the id that
 * support quotes.
 *
 * @module
 */

const requestIds = new WeakMap<object, string>();

/** Remembers that `answer` was parsed from a response with `requestId`; returns `answer`. */
export function withRequestId<T extends object>(answer: T, requestId: string | undefined): T {
  if (requestId !== undefined && requestId !== '') requestIds.set(answer, requestId);
  return answer;
}

/** The request id of the response `answer` was parsed from, if it had one. */
export function requestIdOf(answer: object): string | undefined {
  return requestIds.get(answer);
}
