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
import { apiKeyHeaderAuth, type CallSettings, type HttpMethod, type HttpResult, Transport } from '../core/transport.js';
import { newReferenceId } from '../core/uuid.js';
import { parseInput, parseResponse } from '../core/validation.js';
import { readTapErrorEnvelope } from './envelope.js';
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

/** Options of {@link TapClient}: the shared {@link ClientOptions}; the environment supplies `TAP_API_KEY` and `TAP_BASE_URL`. @group Configuration */
export type TapClientOptions = ClientOptions;

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

  /**
   * @throws {@link ConfigurationError} on a missing key or base URL, a bad option, or in a browser page
   * without `dangerouslyAllowBrowser`.
   */
  constructor(options?: TapClientOptions) {
    const config = resolveConfig(options, { apiKeyVariable: 'TAP_API_KEY', baseUrlVariable: 'TAP_BASE_URL', clientName: 'TapClient' });
    this.#transport = new Transport(config, { service: 'tap', auth: apiKeyHeaderAuth, readErrorEnvelope: readTapErrorEnvelope });
  }

  /**
   * Submits a customer query (`POST /v1/tap/partners/customer-queries`) and resolves with the created
   * query. `referenceId` is generated (UUID v4) when absent and kept for every attempt; when an attempt's
   * outcome is unknown and the retry answers 409, the SDK finds the query by `referenceId` and resolves
   * with it, so one call never creates two queries.
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
    return this.#transport.traced('tap.submitCustomerQuery', this.#transport.settingsFor(options), (settings) =>
      this.#submit(request, settings),
    );
  }

  #submit(request: CustomerQueryInput & { referenceId: string }, settings: CallSettings): Promise<CustomerQuery> {
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
      // Row by row, so one malformed row of another query cannot hide this call's own.
      lookup: async (attemptNumber) => {
        const result = await this.#transport.send(LIST, attempt, attemptNumber);
        return findOwnQuery(listRows(result), request, result.status, result.requestId);
      },
      isDuplicate: (error) => error instanceof ConflictError,
    });
  }

  /**
   * Lists every customer query this partner has submitted (`GET /v1/tap/partners/customer-queries`),
   * as the service orders them. Another partner's queries are never returned.
   */
  async listCustomerQueries(options?: RequestOptions): Promise<CustomerQuery[]> {
    return this.#transport.traced('tap.listCustomerQueries', this.#transport.settingsFor(options), (settings) =>
      this.#transport.withRetries(settings, (attemptNumber) => this.#list(settings, attemptNumber)),
    );
  }

  /**
   * Checks the configuration before the first sale: one authenticated read of the query list
   * (`GET /v1/tap/partners/customer-queries`; the Tap API has no health endpoint). Call it once at start-up,
   * not per sale: its answer holds every query this partner has submitted.
   *
   * Resolves when the key is accepted and the answer has the Tap list's shape. A failure here is never
   * about a customer's tag.
   *
   * @throws {@link ConfigurationError} when `baseUrl` does not serve the Tap API: the list answered 404 or
   * 405 (the route does not exist there), or a 2xx that is not the Tap list. `cause` holds the original error.
   * @throws {@link AuthenticationError} when the key is missing, invalid, revoked or expired (401).
   * @throws {@link PermissionDeniedError} when the key may not read customer queries (403).
   * @throws {@link ConnectionError} / {@link TimeoutError} when the service cannot be reached.
   */
  async verify(options?: RequestOptions): Promise<void> {
    try {
      await this.listCustomerQueries(options);
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

  async #list(settings: CallSettings, attemptNumber: number): Promise<CustomerQuery[]> {
    const result = await this.#transport.send(LIST, settings, attemptNumber);
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

/** The list's items, unvalidated (each is checked on its own when reconciling); the container must be JSON of a known shape. */
function listRows(result: HttpResult): readonly unknown[] {
  if (Array.isArray(result.body)) return result.body;
  const data =
    result.isJson && result.body !== null && typeof result.body === 'object' ? (result.body as { data?: unknown }).data : undefined;
  if (Array.isArray(data)) return data;
  return parseResponse(ListCustomerQueriesResponseSchema, result, 'tap').data;
}
