/**
 * The one transport of both clients, over one ky instance. A request flows one way: options checked →
 * key resolved → one attempt (auth, timeout, redirects, bounded body) → error mapped → retried by the
 * one retry policy. No service code touches ky; no code here knows a service's field names.
 *
 * About 460 lines, one concern: the attempt pipeline (key, concurrency slot, shared-budget token, hooks, the
 * attempt, body reading), whose steps share the client's private state. Its parts that stand alone have their own
 * files: `transport-types.ts`, `call-settings.ts`, `api-key.ts`, `redirect.ts`, `network-failure.ts`, `retry.ts`.
 *
 * @module
 */
import ky, { type KyInstance } from 'ky';
import { followingController } from './abort.js';
import { resolveApiKey } from './api-key.js';
import { BodyTooLargeError, parseBodyText, readBodyText } from './body.js';
import { BodyStream } from './body-stream.js';
import { checkCallSettings, withoutHeader } from './call-settings.js';
import { ConcurrencyLimit } from './concurrency.js';
import type { FetchFunction, RequestOptions, ResolvedConfig } from './config.js';
import { isBrowserPage } from './env.js';
import { mapErrorResponse } from './error-mapper.js';
import { RequestValidationError, ResponseValidationError, type ServiceName, TimeoutError } from './errors.js';
import { type AttemptInfo, guardInstrumentation, HookFailureReporter, type Instrumentation } from './instrumentation.js';
import { LevelLogger } from './logger.js';
import { monotonicNow } from './monotonic.js';
import { networkFailure } from './network-failure.js';
import { SecretRedactor } from './redact.js';
import { redirectTarget } from './redirect.js';
import { type NextStep, retryAfterFirst } from './retry.js';
import type { CallSettings, HttpResult, RequestSpec, ServiceProfile, SharedBudgets } from './transport-types.js';
import { SDK_VERSION } from './version.js';

export {
  type AuthStrategy,
  apiKeyHeaderAuth,
  bearerAuth,
  type CallSettings,
  type HttpMethod,
  type HttpResult,
  type RequestSpec,
  type ServiceProfile,
  type SharedBudget,
  type SharedBudgets,
} from './transport-types.js';

/** Ends the issue of a 2xx body refused for `maxResponseBytes`, so a client can point to a streaming read instead. */
export const MAX_RESPONSE_BYTES_NOTE = '(maxResponseBytes)';

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
  /** Told each key a key function returns (the client's deployment notes it as one of its account's keys). */
  #keyListener: ((apiKey: string) => void) | undefined;

  /** The base URL every request goes to, normalized (see `normalizeBaseUrl`). */
  get baseUrl(): string {
    return this.#config.baseUrl;
  }

  /** Tells `listener` every key the client's key function returns from now on (set once, by the client). */
  onKey(listener: (apiKey: string) => void): void {
    this.#keyListener = listener;
  }

  /**
   * The key the next request would send: the fixed key, or the key function's answer (checked, bounded by `settings`).
   * For identities and derived keys (the account, a record's sealed number); never for logging or storing.
   */
  apiKey(settings: CallSettings): Promise<string> {
    return this.#resolveApiKey(settings);
  }

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
    return checkCallSettings(options, this.#config, this.#authName);
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
    nextStep?: NextStep,
  ): Promise<T> {
    settings.signal?.throwIfAborted();
    try {
      return await attempt(1);
    } catch (error) {
      return this.retryAfterFirst(settings, error, attempt, mayRetry, nextStep);
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
    nextStep?: NextStep,
  ): Promise<T> {
    return retryAfterFirst(settings, firstError, attempt, mayRetry, this.#config.maxRetryAfterMs, this.logger, nextStep);
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
    const limitMs = Math.max(0, deadline - monotonicNow());
    return { limitMs, onLimit: () => new TimeoutError(limitMs) };
  }

  async #resolveApiKey(settings: CallSettings): Promise<string> {
    const source = this.#config.apiKey;
    if (typeof source === 'string') return source;
    const key = await resolveApiKey(source, settings);
    this.#secrets.remember(key);
    this.#keyListener?.(key);
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
    const limitMs = settings.deadline === undefined ? settings.timeoutMs : Math.min(settings.timeoutMs, settings.deadline - monotonicNow());
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
    // docs/internals/performance.md).
    const withSignal: FetchFunction =
      body === undefined
        ? (input, init) => this.#config.fetch(input, { ...init, signal })
        : (input, init) => this.#config.fetch(input, { ...init, signal, body });
    const started = monotonicNow();
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
          throw this.#networkFailure(error, settings, signal, spec.method);
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
          this.logger.debug(`← ${response.status} ${spec.method} ${pathOnly(spec.path)} in ${Math.round(monotonicNow() - started)} ms`);
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
        durationMs: monotonicNow() - started,
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
    return redirectTarget(response, method, redirects, this.#config.baseUrl, this.#origin, this.#secrets);
  }

  /** How a network step failed (see {@link networkFailure}). */
  #networkFailure(error: unknown, settings: CallSettings, attemptSignal: AbortSignal, method?: string): unknown {
    return networkFailure(error, settings, attemptSignal, this.#origin, this.#secrets, method);
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
