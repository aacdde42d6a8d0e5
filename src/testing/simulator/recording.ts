/**
 * The record of what the simulator received, with API keys redacted from headers and from bodies, and the
 * `onRequest` listener told once per request when its outcome is known.
 *
 * @module
 */
import type { SimulatedService } from '../fixtures.js';
import { presentedApiKey } from './auth.js';
import type { SimulatorOutcome, SimulatorRequest, SimulatorResponse } from './exchange.js';

const REDACTED = '[REDACTED]';
const SECRET_HEADERS = new Set(['x-api-key', 'authorization', 'proxy-authorization', 'cookie']);

/** What the simulator received, as {@link Simulator.requests} lists it. API keys never appear in it. @group Simulator */
export interface ReceivedRequest {
  /** The request id the simulator answered with (`x-request-id`, and `requestId` in Collections bodies). */
  readonly requestId: string;
  /** The service addressed. */
  readonly service: SimulatedService;
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path below the base URL, without the query string. */
  readonly path: string;
  /** The query string with its `?`, or `''`. */
  readonly query: string;
  /** Headers, names in lower case; `x-api-key`, `authorization`, `proxy-authorization` and `cookie` redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body parsed as JSON, the raw text when it is not JSON, `undefined` when empty or too large. */
  readonly body: unknown;
  /** When it arrived, by the simulator's clock (ISO 8601). */
  readonly receivedAt: string;
  /** The partner the presented key belongs to, if the key is known (whatever its state). */
  readonly partnerId: string | undefined;
  /** The status answered, `'dropped'` for a dropped connection, `undefined` while still in progress. */
  readonly outcome: number | 'dropped' | undefined;
  /** Whether an injected fault applied to it. */
  readonly faulted: boolean;
}

/** A {@link ReceivedRequest} while its request is in progress. */
export type RecordedRequest = { -readonly [K in keyof ReceivedRequest]: ReceivedRequest[K] };

/** The requests received, oldest first. */
export class RequestLog {
  readonly #now: () => number;
  readonly #partnerIdOf: (key: string | undefined) => string | undefined;
  readonly #onRequest: ((request: ReceivedRequest) => void) | undefined;
  #entries: RecordedRequest[] = [];

  constructor(
    now: () => number,
    partnerIdOf: (key: string | undefined) => string | undefined,
    onRequest: ((request: ReceivedRequest) => void) | undefined,
  ) {
    this.#now = now;
    this.#partnerIdOf = partnerIdOf;
    this.#onRequest = onRequest;
  }

  /** Records a request as it arrives; its outcome is set by {@link RequestLog.drop} or {@link RequestLog.respond}. */
  record(request: SimulatorRequest, requestId: string, path: string, query: string): RecordedRequest {
    const presentedKey = presentedApiKey(request.service, request.headers);
    const entry: RecordedRequest = {
      requestId,
      service: request.service,
      method: request.method.toUpperCase(),
      path,
      query,
      headers: redactHeaders(request.headers),
      body: request.bodyTooLarge ? undefined : parseRecordedBody(request.body, presentedKey),
      receivedAt: new Date(this.#now()).toISOString(),
      partnerId: this.#partnerIdOf(presentedKey),
      outcome: undefined,
      faulted: false,
    };
    this.#entries.push(entry);
    return entry;
  }

  /** Marks the request dropped and tells the listener. */
  drop(entry: RecordedRequest): SimulatorOutcome {
    entry.outcome = 'dropped';
    this.#notify(entry);
    return { kind: 'drop' };
  }

  /** Marks the request answered with `response` and tells the listener. */
  respond(entry: RecordedRequest, response: SimulatorResponse): SimulatorOutcome {
    entry.outcome = response.status;
    this.#notify(entry);
    return { kind: 'respond', response };
  }

  /** Copies of every entry, oldest first. */
  get entries(): ReceivedRequest[] {
    return this.#entries.map((entry) => structuredClone(entry));
  }

  /** Forgets every entry. */
  clear(): void {
    this.#entries = [];
  }

  #notify(entry: RecordedRequest): void {
    try {
      this.#onRequest?.(structuredClone(entry));
    } catch {
      // A listener's bug must not change what the client receives.
    }
  }
}

function redactHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!SECRET_HEADERS.has(lower)) redacted[lower] = value;
    else if (lower === 'authorization' || lower === 'proxy-authorization') {
      const scheme = /^(\S+)\s+\S/.exec(value)?.[1];
      redacted[lower] = scheme ? `${scheme} ${REDACTED}` : REDACTED;
    } else redacted[lower] = REDACTED;
  }
  return redacted;
}

function parseRecordedBody(body: string | undefined, key: string | undefined): unknown {
  if (body === undefined || body === '') return undefined;
  // A key pasted into a body by mistake must not survive into what tests print.
  const text = key !== undefined && key.length >= 8 ? body.split(key).join(REDACTED) : body;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
