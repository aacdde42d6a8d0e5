/**
 * What a face (msw handlers, loopback server) and the simulator hand each other: a transport-free request in, an
 * outcome out; and the route table shape each simulated service declares.
 *
 * @module
 */
import type { SimulatedService } from '../fixtures.js';

/** Request bodies above this many bytes are refused with 413 (1 MiB). @group Simulator */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024;

/** One request as a face hands it to the simulator. @group Simulator */
export interface SimulatorRequest {
  /** Which service the request was addressed to (decided by the face from the base URL). */
  readonly service: SimulatedService;
  /** HTTP method, any case. */
  readonly method: string;
  /** The path below the service's base URL, starting with `/`, query string included (e.g. `/v1/collections/check/…`). */
  readonly path: string;
  /** Request headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as text; `undefined` or `''` when there is none. */
  readonly body?: string | undefined;
  /** Set by a face that stopped reading a body larger than {@link MAX_REQUEST_BODY_BYTES}; answered 413. */
  readonly bodyTooLarge?: boolean | undefined;
  /** Aborted when the client or the face goes away; cuts injected latency short. */
  readonly signal?: AbortSignal | undefined;
}

/** An HTTP response for a face to send. @group Simulator */
export interface SimulatorResponse {
  /** HTTP status. */
  readonly status: number;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body text; `''` for none. */
  readonly body: string;
}

/** What a face must do with a request: send a response, or drop the connection without one. @group Simulator */
export type SimulatorOutcome =
  | {
      /** Send `response`. */
      readonly kind: 'respond';
      /** What to send. */
      readonly response: SimulatorResponse;
    }
  | {
      /** Destroy the connection (loopback) or answer `HttpResponse.error()` (msw). */
      readonly kind: 'drop';
    };

/** A request matched to a route: what a service's handler receives. */
export interface RouteContext {
  /** The request as the face handed it over. */
  readonly request: SimulatorRequest;
  /** The id answered as `x-request-id`. */
  readonly requestId: string;
  /** The path without its query string. */
  readonly path: string;
  /** The `:name` segments of the route's pattern, decoded. */
  readonly params: Readonly<Record<string, string>>;
}

/** One endpoint of a simulated service. */
export interface Route {
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path pattern (see `matchPath`). */
  readonly pattern: string;
  /** Answers a request that matched `method` and `pattern`. */
  readonly handle: (context: RouteContext) => SimulatorResponse;
}

/** Parses a JSON request body; an empty body parses as `undefined`. */
export function parseJsonBody(body: string | undefined): { ok: true; value: unknown } | { ok: false } {
  if (body === undefined || body.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}
