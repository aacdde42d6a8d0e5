/**
 * When a 404 from a status check is evidence: the one place that decides it, used by every entry point that reads a
 * 404 (`checkStatus`, `pollUntilSettled`, `recover()`, the settlement worker, the reconcile inside `initiate`,
 * `verify()`, and so the CLI).
 *
 * A 404 says "the service holds no such collection" only when the Collections service itself said it: its error
 * envelope (`success: false` with a string `code`), from a base URL that has proved in this process that it serves
 * the Collections API (a 2xx from `/health` or from any Collections endpoint there). Anything else (no body, an HTML
 * page, the Tap API's envelope, a proxy's page, a "no route" answer, or a base URL with a wrong path prefix whose
 * `/health` is 404 too) means the base URL or a proxy is wrong, and proves nothing about any payment.
 *
 * @module
 */
import { ApiError, ConfigurationError, NotFoundError } from '../core/errors.js';

/** After `/health` answered as no Collections API does, a next 404 asks it again only this much later. */
export const HEALTH_RECHECK_MS = 30_000;

/** A `code` that names a route rather than a collection ("no route"): the path is wrong, not the payment. */
const ROUTE_CODE = /route/i;

/** The base URL's own proof, and the one judgement of a status check's 404. One per client. */
export class NotFoundEvidence {
  /** True once a Collections endpoint at this base URL answered 2xx in this process. */
  #proved = false;
  /** The `/health` check in flight, shared by every 404 judged meanwhile. */
  #probing: Promise<void> | undefined;
  /** The last time `/health` answered as no Collections API does (monotonic ms), and what it answered. */
  #refused: { at: number; error: WrongBaseUrlError } | undefined;
  readonly #probeHealth: () => Promise<unknown>;
  readonly #baseUrl: string | undefined;

  /**
   * @param probeHealth - `GET /health` with the client's retries; it resolves on 2xx.
   * @param baseUrl - The client's base URL, named by every error that says it does not answer as the service.
   */
  constructor(probeHealth: () => Promise<unknown>, baseUrl?: string) {
    this.#probeHealth = probeHealth;
    this.#baseUrl = baseUrl;
  }

  /** True once the base URL has proved itself in this process. */
  get proved(): boolean {
    return this.#proved;
  }

  /** A Collections endpoint at the base URL answered 2xx: it serves the Collections API. */
  markProved(): void {
    this.#proved = true;
    this.#refused = undefined;
  }

  /**
   * Resolves when `error` (a status check's 404) is evidence that the service holds no such collection; asks
   * `/health` first when the base URL has not proved itself yet.
   *
   * @throws {@link ConfigurationError} naming `baseUrl` when the 404 is not the Collections service's answer.
   * @throws The `/health` check's own error when it cannot tell (unreachable, 5xx, 401): nothing is decided then.
   */
  async judge(error: NotFoundError): Promise<void> {
    if (!error.serviceEnvelope) {
      throw new WrongBaseUrlError(
        `a status check answered HTTP 404 without the Collections API's error envelope (${describeBody(error.body)})`,
        error,
        this.#baseUrl,
      );
    }
    if (error.code !== undefined && ROUTE_CODE.test(error.code)) {
      throw new WrongBaseUrlError(
        `a status check answered HTTP 404 with code ${error.code}, which names a route, not a collection`,
        error,
        this.#baseUrl,
      );
    }
    if (this.#proved) return;
    const refused = this.#refused;
    if (refused !== undefined && performance.now() - refused.at < HEALTH_RECHECK_MS) throw refused.error;
    this.#probing ??= this.#probe().finally(() => {
      this.#probing = undefined;
    });
    await this.#probing;
  }

  async #probe(): Promise<void> {
    try {
      await this.#probeHealth();
      this.markProved();
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
        const refusal = new WrongBaseUrlError(`GET /health answered HTTP ${error.status}`, error, this.#baseUrl);
        this.#refused = { at: performance.now(), error: refusal };
        throw refusal;
      }
      throw error;
    }
  }
}

/**
 * The error every entry point gives for a 404 that is not evidence: a {@link ConfigurationError} to its callers
 * (its `name` says so too); the class lets `recover()` and the worker tell it from a bad `apiKey` function.
 */
export class WrongBaseUrlError extends ConfigurationError {
  /** The base URL that does not answer as the service (when the client named it). */
  readonly baseUrl: string | undefined;

  constructor(what: string, cause: unknown, baseUrl?: string) {
    super(
      `CollectionsClient: the base URL does not answer as the Collections API${baseUrl === undefined ? '' : ` (${baseUrl})`}: ${what}. Such a 404 proves nothing about a payment, so nothing was decided (a journaled payment stays open). Check baseUrl / COLLECTIONS_BASE_URL and any proxy in front of the service.`,
      { cause },
    );
    this.name = 'ConfigurationError';
    this.baseUrl = baseUrl;
  }
}

/** What kind of body a 404 had, in a few words (never its content, which may carry personal data). */
function describeBody(body: unknown): string {
  if (body === undefined || body === '') return 'an empty body';
  if (typeof body === 'string') return /^\s*</.test(body) ? 'an HTML page' : 'a text body';
  if (body !== null && typeof body === 'object') {
    const { success, code, error } = body as Record<string, unknown>;
    if (success === false && typeof error === 'string') return "the Tap API's envelope";
    if (success === false && code !== undefined) return 'an envelope whose code is not a string';
    return 'a JSON body that is not the envelope';
  }
  return 'a body that is not the envelope';
}

/** 404s that carry a journal's `not-sent` verdict (recorded): a poll ends on them at once. */
const VERDICTS = new WeakSet<NotFoundError>();

function withNote(error: NotFoundError, note: string): NotFoundError {
  return new NotFoundError({
    status: error.status,
    code: error.code,
    message: `${error.message}: ${note}`,
    requestId: error.requestId,
    body: error.body,
    service: error.service,
    retryAfterMs: error.retryAfterMs,
    serviceEnvelope: error.serviceEnvelope,
  });
}

/** A status check's 404 as callers get it without a `not-sent` verdict: it says it proves nothing. */
export function notProof(error: NotFoundError): NotFoundError {
  return withNote(
    error,
    'the service does not hold this collection as far as this read shows; this is no proof the push was never sent (it may still arrive, or the read may lag): do not start the sale over on it',
  );
}

/** A status check's 404 after the journal recorded the payment `not-sent` (provably never reached the service). */
export function provenNotSent(error: NotFoundError): NotFoundError {
  const verdict = withNote(
    error,
    'the payment journal records this payment not-sent: no attempt can still reach the service, so the sale may start over under a new referenceId',
  );
  VERDICTS.add(verdict);
  return verdict;
}

/** True for a 404 that carries a recorded `not-sent` verdict ({@link provenNotSent}). */
export function isNotSentVerdict(error: unknown): boolean {
  return error instanceof NotFoundError && VERDICTS.has(error);
}
