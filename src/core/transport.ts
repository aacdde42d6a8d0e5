/**
 * The one transport of both clients, over one ky instance. A request flows one way: options checked →
 * key resolved → one attempt (auth, timeout, redirects, bounded body) → error mapped → retried by the
 * one retry policy. No service code touches ky; no code here knows a service's field names.
 *
 * @module
 */
import ky, { type KyInstance, NetworkError as KyNetworkError } from 'ky';
import { followingController } from './abort.js';
import { BodyTooLargeError, parseBodyText, readBodyText } from './body.js';
import { ConcurrencyLimit } from './concurrency.js';
import { type FetchFunction, isRetryCount, isTimerMs, MAX_TIMER_MS, type RequestOptions, type ResolvedConfig } from './config.js';
import { classifyConnectionFailure } from './connection-failure.js';
import { isBrowserPage } from './env.js';
import { type ErrorEnvelopeReader, mapErrorResponse } from './error-mapper.js';
import {
  ConfigurationError,
  ConnectionError,
  RedirectError,
  RequestValidationError,
  ResponseValidationError,
  type ServiceName,
  TapCollectionsError,
  TimeoutError,
  type ValidationIssue,
} from './errors.js';
import { headerIssues, isSafeHeaderValue } from './headers.js';
import { LevelLogger } from './logger.js';
import { scrubSecret } from './redact.js';
import { decideRetry } from './retry.js';
import { sleep } from './sleep.js';
import { SDK_VERSION } from './version.js';

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

/** One request, as a client describes it. `path` must already be encoded. */
export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly options?: RequestOptions | undefined;
}

/** A 2xx response: its body parsed when it was JSON. */
export interface HttpResult {
  readonly status: number;
  readonly body: unknown;
  readonly isJson: boolean;
  readonly requestId: string | undefined;
}

/** The per-call settings, after the call's options were checked and merged over the client's. */
export interface CallSettings {
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** This call's extra headers (the client's are in every request already). */
  readonly headers: Readonly<Record<string, string>> | undefined;
}

const MAX_REDIRECTS = 5;
/** Error bodies are read only this far: enough for any envelope, never a whole proxy page. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Sends requests for one client. */
export class Transport {
  readonly #config: ResolvedConfig;
  readonly #profile: ServiceProfile;
  readonly #ky: KyInstance;
  readonly #limit: ConcurrencyLimit;
  readonly #origin: string;
  /** Headers of every request but authentication, built once: accept, user-agent, the client's extra headers. */
  readonly #defaultHeaders: Readonly<Record<string, string>>;
  /** The authentication header's name, lower-cased. */
  readonly #authName: string;
  /** The client's logger; redacts everything it writes. */
  readonly logger: LevelLogger;

  constructor(config: ResolvedConfig, profile: ServiceProfile) {
    this.#config = config;
    this.#profile = profile;
    this.#origin = new URL(config.baseUrl).origin;
    this.#limit = new ConcurrencyLimit(config.maxConcurrentRequests);
    this.logger = new LevelLogger(config.logger, config.logLevel);
    this.#authName = profile.auth('')[0];
    this.#defaultHeaders = {
      accept: 'application/json',
      // Browsers refuse to let a page set user-agent.
      ...(isBrowserPage() ? {} : { 'user-agent': `tap-collections-sdk/${SDK_VERSION}` }),
      ...withoutHeader(config.headers, this.#authName),
    };
    // Retries, timeouts and HTTP errors are the SDK's own (retry.ts, per-attempt timer, error-mapper.ts):
    // creates must reconcile between attempts, which ky's retry cannot express.
    this.#ky = ky.create({
      retry: 0,
      timeout: false,
      throwHttpErrors: false,
      redirect: 'manual',
    });
  }

  /** The service this transport talks to. */
  get service(): ServiceName {
    return this.#profile.service;
  }

  /**
   * Checks a call's options and merges them over the client's.
   * @throws {@link RequestValidationError} naming each bad option; nothing is sent.
   */
  settingsFor(options: RequestOptions | undefined): CallSettings {
    if (options === undefined) {
      return { signal: undefined, timeoutMs: this.#config.timeoutMs, maxRetries: this.#config.maxRetries, headers: undefined };
    }
    const issues: ValidationIssue[] = [];
    if (options === null || typeof options !== 'object')
      throw new RequestValidationError([{ path: 'options', message: 'must be an object' }], 'options');
    if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
      issues.push({ path: 'options.signal', message: 'must be an AbortSignal' });
    if (options.timeoutMs !== undefined && !isTimerMs(options.timeoutMs)) {
      issues.push({ path: 'options.timeoutMs', message: `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}` });
    }
    if (options.maxRetries !== undefined && !isRetryCount(options.maxRetries))
      issues.push({ path: 'options.maxRetries', message: 'must be a whole number from 0 to 10' });
    issues.push(...headerIssues(options.headers, 'options.headers'));
    if (issues.length > 0) throw new RequestValidationError(issues, 'options');
    return {
      signal: options.signal,
      timeoutMs: options.timeoutMs ?? this.#config.timeoutMs,
      maxRetries: options.maxRetries ?? this.#config.maxRetries,
      headers: options.headers ? withoutHeader(options.headers, this.#authName) : undefined,
    };
  }

  /** Sends a request, retrying transient failures by the retry policy; resolves with a 2xx result. */
  async request(spec: RequestSpec): Promise<HttpResult> {
    const settings = this.settingsFor(spec.options);
    return this.withRetries(settings, () => this.send(spec, settings));
  }

  /**
   * Runs `attempt` until it succeeds, fails for good, or `settings.maxRetries` retries are spent,
   * pausing by the retry policy between attempts. Aborts promptly with the signal's reason.
   */
  async withRetries<T>(settings: CallSettings, attempt: (attemptNumber: number) => Promise<T>): Promise<T> {
    for (let attemptNumber = 1; ; attemptNumber++) {
      settings.signal?.throwIfAborted();
      try {
        return await attempt(attemptNumber);
      } catch (error) {
        if (settings.signal?.aborted) throw settings.signal.reason;
        const decision = decideRetry(error, attemptNumber, settings.maxRetries, this.#config.maxRetryAfterMs);
        if (!decision.retry) throw error;
        this.logger.warn(`retrying in ${decision.delayMs} ms (retry ${attemptNumber} of ${settings.maxRetries})`, {
          reason: error instanceof Error ? error.message : String(error),
        });
        await sleep(decision.delayMs, settings.signal);
      }
    }
  }

  /** One attempt (following same-origin redirects), with no retry. */
  async send(spec: RequestSpec, settings: CallSettings): Promise<HttpResult> {
    const apiKey = await this.#resolveApiKey();
    return this.#limit.run(() => this.#sendWithKey(spec, settings, apiKey), settings.signal);
  }

  async #resolveApiKey(): Promise<string> {
    const source = this.#config.apiKey;
    if (typeof source === 'string') return source;
    let key: unknown;
    try {
      key = await source();
    } catch (cause) {
      throw new ConfigurationError('The apiKey function threw; nothing was sent', { cause });
    }
    if (typeof key !== 'string' || key.trim() === '') {
      throw new ConfigurationError('The apiKey function returned no key (a non-empty string is required); nothing was sent');
    }
    if (!isSafeHeaderValue(key))
      throw new ConfigurationError('The apiKey function returned a key with CR, LF or NUL characters; nothing was sent');
    return key;
  }

  async #sendWithKey(spec: RequestSpec, settings: CallSettings, apiKey: string): Promise<HttpResult> {
    const [authName, authValue] = this.#profile.auth(apiKey);
    const headers: Record<string, string> = { ...this.#defaultHeaders, ...settings.headers, [authName]: authValue };
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const network = <T>(step: () => Promise<T>) => this.#networkStep(step, settings, signal);
    // The attempt's signal goes to fetch itself, not only inside ky's Request: a Request follows a signal
    // through a weak reference, so a fetch that watched only the Request's signal could miss the abort.
    const withSignal: FetchFunction = (input, init) => this.#config.fetch(input, { ...init, signal });

    const { controller: attempt, release } = followingController(settings.signal);
    const timeout = setTimeout(() => attempt.abort(), settings.timeoutMs);
    const signal = attempt.signal;
    const started = Date.now();
    let url = `${this.#config.baseUrl}${spec.path}`;
    this.logger.debug(`→ ${spec.method} ${spec.path}`, spec.body === undefined ? undefined : { body: spec.body });
    try {
      for (let redirects = 0; ; redirects++) {
        const response = await network(() => this.#ky(url, { method: spec.method, headers, body, signal, fetch: withSignal }));
        const next = this.#redirectTarget(response, spec.method, redirects);
        if (next !== undefined) {
          await response.body?.cancel().catch(() => undefined);
          url = next;
          continue;
        }
        const requestId = response.headers.get('x-request-id') ?? undefined;
        if (response.status >= 200 && response.status < 300) {
          // Scrubbed like error bodies: a 2xx page that echoes the key must not carry it into a ResponseValidationError.
          const text = scrubSecret(await network(() => this.#readSuccessBody(response, requestId, signal)), apiKey);
          this.logger.debug(`← ${response.status} ${spec.method} ${spec.path} in ${Date.now() - started} ms`);
          return { status: response.status, ...parseBodyText(text), requestId };
        }
        const text = scrubSecret(await network(() => readBodyText(response, ERROR_BODY_LIMIT, true, signal)), apiKey);
        this.logger.debug(`← ${response.status} ${spec.method} ${spec.path} in ${Date.now() - started} ms`);
        throw mapErrorResponse(this.#profile.service, this.#profile.readErrorEnvelope, response.status, response.headers, text);
      }
    } finally {
      clearTimeout(timeout);
      release();
    }
  }

  async #readSuccessBody(response: Response, requestId: string | undefined, signal: AbortSignal): Promise<string> {
    try {
      return await readBodyText(response, this.#config.maxResponseBytes, false, signal);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      throw new ResponseValidationError({
        issues: [{ path: '', message: `${error.message} (maxResponseBytes)` }],
        body: undefined,
        service: this.#profile.service,
        status: response.status,
        requestId,
      });
    }
  }

  /** The next URL for a redirect the SDK follows; `undefined` for a non-redirect; throws for one it refuses. */
  #redirectTarget(response: Response, method: string, redirects: number): string | undefined {
    if (response.type === 'opaqueredirect') throw new RedirectError(response.status, undefined, 'redirects are not followed here');
    if (response.status < 300 || response.status >= 400 || response.status === 304) return undefined;
    const location = response.headers.get('location');
    if (!location) return undefined;
    let target: URL;
    try {
      target = new URL(location, response.url || this.#config.baseUrl);
    } catch {
      throw new RedirectError(response.status, undefined, 'the Location header is not a URL');
    }
    if (target.origin !== this.#origin) {
      throw new RedirectError(response.status, target.origin, `the API key is never sent to another origin than ${this.#origin}`);
    }
    // 301/302/303 would turn a POST into a GET and drop the body: refuse rather than guess.
    if (method !== 'GET' && response.status !== 307 && response.status !== 308) {
      throw new RedirectError(response.status, target.origin, `a ${method} is not redirected with status ${response.status}`);
    }
    if (redirects >= MAX_REDIRECTS) throw new RedirectError(response.status, target.origin, `more than ${MAX_REDIRECTS} redirects`);
    return target.href;
  }

  /**
   * Runs a step that talks to the network (the fetch, a body read) and classifies how it failed: the
   * caller's abort, the attempt's timeout, or the connection. Only these steps are classified, so a
   * defect elsewhere surfaces as itself instead of posing as a network failure.
   */
  async #networkStep<T>(step: () => Promise<T>, settings: CallSettings, attemptSignal: AbortSignal): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (settings.signal?.aborted) throw settings.signal.reason;
      // Not the caller's signal, so the attempt's own timer fired.
      if (attemptSignal.aborted) throw new TimeoutError(settings.timeoutMs);
      if (error instanceof TapCollectionsError) throw error;
      // ky wraps network failures with the Request (and so the key); keep only the runtime's own error.
      const cause = error instanceof KyNetworkError ? error.cause : error;
      const failure = classifyConnectionFailure(cause);
      if (failure === 'permission-denied') {
        throw new ConfigurationError('The runtime refused network access (Deno: run with --allow-net); nothing was sent', { cause });
      }
      const sent = failure === 'may-have-been-sent';
      throw new ConnectionError(
        sent ? 'The connection failed; the request may have reached the service' : 'Could not connect; nothing was sent',
        {
          cause,
          requestMayHaveBeenSent: sent,
        },
      );
    }
  }
}

/** `headers` without `name` in any letter case: the caller's headers never replace authentication. */
function withoutHeader(headers: Readonly<Record<string, string>>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== name));
}
