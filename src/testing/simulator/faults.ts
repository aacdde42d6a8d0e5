/**
 * Injected faults: latency, an error status (with the service's envelope, an HTML proxy page or nothing), or a dropped
 * connection before or after the request is processed; matched by route, applied first-injected first.
 *
 * @module
 */
import type { SimulatedService } from '../fixtures.js';
import { serviceError } from './envelopes.js';
import type { SimulatorResponse } from './exchange.js';
import { matchPath, parseRoute } from './paths.js';

/** What an injected fault does. At least one of `latencyMs`, `status` or `drop` must be given. @group Faults */
export interface FaultSpec {
  /**
   * The route it applies to: `'METHOD /path'` (method `*` for any; `:name` matches one segment, a final `*` the rest),
   * a bare `'/path'` (any method), or `'*'` (every request). Paths are the documented ones, below the base URL,
   * e.g. `'POST /v1/collections/mobile-money'` or `'GET /v1/collections/check/:referenceId'`.
   */
  route: string;
  /** Limits the fault to one service. @defaultValue both */
  service?: SimulatedService | undefined;
  /** How many requests it applies to before it removes itself. @defaultValue `Infinity` */
  times?: number | undefined;
  /** Delay before anything else happens, in ms. @defaultValue 0 */
  latencyMs?: number | undefined;
  /** Answer with this status (400–599, e.g. 429, 500, 503) instead of processing the request. @defaultValue none (processed normally) */
  status?: number | undefined;
  /** The `Retry-After` header sent with `status` (seconds or an HTTP date). @defaultValue none */
  retryAfter?: string | number | undefined;
  /** Body sent with `status`: the service's JSON error envelope, an HTML proxy page, or nothing. @defaultValue `'json'` */
  body?: 'json' | 'html' | 'empty' | undefined;
  /**
   * Drop the connection without a response: `'before'` processing (nothing is stored) or `'after'`
   * (the request is processed and committed, then the answer is lost). Not combinable with `status`.
   * @defaultValue none (the connection is kept)
   */
  drop?: 'before' | 'after' | undefined;
}

/** An injected fault, as {@link Simulator.injectFault} returns it. @group Faults */
export interface InjectedFault {
  /** The spec it was created from. */
  readonly spec: Readonly<FaultSpec>;
  /** How many more requests it applies to. */
  readonly remaining: number;
  /** How many requests it has applied to. */
  readonly hits: number;
  /** Removes it; requests already delayed by it are not affected. */
  remove(): void;
}

interface FaultEntry {
  readonly spec: Readonly<FaultSpec>;
  readonly service: SimulatedService | undefined;
  readonly method: string;
  readonly pattern: string;
  remaining: number;
  hits: number;
}

/** The faults in force, in injection order. */
export class FaultInjector {
  #faults: FaultEntry[] = [];

  /**
   * Adds a fault after those already injected.
   * @throws TypeError for a spec that is malformed or does nothing.
   */
  inject(spec: FaultSpec): InjectedFault {
    const { method, pattern } = parseRoute(spec.route);
    const times = spec.times ?? Number.POSITIVE_INFINITY;
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times > 0)))
      throw new TypeError('times must be a whole number ≥ 1');
    if (spec.latencyMs !== undefined && !(Number.isFinite(spec.latencyMs) && spec.latencyMs >= 0)) {
      throw new TypeError('latencyMs must be a finite number ≥ 0');
    }
    if (spec.status !== undefined && !(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599)) {
      throw new TypeError('status must be an HTTP error status from 400 to 599');
    }
    if (spec.status !== undefined && spec.drop !== undefined) throw new TypeError('status and drop cannot be combined');
    if (spec.drop !== undefined && spec.drop !== 'before' && spec.drop !== 'after') throw new TypeError("drop must be 'before' or 'after'");
    if (spec.status === undefined && (spec.retryAfter !== undefined || spec.body !== undefined)) {
      throw new TypeError('retryAfter and body apply only with status');
    }
    if (spec.status === undefined && spec.drop === undefined && !spec.latencyMs)
      throw new TypeError('a fault needs latencyMs, status or drop');
    const entry: FaultEntry = { spec: Object.freeze({ ...spec }), service: spec.service, method, pattern, remaining: times, hits: 0 };
    this.#faults.push(entry);
    return {
      spec: entry.spec,
      get remaining() {
        return entry.remaining;
      },
      get hits() {
        return entry.hits;
      },
      remove: () => {
        this.#faults = this.#faults.filter((candidate) => candidate !== entry);
      },
    };
  }

  /** Removes every fault. */
  clear(): void {
    this.#faults = [];
  }

  /** The first fault matching the request, counted as applied (and removed when used up); `undefined` for none. */
  take(service: SimulatedService, method: string, path: string): Readonly<FaultSpec> | undefined {
    const entry = this.#faults.find(
      (fault) =>
        fault.remaining > 0 &&
        (fault.service === undefined || fault.service === service) &&
        (fault.method === '*' || fault.method === method) &&
        (fault.pattern === '*' || matchPath(fault.pattern, path) !== undefined),
    );
    if (entry === undefined) return undefined;
    entry.remaining--;
    entry.hits++;
    if (entry.remaining <= 0) this.#faults = this.#faults.filter((candidate) => candidate !== entry);
    return entry.spec;
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const FAULT_TAP_IDENTIFIERS: Record<number, string> = {
  429: 'rate-limit/exceeded-error',
  500: 'server/internal-error',
  502: 'server/bad-gateway-error',
  503: 'server/unavailable-error',
  504: 'server/gateway-timeout-error',
};

const FAULT_COLLECTIONS_CODES: Record<number, string> = {
  429: 'E_RATE_LIMIT_EXCEEDED',
  500: 'E_INTERNAL_SERVER_ERROR',
  502: 'E_BAD_GATEWAY',
  503: 'E_SERVICE_UNAVAILABLE',
  504: 'E_GATEWAY_TIMEOUT',
};

/** The response of a fault with a `status`. */
export function faultResponse(service: SimulatedService, fault: Readonly<FaultSpec>, requestId: string, path: string): SimulatorResponse {
  const status = fault.status ?? 500;
  const text = STATUS_TEXT[status] ?? 'Error';
  const extra: Record<string, string> = fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) };
  const kind = fault.body ?? 'json';
  if (kind === 'empty') return { status, headers: { 'x-request-id': requestId, ...extra }, body: '' };
  if (kind === 'html') {
    return {
      status,
      headers: { 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId, ...extra },
      body: `<!DOCTYPE html>\n<html><head><title>${status} ${text}</title></head><body><center><h1>${status} ${text}</h1></center><hr><center>simulated proxy</center></body></html>\n`,
    };
  }
  const message = `${text} (simulated fault on ${path})`;
  const codes = {
    tap: FAULT_TAP_IDENTIFIERS[status] ?? (status >= 500 ? 'server/error' : 'request/error'),
    collections: FAULT_COLLECTIONS_CODES[status] ?? (status >= 500 ? 'E_SERVER_ERROR' : 'E_REQUEST_ERROR'),
  };
  const response = serviceError(service, status, codes, message, requestId);
  return { ...response, headers: { ...response.headers, ...extra } };
}

/** Resolves `true` after `ms` (an injected latency), or `false` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
