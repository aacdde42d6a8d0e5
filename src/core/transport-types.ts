/**
 * The transport's vocabulary: how a key becomes a header, what a service brings, what a request and its result
 * are, a call's settings and the shared budget a client may give it. Re-exported by `transport.ts`.
 *
 * @module
 */
import type { BodyStream } from './body-stream.js';
import type { RequestOptions } from './config.js';
import type { ErrorEnvelopeReader } from './error-mapper.js';
import type { ServiceName } from './errors.js';

/** Turns the API key into the service's authentication header. */
export type AuthStrategy = (apiKey: string) => readonly [name: string, value: string];

/** `x-api-key: <key>` (the Tap API). */
export const apiKeyHeaderAuth: AuthStrategy = (apiKey) => ['x-api-key', apiKey];
/** `Authorization: Bearer <key>` (the Collections API). */
export const bearerAuth: AuthStrategy = (apiKey) => ['authorization', `Bearer ${apiKey}`];

/** What the transport needs to know of a service. */
export interface ServiceProfile {
  readonly service: ServiceName;
  readonly auth: AuthStrategy;
  readonly readErrorEnvelope: ErrorEnvelopeReader;
}

/** The methods a raw request may use. @group Clients */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request, as a client describes it. `path` must already be encoded (a query string included). */
export interface RequestSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly body?: unknown;
  readonly options?: RequestOptions | undefined;
  /**
   * Hand a 2xx body over as a {@link BodyStream} of at most `maxBytes` (not `maxResponseBytes`: only what the
   * caller holds is bounded by memory) instead of reading it whole. Error answers are read and mapped as usual.
   * With `wholeWithinAttempt`, the attempt's time limit (`timeoutMs`, or the deadline) covers the whole body as
   * it covers any other attempt: the read inside one call (a create's reconcile, `verify()`) ends by then.
   */
  readonly stream?: { readonly maxBytes: number; readonly wholeWithinAttempt?: boolean } | undefined;
  /** The path's route template for tracing (`/v1/collections/check/{referenceId}`); never the path itself. */
  readonly route?: string;
  /** The payment the request is about, for tracing (a create, a status check). */
  readonly referenceId?: string;
}

/** A 2xx response: its body parsed when it was JSON. */
export interface HttpResult {
  readonly status: number;
  readonly body: unknown;
  readonly isJson: boolean;
  /** The `x-request-id` header, scrubbed of the key. */
  readonly requestId: string | undefined;
  /** The response headers, as the service sent them (internal: never put in an error). */
  readonly headers: Headers;
  /** Scrubs the key from a value before an error keeps it (the body itself is returned as sent). */
  readonly scrub: (value: unknown) => unknown;
  /** The unread body, for a request with `stream` (then `body` is `undefined`). The caller must read it to its end or close it. */
  readonly stream?: BodyStream;
}

/** The per-call settings, after the call's options were checked and merged over the client's. */
export interface CallSettings {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** This call's extra headers (the client's are in every request already). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /**
   * When the whole call must end (`monotonicNow()` ms; a poll's `maxWaitMs`): the waits before a request
   * (the key function, the concurrency queue) end there too, with {@link TimeoutError}.
   */
  readonly deadline?: number | undefined;
  /** What the instrumentation's `operation` hook gave the call (its span), handed to each attempt's hook. */
  readonly operation?: unknown;
  /**
   * Awaited right before the request leaves, after the concurrency slot and the key function (the settlement
   * worker takes its budget's token here, where the request is actually sent).
   */
  readonly beforeSend?: ((shared?: () => Promise<void>) => Promise<void>) | undefined;
}

/**
 * One API key's shared rate budget in this process (`requestsPerSecond` on a client with a journal): the transport
 * takes a token right before a request leaves and reports each answer's status.
 */
export interface SharedBudget {
  /** Resolves when the request may leave; creates (`'create'`) go first. Ends at the abort and at `deadline`. */
  take(lane: 'create' | 'other', signal: AbortSignal | undefined, deadline: number | undefined): Promise<void>;
  /** The status the service answered to a request that took a token. */
  observe(status: number): void;
}

/** Where the transport finds a key's {@link SharedBudget}; `undefined` for a key with none (today's behaviour). */
export interface SharedBudgets {
  budgetFor(apiKey: string): SharedBudget | undefined | Promise<SharedBudget | undefined>;
}
