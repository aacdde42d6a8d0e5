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
  const decoder = new TextDecoder();
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
        text += decoder.decode(value.subarray(0, value.byteLength - (received - limit)));
        break;
      }
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return text + decoder.decode();
}

/** Parses JSON text; `undefined` for an empty body, the text itself (with `isJson: false`) when it is not JSON. */
export function parseBodyText(text: string): { body: unknown; isJson: boolean } {
  if (text.trim() === '') return { body: undefined, isJson: false };
  try {
    return { body: JSON.parse(text), isJson: true };
  } catch {
    return { body: text, isJson: false };
  }
}
