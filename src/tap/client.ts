/**
 * `TapClient`: the Tap Resolution Partner API.
 *
 * @module
 */
import * as z from 'zod/mini';
import { type ClientOptions, type RequestOptions, resolveConfig } from '../core/config.js';
import { ApiError, ConfigurationError, ConflictError, ResponseValidationError } from '../core/errors.js';
import { createOnce } from '../core/idempotent-create.js';
import { type ApiResponse, type RawRequestOptions, rawRequest } from '../core/raw-request.js';
import {
  apiKeyHeaderAuth,
  type CallSettings,
  type HttpMethod,
  type HttpResult,
  MAX_RESPONSE_BYTES_NOTE,
  Transport,
} from '../core/transport.js';
import { newReferenceId } from '../core/uuid.js';
import { parseInput, parseResponse } from '../core/validation.js';
import { readTapErrorEnvelope } from './envelope.js';
import { listItems, toCustomerQuery, unlessMentions } from './query-stream.js';
import { findOwnQuery } from './reconcile.js';
import {
  type CustomerQuery,
  type CustomerQueryInput,
  CustomerQueryInputSchema,
  CustomerQuerySchema,
  ListCustomerQueriesResponseSchema,
  SubmitCustomerQueryResponseSchema,
} from './schemas.js';

const CUSTOMER_QUERIES_PATH = '/v1/tap/partners/customer-queries';
const LIST = { method: 'GET', path: CUSTOMER_QUERIES_PATH, route: CUSTOMER_QUERIES_PATH } as const;

/** A create's resend was refused because its reference (or another unique id) already exists. */
const isDuplicate = (error: unknown): boolean => error instanceof ConflictError;

/** The default of {@link TapClientOptions.maxListBytes}: 2 GiB, about three million queries. */
const DEFAULT_MAX_LIST_BYTES = 2 * 1024 ** 3;

/** Options of {@link TapClient}: the shared {@link ClientOptions}; the environment supplies `TAP_API_KEY` and `TAP_BASE_URL`. @group Configuration */
export interface TapClientOptions extends ClientOptions {
  /**
   * The most bytes read from the query list when it is streamed ({@link TapClient.customerQueries} and the
   * reconcile of a create whose outcome was unknown). Memory stays flat whatever the list's length (one query is
   * held at a time), so this bounds only how long a list, or an endless body, is read; `maxResponseBytes` still
   * bounds {@link TapClient.listCustomerQueries}, which holds the list whole. A whole number of at least 1024.
   * @defaultValue 2147483648 (2 GiB, about three million queries)
   */
  maxListBytes?: number | undefined;
}

/**
 * The Tap Resolution Partner API: resolve a tapped tag into its holder's name and mobile money number.
 *
 * ```ts
 * const tap = new TapClient({ apiKey: process.env.TAP_API_KEY, baseUrl: 'https://sandbox.example' });
 * const query = await tap.submitCustomerQuery({ merchantId, merchantName, terminalId, amount: 25, tagId });
 * const msisdn = mobileNumberFor(query); // '260977123456'
 * ```
 *
 * Sends `x-api-key` on every request. Errors are {@link TapCollectionsError}s: see the README's table.
 *
 * @group Clients
 */
export class TapClient {
  readonly #transport: Transport;
  readonly #maxListBytes: number;

  /**
   * @throws {@link ConfigurationError} on a missing key or base URL, a bad option, or in a browser page
   * without `dangerouslyAllowBrowser`.
   */
  constructor(options?: TapClientOptions) {
    const config = resolveConfig(options, { apiKeyVariable: 'TAP_API_KEY', baseUrlVariable: 'TAP_BASE_URL', clientName: 'TapClient' });
    const maxListBytes = options?.maxListBytes ?? DEFAULT_MAX_LIST_BYTES;
    if (!(Number.isSafeInteger(maxListBytes) && maxListBytes >= 1024)) {
      throw new ConfigurationError('Invalid TapClient options: maxListBytes must be a whole number of at least 1024');
    }
    this.#maxListBytes = maxListBytes;
    this.#transport = new Transport(config, { service: 'tap', auth: apiKeyHeaderAuth, readErrorEnvelope: readTapErrorEnvelope });
  }

  /**
   * Submits a customer query (`POST /v1/tap/partners/customer-queries`) and resolves with the created
   * query. `referenceId` is generated (UUID v4) when absent and kept for every attempt; when an attempt's
   * outcome is unknown and the retry answers 409, the SDK finds the query by `referenceId` and resolves
   * with it, so one call never creates two queries. Every attempt, a reconcile's read of the list included
   * (headers and body), ends within `timeoutMs`: the call ends within `(maxRetries + 1) × timeoutMs` plus the
   * backoff between attempts, whatever the list's length or pace; a list that cannot be read by then leaves the
   * outcome unknown.
   *
   * @throws {@link RequestValidationError} on bad input (nothing is sent).
   * @throws {@link ConflictError} when `merchantId`, `terminalId` or `referenceId` was used by an earlier query.
   * @throws {@link NotFoundError} / {@link BadRequestError} when the tag is missing or inactive, or has no number.
   * @throws {@link UnknownOutcomeError} when the outcome could not be established (the list may lag behind the
   * create): reconcile later by `referenceId`. Once an attempt's outcome was unknown, only another query
   * holding this call's `referenceId`, `merchantId` or `terminalId` lets a definite error stand.
   */
  async submitCustomerQuery(input: CustomerQueryInput, options?: RequestOptions): Promise<CustomerQuery> {
    const parsed = parseInput(CustomerQueryInputSchema, input);
    const request = { ...parsed, referenceId: parsed.referenceId ?? newReferenceId() };
    return this.#transport.traced('tap.submitCustomerQuery', this.#transport.settingsFor(options), this.#submit, request);
  }

  // An arrow made once per client: `traced` runs it without a closure per call when no hooks are configured.
  readonly #submit = (settings: CallSettings, request: CustomerQueryInput & { referenceId: string }): Promise<CustomerQuery> => {
    const attempt = { ...settings, maxRetries: 0 };
    return createOnce(this.#transport, settings, {
      referenceId: request.referenceId,
      lookupBeforeResend: false,
      send: async (attemptNumber) => {
        const result = await this.#transport.send(
          { method: 'POST', path: CUSTOMER_QUERIES_PATH, route: CUSTOMER_QUERIES_PATH, body: request },
          attempt,
          attemptNumber,
        );
        return parseResponse(SubmitCustomerQueryResponseSchema, result, 'tap').data;
      },
      // Row by row as the list streams in, stopping at this call's own: one malformed row of another query
      // cannot hide it, and a history of any length is read in flat memory.
      lookup: async (attemptNumber) => {
        const result = await this.#openList(attempt, attemptNumber, true);
        // Only a row holding one of this call's unique ids can be its own or exclude it: the others are not parsed.
        const skipOthers = unlessMentions([request.referenceId, request.merchantId, request.terminalId]);
        return findOwnQuery(listItems(result, skipOthers), request, result.status, result.requestId);
      },
      isDuplicate,
    });
  };

  /**
   * Lists every customer query this partner has submitted (`GET /v1/tap/partners/customer-queries`),
   * as the service orders them, in one array. Another partner's queries are never returned.
   *
   * The list is unpaginated and grows with every query (about 700 bytes each): it is held whole, up to
   * `maxResponseBytes` (32 MiB by default, about 45 000 queries). For a longer history use
   * {@link TapClient.customerQueries}, which reads one query at a time.
   *
   * @throws {@link ResponseValidationError} when an item is malformed (naming it), or the list is longer than
   * `maxResponseBytes` (the message names `customerQueries()`).
   */
  async listCustomerQueries(options?: RequestOptions): Promise<CustomerQuery[]> {
    return this.#transport.traced('tap.listCustomerQueries', this.#transport.settingsFor(options), (settings) =>
      this.#transport.withRetries(settings, (attemptNumber) => this.#list(settings, attemptNumber)),
    );
  }

  /**
   * Every customer query this partner has submitted, one at a time as the list streams in, in the service's
   * order: `for await (const query of tap.customerQueries()) { … }`. Each is validated as it arrives; only the
   * current one is held, so a history of any length is read in flat memory (up to `maxListBytes`).
   * Breaking out of the loop cancels the rest of the response.
   *
   * The request is retried (by `maxRetries`) until the list starts to arrive; a failure after that ends the loop
   * with the error (the list has no pagination to resume from). `timeoutMs` bounds the wait for the answer, then
   * each wait for more of it, and the wait for each query: a query that has not arrived within `timeoutMs` of
   * reading (the time your loop spends between queries does not count) ends the loop with {@link TimeoutError},
   * however steadily bytes trickle in; `signal` ends the loop with its reason.
   *
   * @throws {@link RequestValidationError} at once, for bad options (nothing is sent).
   * @throws {@link ResponseValidationError} from the loop, naming the item (`data.<index>.<field>`) that is malformed.
   */
  customerQueries(options?: RequestOptions): AsyncIterable<CustomerQuery> {
    const settings = this.#transport.settingsFor(options);
    return { [Symbol.asyncIterator]: () => this.#customerQueries(settings) };
  }

  async *#customerQueries(settings: CallSettings): AsyncGenerator<CustomerQuery, void, undefined> {
    const result = await this.#transport.withRetries(settings, (attemptNumber) => this.#openList(settings, attemptNumber));
    for await (const item of listItems(result)) yield toCustomerQuery(item, result);
  }

  /**
   * Checks the configuration before the first sale: one authenticated read of the start of the query list
   * (`GET /v1/tap/partners/customer-queries`; the Tap API has no health endpoint). It reads up to the first
   * query and cancels the rest, so its cost is the same whatever the partner's history (a few KiB).
   *
   * Resolves when the key is accepted and the answer has the Tap list's shape (its first query, when there is
   * one, is a valid query). A failure here is never about a customer's tag. Each attempt, the read of the first
   * query included, ends within `timeoutMs` (a list trickled in a byte at a time fails with {@link TimeoutError}).
   *
   * @throws {@link ConfigurationError} when `baseUrl` does not serve the Tap API: the list answered 404 or
   * 405 (the route does not exist there), or a 2xx that is not the Tap list. `cause` holds the original error.
   * @throws {@link AuthenticationError} when the key is missing, invalid, revoked or expired (401).
   * @throws {@link PermissionDeniedError} when the key may not read customer queries (403).
   * @throws {@link ConnectionError} / {@link TimeoutError} when the service cannot be reached.
   */
  async verify(options?: RequestOptions): Promise<void> {
    try {
      const settings = this.#transport.settingsFor(options);
      await this.#transport.withRetries(settings, async (attemptNumber) => {
        const result = await this.#openList(settings, attemptNumber, true);
        // Only the first query is read: the generator's return cancels the rest of the body.
        for await (const item of listItems(result)) {
          toCustomerQuery(item, result);
          return;
        }
      });
    } catch (error) {
      if ((error instanceof ApiError && (error.status === 404 || error.status === 405)) || error instanceof ResponseValidationError) {
        const answer = error instanceof ApiError ? `HTTP ${error.status}` : 'a body that is not the Tap list';
        throw new ConfigurationError(
          `TapClient: the base URL does not serve the Tap API: GET ${CUSTOMER_QUERIES_PATH} answered ${answer}. Check baseUrl / TAP_BASE_URL.`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /**
   * One attempt at the list, its body left unread as a stream. `wholeWithinAttempt` (a create's reconcile,
   * `verify()`): the attempt's `timeoutMs` covers the body too, so the call's answer is never held past it.
   */
  #openList(settings: CallSettings, attemptNumber: number, wholeWithinAttempt = false): Promise<HttpResult> {
    return this.#transport.send(
      { method: 'GET', path: CUSTOMER_QUERIES_PATH, stream: { maxBytes: this.#maxListBytes, wholeWithinAttempt } },
      settings,
      attemptNumber,
    );
  }

  async #list(settings: CallSettings, attemptNumber: number): Promise<CustomerQuery[]> {
    let result: HttpResult;
    try {
      result = await this.#transport.send(LIST, settings, attemptNumber);
    } catch (error) {
      if (
        error instanceof ResponseValidationError &&
        error.body === undefined &&
        error.issues[0]?.message.endsWith(MAX_RESPONSE_BYTES_NOTE)
      ) {
        throw new ResponseValidationError({
          issues: [{ path: '', message: `${error.issues[0].message}: read a list this long one query at a time with customerQueries()` }],
          body: undefined,
          service: 'tap',
          status: error.status,
          requestId: error.requestId,
        });
      }
      throw error;
    }
    // The list's shape is not documented: `{ data: [...] }` like the submission, or a bare array. Each is
    // validated as sent, so a ResponseValidationError's `body` and issue paths match what the service returned.
    if (Array.isArray(result.body)) return parseResponse(z.array(CustomerQuerySchema), result, 'tap');
    return parseResponse(ListCustomerQueriesResponseSchema, result, 'tap').data;
  }

  /**
   * Calls an endpoint the SDK does not wrap, through the same pipeline as every method: authentication,
   * base URL, timeouts, the redirect rule, error mapping and key redaction. `path` starts with `/` and
   * stays under the base URL. A GET is retried like the other reads; any other method is never resent
   * after an attempt whose outcome is unknown (only when nothing was sent, or on 429).
   *
   * @throws {@link RequestValidationError} for a path that would leave the base URL, a bad query or body (nothing is sent).
   * @throws {@link ApiError} (its subclasses by status) for a non-2xx answer.
   */
  async request(method: HttpMethod, path: string, options?: RawRequestOptions): Promise<ApiResponse> {
    return rawRequest(this.#transport, method, path, options);
  }
}
