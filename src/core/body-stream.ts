/**
 * A 2xx body handed to the caller as a stream, for lists too long to hold whole. The attempt's timeout
 * keeps covering it: each read must make progress within `timeoutMs` (a stalled stream fails with the
 * attempt's {@link TimeoutError}), and the caller's abort cancels it. A stream of more than `maxBytes`
 * fails with {@link BodyTooLargeError}, so an endless body cannot keep a reader busy forever.
 *
 * Progress per read is not enough against a body that trickles (a byte every `timeoutMs - 1` ms keeps every
 * read alive): a stream read inside one attempt may also have a `deadline` (the whole body by then), and a
 * reader may give each read a budget of its own (see `read`), so every wait has an end.
 *
 * @module
 */
import { BodyTooLargeError } from './body.js';
import { monotonicNow } from './monotonic.js';

/** What a {@link BodyStream} needs of the attempt that opened it. */
export interface BodyStreamAttempt {
  /** The attempt's controller: aborted by the caller's signal, or here when a read stalls. */
  readonly controller: AbortController;
  /** The stall limit of one read, in milliseconds. */
  readonly timeoutMs: number;
  /** The most bytes the stream may carry. */
  readonly maxBytes: number;
  /** Detaches the attempt from the caller's signal, once the stream ends. */
  readonly release: () => void;
  /** Turns a failed read into the SDK's error (the caller's abort reason, a timeout, a connection failure). */
  readonly mapError: (error: unknown) => unknown;
  /** When the whole body must have arrived (`monotonicNow()` ms), if the attempt's time limit covers the body too. */
  readonly deadline?: number | undefined;
}

/** A response body read chunk by chunk; {@link BodyStream.close} cancels what was not read. */
export class BodyStream {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  readonly #attempt: BodyStreamAttempt;
  readonly #onAbort: () => void;
  #closed = false;
  /** Bytes read so far. */
  received = 0;

  constructor(body: ReadableStream<Uint8Array> | null, attempt: BodyStreamAttempt) {
    this.#attempt = attempt;
    this.#reader = body?.getReader();
    // The fetch's own signal does not always reach a body already being read (see readBodyText): cancel here.
    this.#onAbort = () => void this.#reader?.cancel(attempt.controller.signal.reason).catch(() => undefined);
    attempt.controller.signal.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The stall limit of one read (the attempt's `timeoutMs`). */
  get timeoutMs(): number {
    return this.#attempt.timeoutMs;
  }

  /**
   * The next chunk, or `undefined` at the end of the body. The read ends within the least of `timeoutMs`, the
   * stream's `deadline` and `budgetMs` (what the reader allows this read).
   * @throws the caller's abort reason, {@link TimeoutError} when no byte came within that time, a
   * {@link ConnectionError}, or {@link BodyTooLargeError}. The stream is closed after any of them.
   */
  async read(budgetMs = Number.POSITIVE_INFINITY): Promise<Uint8Array | undefined> {
    const reader = this.#reader;
    if (this.#closed || reader === undefined) return undefined;
    const { controller, timeoutMs, deadline } = this.#attempt;
    const limitMs = Math.max(0, Math.min(timeoutMs, budgetMs, deadline === undefined ? timeoutMs : deadline - monotonicNow()));
    const timer = setTimeout(() => controller.abort(), limitMs);
    try {
      controller.signal.throwIfAborted();
      const { done, value } = await reader.read();
      controller.signal.throwIfAborted();
      if (done) {
        await this.close();
        return undefined;
      }
      this.received += value.byteLength;
      if (this.received > this.#attempt.maxBytes) throw new BodyTooLargeError(this.#attempt.maxBytes);
      return value;
    } catch (error) {
      await this.close();
      throw error instanceof BodyTooLargeError ? error : this.#attempt.mapError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops reading: cancels the rest of the body (which closes its connection) and detaches from the caller's signal. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#attempt.controller.signal.removeEventListener('abort', this.#onAbort);
    this.#attempt.release();
    await this.#reader?.cancel().catch(() => undefined);
  }
}
