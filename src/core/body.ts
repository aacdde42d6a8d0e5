/**
 * Reading response bodies with a size bound, so a misbehaving proxy cannot exhaust memory.
 *
 * @module
 */

/** A body read that stopped at the byte limit. */
export class BodyTooLargeError extends Error {
  /** The byte limit that was exceeded. */
  readonly limit: number;

  // A plain field, not a parameter property: the sources must also run under Node's type stripping.
  constructor(limit: number) {
    super(`response body exceeds ${limit} bytes`);
    this.limit = limit;
  }
}

/**
 * Reads the whole body as UTF-8 text, refusing more than `limit` bytes (`truncate: true` keeps the
 * first `limit` bytes instead, for error bodies where only the start matters). Rejects with the
 * reason of `signal` as soon as it aborts.
 */
export async function readBodyText(response: Response, limit: number, truncate = false, signal?: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (!truncate && Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(limit);
  }
  if (!response.body) return '';
  signal?.throwIfAborted();
  const reader = response.body.getReader();
  // The fetch's own signal does not always reach a body already being read (undici loses it once the
  // Request is garbage collected): cancel the read here, so a timeout or an abort cuts a stalled body.
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', onAbort, { once: true });
  // Most bodies arrive in one chunk: it is decoded whole by the shared decoder, and a decoder of this read's own
  // (which keeps a character split across chunks) is made only when a second chunk comes.
  let first: Uint8Array | undefined;
  let decoder: TextDecoder | undefined;
  let text = '';
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) break;
      received += value.byteLength;
      if (received > limit) {
        await reader.cancel().catch(() => undefined);
        if (!truncate) throw new BodyTooLargeError(limit);
        decoder ??= new TextDecoder();
        if (first !== undefined) text = decoder.decode(first, { stream: true });
        text += decoder.decode(value.subarray(0, value.byteLength - (received - limit)));
        return text;
      }
      if (decoder === undefined && first === undefined) {
        first = value;
        continue;
      }
      if (decoder === undefined) {
        decoder = new TextDecoder();
        text = decoder.decode(first, { stream: true });
        first = undefined;
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (decoder !== undefined) return text + decoder.decode();
  return first === undefined ? '' : WHOLE.decode(first);
}

/** Decodes a body read in one chunk (a call without `stream` keeps no state between calls, so one is shared). */
const WHOLE = new TextDecoder();

/** Parses JSON text; `undefined` for an empty body, the text itself (with `isJson: false`) when it is not JSON. */
export function parseBodyText(text: string): { body: unknown; isJson: boolean } {
  if (text.trim() === '') return { body: undefined, isJson: false };
  try {
    return { body: JSON.parse(text), isJson: true };
  } catch {
    return { body: text, isJson: false };
  }
}
