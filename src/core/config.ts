/**
 * Client options, shared by both clients, and their validation. Everything is checked once, at
 * construction, so a misconfigured client fails before it can send anything.
 *
 * @module
 */
import { isBlockedPort } from './connection-failure.js';
import { isBrowserPage, readEnv } from './env.js';
import { ConfigurationError, type ServiceName, type ValidationIssue } from './errors.js';
import { headerIssues, headerValueProblem } from './headers.js';
import type { Instrumentation } from './instrumentation.js';
import { LOG_LEVELS, type Logger, type LogLevel } from './logger.js';
import { MIN_API_KEY_LENGTH } from './redact.js';

/** One HTTP response received, as the `onResponse` option sees it: never the key, never a body. @group Configuration */
export interface ResponseEvent {
  /** The service that answered. */
  readonly service: ServiceName;
  /** The request's method. */
  readonly method: string;
  /** The request's path under the base URL, without its query string. */
  readonly path: string;
  /** The HTTP status (a redirect the SDK follows is a response too). */
  readonly status: number;
  /** The `x-request-id` response header, scrubbed of the key. */
  readonly requestId: string | undefined;
  /** From sending the request to receiving the response headers, in milliseconds. */
  readonly durationMs: number;
  /** Which attempt of the call this response answers, counting from 1. */
  readonly attempt: number;
}

/** The API key, or a function returning it (sync or async), called before every attempt so keys can rotate. @group Configuration */
export type ApiKeySource = string | (() => string | Promise<string>);

/** A `fetch` implementation: the global one, undici's, or a test double. @group Configuration */
export type FetchFunction = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** Options shared by {@link TapClient} and {@link CollectionsClient}. All are optional where an environment supplies them. @group Configuration */
export interface ClientOptions {
  /**
   * The API key, or a function returning it (sync or async), called before every attempt so keys can
   * rotate. Never logged, never put in an error. At least 8 characters (a shorter one could not be
   * scrubbed from error text without corrupting it); a key function's call is bounded by `timeoutMs`.
   * @defaultValue the `TAP_API_KEY` / `COLLECTIONS_API_KEY` environment variable; none → {@link ConfigurationError}
   */
  apiKey?: ApiKeySource | undefined;
  /**
   * The service root, e.g. the sandbox's. `https:` is required, except for loopback hosts
   * (`localhost`, `127.0.0.0/8`, `[::1]`) used in tests.
   * @defaultValue the `TAP_BASE_URL` / `COLLECTIONS_BASE_URL` environment variable; none → {@link ConfigurationError}
   */
  baseUrl?: string | undefined;
  /**
   * The limit for one attempt, in milliseconds, from sending to the last byte of the body.
   * @defaultValue 30000
   */
  timeoutMs?: number | undefined;
  /**
   * Retries after the first attempt for transient failures (connection errors, timeouts, 408, 429,
   * 500, 502, 503, 504). Creates reconcile before resending (see the reliability guide).
   * @defaultValue 2
   */
  maxRetries?: number | undefined;
  /**
   * The longest `Retry-After` the SDK will wait out, in milliseconds. A longer one fails at once with
   * {@link RateLimitError} (`retryAfterMs` says how long the service asked for).
   * @defaultValue 60000
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * The most requests this client has in flight at once; further requests queue (a queued request has
   * not been sent; the caller's abort and a poll's `maxWaitMs` end its wait). Protects the service (and
   * your rate limit) from a fleet of pollers, and bounds the sockets and memory of thousands of pending
   * polls (see docs/guide/reliability.md). `Infinity` removes the limit.
   * @defaultValue 64
   */
  maxConcurrentRequests?: number | undefined;
  /**
   * The largest response body the SDK reads, in bytes; a larger one is refused (a broken proxy
   * cannot exhaust memory).
   * @defaultValue 33554432 (32 MiB)
   */
  maxResponseBytes?: number | undefined;
  /**
   * A `fetch` implementation to use instead of the global one.
   * @defaultValue `globalThis.fetch`
   */
  fetch?: FetchFunction | undefined;
  /**
   * Where log lines go. Lines are redacted: no key, phone numbers masked, names left out.
   * @defaultValue `console`
   */
  logger?: Logger | undefined;
  /**
   * How much to log.
   * @defaultValue `'warn'`
   */
  logLevel?: LogLevel | undefined;
  /**
   * Extra headers sent on every request. The authentication header cannot be overridden.
   * @defaultValue none
   */
  headers?: Record<string, string> | undefined;
  /**
   * Allow construction in a browser page. The API key would be visible to anyone using the page:
   * only for trusted internal tools.
   * @defaultValue `false` (constructing in a browser throws {@link ConfigurationError})
   */
  dangerouslyAllowBrowser?: boolean | undefined;
  /**
   * Called once for every HTTP response received (every attempt, errors and followed redirects included),
   * for metrics and tracing. It never sees the key or a body; an exception it throws is logged and ignored.
   * @defaultValue none
   */
  onResponse?: ((event: ResponseEvent) => void) | undefined;
  /**
   * Tracing and metrics hooks: `openTelemetry()` of `tap-collections-sdk/otel` gives a span to every call and every
   * HTTP attempt, and metrics to settlement workers (docs/guide/operating.md). They never see the key, a body or a full
   * phone number.
   * @defaultValue none (nothing is traced; no tracing library is loaded)
   */
  instrumentation?: Instrumentation | undefined;
}

/** Options of one call; they override the client's for that call. @group Configuration */
export interface RequestOptions {
  /** Cancels the call: it rejects promptly with the signal's reason, also between retries. @defaultValue none */
  signal?: AbortSignal | undefined;
  /** The limit for one attempt, in milliseconds. @defaultValue the client's `timeoutMs` */
  timeoutMs?: number | undefined;
  /** Retries after the first attempt. @defaultValue the client's `maxRetries` */
  maxRetries?: number | undefined;
  /** Extra headers for this call, on top of the client's. @defaultValue none */
  headers?: Record<string, string> | undefined;
}

/** The environment variable names and labels of one service. */
export interface ServiceEnvironment {
  readonly apiKeyVariable: string;
  readonly baseUrlVariable: string;
  readonly clientName: string;
}

/** Options after validation, with every default applied. */
export interface ResolvedConfig {
  readonly apiKey: ApiKeySource;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryAfterMs: number;
  readonly maxConcurrentRequests: number;
  readonly maxResponseBytes: number;
  readonly fetch: FetchFunction;
  readonly logger: Logger;
  readonly logLevel: LogLevel;
  readonly headers: Readonly<Record<string, string>>;
  readonly onResponse: ((event: ResponseEvent) => void) | undefined;
  readonly instrumentation: Instrumentation | undefined;
}

/** Defaults of the shared options. */
export const DEFAULTS = {
  timeoutMs: 30_000,
  maxRetries: 2,
  maxRetryAfterMs: 60_000,
  maxConcurrentRequests: 64,
  maxResponseBytes: 32 * 1024 * 1024,
  logLevel: 'warn',
} as const;

/** The longest timer `setTimeout` honours; longer values fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname.endsWith('.localhost');
}

/** Checks a base URL; returns it without a trailing slash, or the reason it is refused. */
export function normalizeBaseUrl(value: string): { url: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not an absolute URL' };
  }
  if (url.username || url.password) return { problem: 'must not contain credentials' };
  if (url.search || url.hash) return { problem: 'must not contain a query or fragment' };
  // The value's own fault, named: `htp://` is a misspelt scheme, not a request for plain HTTP.
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `${url.protocol} is not a scheme (use https:)` };
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return { problem: `http: is allowed only for loopback hosts, and ${url.hostname} is not one (use https:)` };
  }
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (isBlockedPort(port)) return { problem: `uses port ${port}, which fetch refuses to connect to (Node.js, Deno and browsers block it)` };
  return { url: url.href.replace(/\/+$/, '') };
}

/** True for a whole number of milliseconds in `[min, MAX_TIMER_MS]`. */
export function isTimerMs(value: unknown, min = 1): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= MAX_TIMER_MS;
}

/** True for a retry count from 0 to 10. */
export function isRetryCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 10;
}

function isLogger(value: unknown): value is Logger {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  return (['debug', 'info', 'warn', 'error'] as const).every((method) => typeof candidate[method] === 'function');
}

/**
 * Validates client options and applies defaults and environment variables.
 * @throws {@link ConfigurationError} naming every bad option (never echoing the key).
 */
export function resolveConfig(options: ClientOptions | undefined, service: ServiceEnvironment): ResolvedConfig {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new ConfigurationError(`${service.clientName} options must be an object`);
  }
  const given = options ?? {};
  const issues: ValidationIssue[] = [];
  const fail = (path: string, message: string) => issues.push({ path, message });

  if (isBrowserPage() && given.dangerouslyAllowBrowser !== true) {
    throw new ConfigurationError(
      `${service.clientName} refuses to run in a browser page, where the API key would be visible to anyone. ` +
        'Call the API from your server, or pass dangerouslyAllowBrowser: true for a trusted internal tool.',
    );
  }

  const apiKey = given.apiKey ?? readEnv(service.apiKeyVariable);
  if (apiKey === undefined) fail('apiKey', `is missing: pass apiKey or set ${service.apiKeyVariable}`);
  else if (typeof apiKey === 'string') {
    if (apiKey.trim() === '') fail('apiKey', 'must not be empty');
    else if (apiKey.length < MIN_API_KEY_LENGTH) fail('apiKey', `must be at least ${MIN_API_KEY_LENGTH} characters long`);
    else {
      const problem = headerValueProblem(apiKey);
      if (problem !== undefined) fail('apiKey', problem);
    }
  } else if (typeof apiKey !== 'function') fail('apiKey', 'must be a string or a function returning one');

  const rawBaseUrl = given.baseUrl ?? readEnv(service.baseUrlVariable);
  let baseUrl = '';
  if (rawBaseUrl === undefined) fail('baseUrl', `is missing: pass baseUrl or set ${service.baseUrlVariable}`);
  else if (typeof rawBaseUrl !== 'string') fail('baseUrl', 'must be a string');
  else {
    const checked = normalizeBaseUrl(rawBaseUrl);
    if ('problem' in checked) fail('baseUrl', checked.problem);
    else baseUrl = checked.url;
  }

  const timeoutMs = given.timeoutMs ?? DEFAULTS.timeoutMs;
  if (!isTimerMs(timeoutMs)) fail('timeoutMs', `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
  const maxRetries = given.maxRetries ?? DEFAULTS.maxRetries;
  if (!isRetryCount(maxRetries)) fail('maxRetries', 'must be a whole number from 0 to 10');
  const maxRetryAfterMs = given.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs;
  if (!isTimerMs(maxRetryAfterMs, 0)) fail('maxRetryAfterMs', `must be a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`);
  const maxConcurrentRequests = given.maxConcurrentRequests ?? DEFAULTS.maxConcurrentRequests;
  if (!(maxConcurrentRequests === Number.POSITIVE_INFINITY || (Number.isInteger(maxConcurrentRequests) && maxConcurrentRequests >= 1))) {
    fail('maxConcurrentRequests', 'must be a whole number of at least 1, or Infinity');
  }
  const maxResponseBytes = given.maxResponseBytes ?? DEFAULTS.maxResponseBytes;
  if (!(Number.isInteger(maxResponseBytes) && maxResponseBytes >= 1024))
    fail('maxResponseBytes', 'must be a whole number of at least 1024');

  if (given.fetch !== undefined && typeof given.fetch !== 'function') fail('fetch', 'must be a function');
  if (given.fetch === undefined && typeof globalThis.fetch !== 'function') fail('fetch', 'is required: no global fetch exists here');
  // The global fetch is looked up per request, not captured: interceptors (msw, nock) patch it after
  // clients are often constructed, at module load.
  const fetchFunction: FetchFunction = given.fetch ?? ((input, init) => globalThis.fetch(input, init));
  // null is refused rather than read as "default": silence the SDK with logLevel 'off'.
  const logger = given.logger === undefined ? console : given.logger;
  if (!isLogger(logger)) fail('logger', 'must have debug, info, warn and error methods');
  const logLevel = given.logLevel ?? DEFAULTS.logLevel;
  if (!LOG_LEVELS.includes(logLevel)) fail('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  issues.push(...headerIssues(given.headers, 'headers'));
  if (given.onResponse !== undefined && typeof given.onResponse !== 'function') fail('onResponse', 'must be a function');
  const instrumentation = given.instrumentation;
  if (instrumentation !== undefined) {
    if (instrumentation === null || typeof instrumentation !== 'object') fail('instrumentation', 'must be an object of hooks');
    else
      for (const hook of ['operation', 'attempt', 'settlementWorker'] as const) {
        if (instrumentation[hook] !== undefined && typeof instrumentation[hook] !== 'function')
          fail(`instrumentation.${hook}`, 'must be a function');
      }
  }

  if (issues.length > 0) {
    throw new ConfigurationError(
      `Invalid ${service.clientName} options: ${issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`,
    );
  }
  return {
    apiKey: apiKey as ApiKeySource,
    baseUrl,
    timeoutMs,
    maxRetries,
    maxRetryAfterMs,
    maxConcurrentRequests,
    maxResponseBytes,
    fetch: fetchFunction,
    logger,
    logLevel,
    headers: { ...given.headers },
    onResponse: given.onResponse,
    instrumentation,
  };
}
