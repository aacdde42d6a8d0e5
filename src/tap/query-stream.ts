/**
 * The Tap list (`GET /v1/tap/partners/customer-queries`) read as it streams in: the list is unpaginated
 * and holds every query the partner ever made, so it is never held whole here. Items come one at a time,
 * unvalidated (a reconcile checks each row on its own; the iterator validates each with the schema).
 *
 * @module
 */
import { BodyTooLargeError } from '../core/body.js';
import { ResponseValidationError } from '../core/errors.js';
import { JsonListError, JsonListScanner } from '../core/json-stream.js';
import { monotonicNow } from '../core/monotonic.js';
import type { HttpResult } from '../core/transport.js';
import { toValidationIssues } from '../core/validation.js';
import { type CustomerQuery, CustomerQuerySchema } from './schemas.js';

/** The longest single query read, in characters (a query is about 700): only the current one is held. */
export const MAX_QUERY_CHARS = 1024 * 1024;

/** One item of the list, unvalidated. */
export interface ListItem {
  /** Its position, from 0. */
  readonly index: number;
  /** Its path in the body as sent: `data.<index>`, or `<index>` for a bare array. */
  readonly path: string;
  readonly value: unknown;
}

/**
 * The items of a streamed list response, one at a time; the body is cancelled when the caller stops
 * early (a `return` or `break` out of `for await`) or on any error.
 * @throws {@link ResponseValidationError} when the body is not a list of a known shape, an item is not
 * JSON or longer than {@link MAX_QUERY_CHARS}, or the body is longer than its stream's limit (`maxListBytes`).
 */
export async function* listItems(result: HttpResult, skip?: (itemText: string) => boolean): AsyncGenerator<ListItem, void, undefined> {
  const stream = result.stream;
  const fail = (path: string, message: string) =>
    new ResponseValidationError({
      issues: [{ path, message }],
      body: undefined,
      service: 'tap',
      status: result.status,
      requestId: result.requestId,
    });
  if (stream === undefined) throw fail('', 'the body is empty');
  const scanner = new JsonListScanner(MAX_QUERY_CHARS);
  const decoder = new TextDecoder();
  const pathOf = (index: number) => (scanner.inObject ? `data.${index}` : String(index));
  // Each item must arrive within `timeoutMs` of waiting for it (the reads' time, never the caller's between
  // items): a body trickled a byte at a time ends even when every single read makes progress.
  const itemLimitMs = stream.timeoutMs;
  let waitedMs = 0;
  try {
    for (;;) {
      let item: ReturnType<JsonListScanner['next']>;
      try {
        item = scanner.next(skip);
      } catch (error) {
        if (!(error instanceof JsonListError)) throw error;
        throw fail(error.index === undefined ? (error.message.startsWith('data ') ? 'data' : '') : pathOf(error.index), error.message);
      }
      if (item === null) return;
      if (item !== undefined) {
        waitedMs = 0;
        yield { index: item.index, path: pathOf(item.index), value: item.value };
        continue;
      }
      let chunk: Uint8Array | undefined;
      const readStarted = monotonicNow();
      try {
        chunk = await stream.read(itemLimitMs - waitedMs);
      } catch (error) {
        if (error instanceof BodyTooLargeError) throw fail('', `the list is longer than maxListBytes (${error.limit} bytes)`);
        throw error;
      }
      waitedMs += monotonicNow() - readStarted;
      if (chunk !== undefined) {
        scanner.feed(decoder.decode(chunk, { stream: true }));
        continue;
      }
      const rest = decoder.decode();
      if (rest !== '') scanner.feed(rest);
      else throw fail('', stream.received === 0 ? 'the body is empty' : 'the body ends before the list does');
    }
  } finally {
    await stream.close();
  }
}

/**
 * A filter for {@link listItems} that passes over, unparsed, the items whose text cannot hold any of `ids` as a
 * string: it contains none of them and no `\u` escape (the only other way JSON can spell their characters).
 * Most of a long history is skipped so, without allocating its objects. `undefined` (no filter) when an id has a
 * character JSON may also escape in short form (`"`, `\`, `/`, a control character).
 */
export function unlessMentions(ids: readonly string[]): ((itemText: string) => boolean) | undefined {
  const escapable = (id: string) => [...id].some((char) => char === '"' || char === '\\' || char === '/' || char.charCodeAt(0) < 0x20);
  if (ids.some(escapable)) return undefined;
  return (itemText) => !itemText.includes('\\u') && ids.every((id) => !itemText.includes(id));
}

/**
 * Validates one item as a {@link CustomerQuery}.
 * @throws {@link ResponseValidationError} naming the item and field; `body` holds the item, scrubbed of the key.
 */
export function toCustomerQuery(item: ListItem, result: HttpResult): CustomerQuery {
  const parsed = CustomerQuerySchema.safeParse(item.value, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new ResponseValidationError({
    issues: toValidationIssues(parsed.error.issues, item.path),
    body: result.scrub(item.value),
    service: 'tap',
    status: result.status,
    requestId: result.requestId,
  });
}
