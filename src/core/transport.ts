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
import { BodyStream } from './body-stream.js';
import { ConcurrencyLimit } from './concurrency.js';
import { type FetchFunction, isRetryCount, isTimerMs, MAX_TIMER_MS, type RequestOptions, type ResolvedConfig } from './config.js';
import { classifyConnectionFailure, connectionFailureReason } from './connection-failure.js';
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
import { headerIssues, headerValueProblem } from './headers.js';
import { type AttemptInfo, guardInstrumentation, HookFailureReporter, type Instrumentation } from './instrumentation.js';
import { LevelLogger } from './logger.js';
import { MIN_API_KEY_LENGTH, SecretRedactor } from './redact.js';
import { decideRetry } from './retry.js';
import { sleep } from './sleep.js';
import { SDK_VERSION } from './version.js';
import { boundedWait } from './wait.js';

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
   * When the whole call must end (epoch milliseconds; a poll's `maxWaitMs`): the waits before a request
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

/** Ends the issue of a 2xx body refused for `maxResponseBytes`, so a client can point to a streaming read instead. */
export const MAX_RESPONSE_BYTES_NOTE = '(maxResponseBytes)';

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
  /** The client's limit on a `Retry-After` (the settlement worker pauses no longer either). */
  get maxRetryAfterMs(): number {
    return this.#config.maxRetryAfterMs;
  }
  /** The key and the newest keys the key function returned: scrubbed from whatever an error or log keeps. */
  readonly #secrets = new SecretRedactor();
  /** The client's hooks behind the one isolation point: a hook's failure or hang never reaches a call. */
  readonly #hooks: Instrumentation | undefined;
  /** Logs each kind of hook failure (a tracer, `onResponse`) once for this client. */
  readonly #hookFailures: HookFailureReporter;
  /** The shared rate budgets of the client's keys, when it has one (`requestsPerSecond` with a journal). */
  #budgets: SharedBudgets | undefined;

  /** Makes every request of this transport take its token from the key's shared budget (set once, by the client). */
  useSharedBudgets(budgets: SharedBudgets): void {
    this.#budgets = budgets;
  }

  constructor(config: ResolvedConfig, profile: ServiceProfile) {
    this.#config = config;
    this.#profile = profile;
    this.#origin = new URL(config.baseUrl).origin;
    this.#limit = new ConcurrencyLimit(config.maxConcurrentRequests);
    if (typeof config.apiKey === 'string') this.#secrets.remember(config.apiKey);
    this.logger = new LevelLogger(config.logger, config.logLevel, this.#secrets);
    this.#hookFailures = new HookFailureReporter((message, details) => this.logger.warn(message, details));
    this.#hooks = config.instrumentation === undefined ? undefined : guardInstrumentation(config.instrumentation, this.#hookFailures);
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

  /** The client's instrumentation hooks, if any, guarded: what they throw or how long they take never reaches a call. */
  get instrumentation(): Instrumentation | undefined {
    return this.#hooks;
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
    return this.withRetries(settings, (attemptNumber) => this.send(spec, settings, attemptNumber));
  }

  /**
   * Runs `attempt` until it succeeds, fails for good, or `settings.maxRetries` retries are spent,
   * pausing by the retry policy between attempts. Aborts promptly with the signal's reason.
   * `mayRetry` narrows the policy (raw non-GET requests are never resent after an unknown outcome).
   */
  async withRetries<T>(
    settings: CallSettings,
    attempt: (attemptNumber: number) => Promise<T>,
    mayRetry: (error: unknown) => boolean = mayAlwaysRetry,
  ): Promise<T> {
    settings.signal?.throwIfAborted();
    try {
      return await attempt(1);
    } catch (error) {
      return this.retryAfterFirst(settings, error, attempt, mayRetry);
    }
  }

  /**
   * `withRetries` from its first attempt's failure on: a hot path that sends its first attempt itself (no
   * closure for an answer that comes at once) hands the failure here, and the policy goes on exactly as in
   * `withRetries`.
   */
  async retryAfterFirst<T>(
    settings: CallSettings,
    firstError: unknown,
    attempt: (attemptNumber: number) => Promise<T>,
    mayRetry: (error: unknown) => boolean = mayAlwaysRetry,
  ): Promise<T> {
    let error = firstError;
    for (let attemptNumber = 1; ; attemptNumber++) {
      if (settings.signal?.aborted) throw settings.signal.reason;
      if (!mayRetry(error)) throw error;
      const decision = decideRetry(error, attemptNumber, settings.maxRetries, this.#config.maxRetryAfterMs);
      if (!decision.retry) throw error;
      this.logger.warn(`retrying in ${decision.delayMs} ms (retry ${attemptNumber} of ${settings.maxRetries})`, {
        reason: error instanceof Error ? error.message : String(error),
      });
      await sleep(decision.delayMs, settings.signal);
      settings.signal?.throwIfAborted();
      try {
        return await attempt(attemptNumber + 1);
      } catch (next) {
        error = next;
      }
    }
  }

  /**
   * One attempt (following same-origin redirects), with no retry. The waits before the request is sent
   * (the key function, the concurrency queue) end at the caller's abort and at `settings.deadline`.
   */
  send(spec: RequestSpec, settings: CallSettings, attemptNumber = 1): Promise<HttpResult> {
    // The one instrumentation call site: a client without hooks pays this property read and nothing else.
    if (this.#hooks?.attempt !== undefined) return this.#sendObserved(spec, settings, attemptNumber);
    return this.#sendUnobserved(spec, settings, attemptNumber);
  }

  #sendUnobserved(spec: RequestSpec, settings: CallSettings, attemptNumber: number): Promise<HttpResult> {
    const source = this.#config.apiKey;
    // A fixed key is used at once, without an async step; only a key function is awaited.
    if (typeof source !== 'string') return this.#sendAfterKey(spec, settings, attemptNumber);
    if (this.#limit.unlimited) return this.#sendWithKey(spec, settings, source, attemptNumber);
    return this.#sendInTurn(spec, settings, source, attemptNumber);
  }

  #sendObserved(spec: RequestSpec, settings: CallSettings, attemptNumber: number): Promise<HttpResult> {
    const { hostname, port, protocol } = new URL(this.#config.baseUrl);
    const info: AttemptInfo = {
      service: this.#profile.service,
      method: spec.method,
      route: spec.route,
      serverAddress: hostname,
      serverPort: port === '' ? (protocol === 'https:' ? 443 : 80) : Number(port),
      attempt: attemptNumber,
      parent: settings.operation,
      referenceId: spec.referenceId,
    };
    const hooks = this.#hooks as Required<Pick<Instrumentation, 'attempt'>>;
    return hooks.attempt(info, () => this.#sendUnobserved(spec, settings, attemptNumber));
  }

  /**
   * Runs one public call (`name`, e.g. `collections.initiate`) inside the instrumentation's `operation` hook, which
   * hands every attempt of the call its span; without the hook, runs it as it is. `arg` is handed to `run`, so a
   * hot path can pass a function made once (not a closure per call) and pay nothing here without hooks.
   */
  traced<T, A = undefined>(
    name: string,
    settings: CallSettings,
    run: (settings: CallSettings, arg: A) => Promise<T>,
    arg?: A,
    about?: { readonly referenceId: string; readonly background?: boolean },
  ): Promise<T> {
    const hooks = this.#hooks;
    if (hooks?.operation === undefined) return run(settings, arg as A);
    const info = { name, service: this.#profile.service, ...about };
    return hooks.operation<T>(info, (scope) => run({ ...settings, operation: scope }, arg as A));
  }

  async #sendAfterKey(spec: RequestSpec, settings: CallSettings, attemptNumber: number): Promise<HttpResult> {
    return this.#sendInTurn(spec, settings, await this.#resolveApiKey(settings), attemptNumber);
  }

  /** The attempt once the concurrency limit gives it a slot; the queue's wait ends at the abort and the deadline. */
  #sendInTurn(spec: RequestSpec, settings: CallSettings, apiKey: string, attemptNumber: number): Promise<HttpResult> {
    const queueWait = settings.deadline === undefined ? undefined : this.#deadlineWait(settings.deadline);
    return this.#limit.run(() => this.#sendWithKey(spec, settings, apiKey, attemptNumber), settings.signal, queueWait);
  }

  /** A wait that must end at `deadline`: it then fails with {@link TimeoutError}, which a poll reads as its deadline. */
  #deadlineWait(deadline: number): { limitMs: number; onLimit: () => unknown } {
    const limitMs = Math.max(0, deadline - Date.now());
    return { limitMs, onLimit: () => new TimeoutError(limitMs) };
  }

  async #resolveApiKey(settings: CallSettings): Promise<string> {
    const source = this.#config.apiKey;
    if (typeof source === 'string') return source;
    let key: unknown;
    let limitError: unknown;
    try {
      const returned = source();
      // A slow key function is bounded like the request it precedes: by the abort, timeoutMs and the deadline.
      if (returned !== null && typeof returned === 'object') {
        const leftMs = settings.deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, settings.deadline - Date.now());
        const limitMs = Math.min(settings.timeoutMs, leftMs);
        key = await boundedWait(Promise.resolve(returned), settings.signal, limitMs, () => {
          limitError =
            leftMs <= settings.timeoutMs
              ? new TimeoutError(limitMs)
              : new ConfigurationError(`The apiKey function did not return within timeoutMs (${settings.timeoutMs} ms); nothing was sent`);
          return limitError;
        });
      } else key = returned;
    } catch (cause) {
      if (cause === limitError || (settings.signal?.aborted && cause === settings.signal.reason)) throw cause;
      throw new ConfigurationError('The apiKey function threw; nothing was sent', { cause });
    }
    if (typeof key !== 'string' || key.trim() === '') {
      throw new ConfigurationError('The apiKey function returned no key (a non-empty string is required); nothing was sent');
    }
    const problem = key.length < MIN_API_KEY_LENGTH ? `must be at least ${MIN_API_KEY_LENGTH} characters long` : headerValueProblem(key);
    if (problem !== undefined)
      throw new ConfigurationError(`The apiKey function returned an unusable key: it ${problem}; nothing was sent`);
    this.#secrets.remember(key);
    return key;
  }

  #sendWithKey(spec: RequestSpec, settings: CallSettings, apiKey: string, attemptNumber: number): Promise<HttpResult> {
    if (this.#budgets !== undefined) return this.#sendWithSharedToken(spec, settings, apiKey, attemptNumber, this.#budgets);
    if (settings.beforeSend !== undefined) {
      return settings.beforeSend().then(() => this.#sendAttempt(spec, settings, apiKey, attemptNumber, ignoreStatus));
    }
    return this.#sendAttempt(spec, settings, apiKey, attemptNumber, ignoreStatus);
  }

  /**
   * An attempt on a client with a shared budget: the key's token is taken right before it leaves (creates first; a
   * caller with its own budget, the worker, takes it inside its own wait through `beforeSend`), and the budget hears
   * once how it ended (the first response's status, or 0 for none).
   */
  async #sendWithSharedToken(
    spec: RequestSpec,
    settings: CallSettings,
    apiKey: string,
    attemptNumber: number,
    budgets: SharedBudgets,
  ): Promise<HttpResult> {
    const budget = await budgets.budgetFor(apiKey);
    if (budget === undefined) {
      if (settings.beforeSend !== undefined) await settings.beforeSend();
      return this.#sendAttempt(spec, settings, apiKey, attemptNumber, ignoreStatus);
    }
    /** Whether a token was taken and its request's end not yet reported (exactly one report per token). */
    let tokenOpen = false;
    const take = async () => {
      await budget.take(spec.method === 'POST' ? 'create' : 'other', settings.signal, settings.deadline);
      tokenOpen = true;
    };
    if (settings.beforeSend !== undefined) await settings.beforeSend(take);
    else await take();
    try {
      return await this.#sendAttempt(spec, settings, apiKey, attemptNumber, (status) => {
        if (!tokenOpen) return;
        tokenOpen = false;
        budget.observe(status);
      });
    } finally {
      if (tokenOpen) budget.observe(0);
    }
  }

  /** The attempt itself, once its tokens are taken; `answered` hears the first response's status. */
  async #sendAttempt(
    spec: RequestSpec,
    settings: CallSettings,
    apiKey: string,
    attemptNumber: number,
    answered: (status: number) => void,
  ): Promise<HttpResult> {
    const [authName, authValue] = this.#profile.auth(apiKey);
    const headers: Record<string, string> = { ...this.#defaultHeaders, ...settings.headers, [authName]: authValue };
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    const { controller: attempt, release } = followingController(settings.signal);
    // A deadline also cuts the request itself: a push journaled as sendable until then never leaves, or lasts, past it.
    const limitMs = settings.deadline === undefined ? settings.timeoutMs : Math.min(settings.timeoutMs, settings.deadline - Date.now());
    if (limitMs <= 0) {
      release();
      throw new TimeoutError(settings.timeoutMs);
    }
    const timeout = setTimeout(() => attempt.abort(), limitMs);
    // Set when a streamed body takes over the attempt's signal and its release.
    let handedOver = false;
    const signal = attempt.signal;
    // The attempt's signal goes to fetch itself, not only inside ky's Request: a Request follows a signal
    // through a weak reference, so a fetch that watched only the Request's signal could miss the abort.
    // The body goes along too (the same text ky's Request holds): fetch(request, init) without a body in init
    // pipes the Request's body through an identity TransformStream, the costliest step of a POST (profile:
    // docs/performance.md).
    const withSignal: FetchFunction =
      body === undefined
        ? (input, init) => this.#config.fetch(input, { ...init, signal })
        : (input, init) => this.#config.fetch(input, { ...init, signal, body });
    const started = Date.now();
    let url = `${this.#config.baseUrl}${spec.path}`;
    // A raw request's query may carry personal data: log lines name the path only.
    if (this.logger.debugEnabled) {
      this.logger.debug(`→ ${spec.method} ${pathOnly(spec.path)}`, spec.body === undefined ? undefined : { body: spec.body });
    }
    // Only the network steps (the fetch, the body reads) are classified by #networkFailure; each is awaited
    // in its own try, inline rather than through a wrapper, so an attempt in flight holds fewer frames.
    try {
      for (let redirects = 0; ; redirects++) {
        let response: Response;
        try {
          // The signal is given to fetch only (withSignal): given to ky too, ky would join it with its own through
          // AbortSignal.any on every call, a composite that costs time and stays registered while in flight.
          response = await this.#ky(url, { method: spec.method, headers, body, fetch: withSignal });
        } catch (error) {
          throw this.#networkFailure(error, settings, signal);
        }
        answered(response.status);
        const requestId = this.#requestIdOf(response);
        this.#notify(spec, response.status, requestId, started, attemptNumber);
        const next = this.#redirectTarget(response, spec.method, redirects);
        if (next !== undefined) {
          await response.body?.cancel().catch(() => undefined);
          url = next;
          continue;
        }
        const success = response.status >= 200 && response.status < 300;
        if (success && spec.stream !== undefined) {
          clearTimeout(timeout);
          handedOver = true;
          const stream = new BodyStream(response.body, {
            controller: attempt,
            timeoutMs: settings.timeoutMs,
            maxBytes: spec.stream.maxBytes,
            deadline: spec.stream.wholeWithinAttempt === true ? started + limitMs : undefined,
            release,
            mapError: (error) => this.#networkFailure(error, settings, signal),
          });
          return {
            status: response.status,
            body: undefined,
            isJson: false,
            requestId,
            headers: response.headers,
            scrub: this.#scrubValue,
            stream,
          };
        }
        let text: string;
        try {
          text = success
            ? await this.#readSuccessBody(response, requestId, signal)
            : await readBodyText(response, ERROR_BODY_LIMIT, true, signal);
        } catch (error) {
          throw this.#networkFailure(error, settings, signal);
        }
        if (this.logger.debugEnabled) {
          this.logger.debug(`← ${response.status} ${spec.method} ${pathOnly(spec.path)} in ${Date.now() - started} ms`);
        }
        // The data the caller asked for is returned as sent (a key that also occurs in it must not corrupt
        // it); an error that keeps the body scrubs it through `scrub`.
        if (success)
          return { status: response.status, ...parseBodyText(text), requestId, headers: response.headers, scrub: this.#scrubValue };
        throw mapErrorResponse(
          this.#profile.service,
          this.#profile.readErrorEnvelope,
          response.status,
          response.headers,
          text,
          this.#secrets,
        );
      }
    } finally {
      if (!handedOver) {
        clearTimeout(timeout);
        release();
      }
    }
  }

  readonly #scrubValue = (value: unknown): unknown => this.#secrets.scrubValue(value);

  #requestIdOf(response: Response): string | undefined {
    const header = response.headers.get('x-request-id');
    return header === null ? undefined : this.#secrets.scrub(header);
  }

  /** Tells the client's `onResponse` about a response; what it throws is logged, never let out. */
  #notify(spec: RequestSpec, status: number, requestId: string | undefined, started: number, attempt: number): void {
    const onResponse = this.#config.onResponse;
    if (onResponse === undefined) return;
    const path = spec.path.split('?')[0] ?? spec.path;
    try {
      const returned: unknown = onResponse({
        service: this.#profile.service,
        method: spec.method,
        path,
        status,
        requestId,
        durationMs: Date.now() - started,
        attempt,
      });
      if (returned instanceof Promise) returned.catch((error: unknown) => this.#hookFailures.report('onResponse', error));
    } catch (error) {
      this.#hookFailures.report('onResponse', error);
    }
  }

  async #readSuccessBody(response: Response, requestId: string | undefined, signal: AbortSignal): Promise<string> {
    try {
      return await readBodyText(response, this.#config.maxResponseBytes, false, signal);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      throw new ResponseValidationError({
        issues: [{ path: '', message: `${error.message} ${MAX_RESPONSE_BYTES_NOTE}` }],
        body: undefined,
        service: this.#profile.service,
        status: response.status,
        requestId,
      });
    }
  }

  /** The next URL for a redirect the SDK follows; `undefined` for a non-redirect; throws for one it refuses. */
  #redirectTarget(response: Response, method: string, redirects: number): string | undefined {
    const status = response.status;
    // An opaque redirect always has status 0: its (slower) type is read only then.
    if (status === 0 && response.type === 'opaqueredirect') throw new RedirectError(status, undefined, 'redirects are not followed here');
    if (status < 300 || status >= 400 || status === 304) return undefined;
    const location = response.headers.get('location');
    if (!location) return undefined;
    let target: URL;
    try {
      target = new URL(location, response.url || this.#config.baseUrl);
    } catch {
      throw new RedirectError(status, undefined, 'the Location header is not a URL');
    }
    if (target.origin !== this.#origin) {
      // The Location is the service's text: a host made of the key must not reach the error.
      throw new RedirectError(
        response.status,
        this.#secrets.scrub(target.origin),
        `the API key is never sent to another origin than ${this.#origin}`,
      );
    }
    // 301/302/303 would turn a POST into a GET and drop the body: refuse rather than guess.
    if (method !== 'GET' && response.status !== 307 && response.status !== 308) {
      throw new RedirectError(response.status, target.origin, `a ${method} is not redirected with status ${response.status}`);
    }
    if (redirects >= MAX_REDIRECTS) throw new RedirectError(response.status, target.origin, `more than ${MAX_REDIRECTS} redirects`);
    return target.href;
  }

  /**
   * Classifies how a network step (the fetch, a body read) failed: the caller's abort, the attempt's timeout,
   * or the connection. Only these steps are classified, so a defect elsewhere surfaces as itself instead of
   * posing as a network failure.
   */
  #networkFailure(error: unknown, settings: CallSettings, attemptSignal: AbortSignal): unknown {
    if (settings.signal?.aborted) return settings.signal.reason;
    // Not the caller's signal, so the attempt's own timer fired.
    if (attemptSignal.aborted) return new TimeoutError(settings.timeoutMs);
    if (error instanceof TapCollectionsError) return error;
    // ky wraps network failures with the Request (and so the key); keep only the runtime's own error.
    const cause = error instanceof KyNetworkError ? error.cause : error;
    const failure = classifyConnectionFailure(cause);
    if (failure === 'permission-denied') {
      return new ConfigurationError('The runtime refused network access (Deno: run with --allow-net); nothing was sent', { cause });
    }
    const sent = failure === 'may-have-been-sent';
    // The host only: a path or query may carry a reference or a phone number; scrubbed in case a key was pasted into it.
    const host = this.#secrets.scrub(new URL(this.#origin).host);
    const reason = sent ? undefined : connectionFailureReason(cause);
    const message = sent
      ? `The connection to ${host} failed; the request may have reached the service`
      : reason === 'dns-lookup-failed'
        ? `Could not resolve the host ${host} (DNS lookup failed); nothing was sent. Check baseUrl and this machine's DNS`
        : reason === 'connection-refused'
          ? `${host} refused the connection (nothing listens there); nothing was sent`
          : `Could not connect to ${host}; nothing was sent`;
    return new ConnectionError(message, { cause, requestMayHaveBeenSent: sent, host, reason });
  }
}

/** An attempt's status listener when no budget listens. */
function ignoreStatus(): void {}

/** The default of `withRetries`' `mayRetry`, made once rather than per call. */
function mayAlwaysRetry(): boolean {
  return true;
}

/** A path without its query (which may carry personal data), for log lines. */
function pathOnly(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** `headers` without `name` in any letter case: the caller's headers never replace authentication. */
function withoutHeader(headers: Readonly<Record<string, string>>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== name));
}
