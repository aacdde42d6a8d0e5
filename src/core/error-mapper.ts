/**
 * The one error mapper: turns an HTTP error response of either service into its typed {@link ApiError}.
 * Each service supplies only how to read its envelope; the status decides the class, whatever the body.
 *
 * @module
 */
import { parseBodyText } from './body.js';
import { type ApiError, apiErrorFor, type FieldError, type ServiceName } from './errors.js';
import type { SecretRedactor } from './redact.js';
import { parseRetryAfter } from './retry.js';

/** What a service's error envelope says, each part optional: a body may be HTML, empty, or of unknown shape. */
export interface ErrorEnvelope {
  readonly code?: string | undefined;
  readonly message?: string | undefined;
  readonly requestId?: string | undefined;
  readonly errors?: readonly FieldError[] | undefined;
  /**
   * True when the body is the service's own error envelope (Collections: `success: false` with a string `code`;
   * Tap: `success: false` with a string `error`), not a proxy's page, an empty body or another service's envelope.
   */
  readonly isServiceEnvelope?: boolean | undefined;
}

/** Reads a service's error envelope from a parsed body. Must never throw: anything unreadable is left out. */
export type ErrorEnvelopeReader = (body: unknown) => ErrorEnvelope;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication failed',
  403: 'Permission denied',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  422: 'Validation error',
  429: 'Rate limit exceeded',
  500: 'Server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

/**
 * Builds the typed error for an error response. Everything it keeps passes through `secrets`: the text
 * before parsing, the parsed values after (an echo of the key escaped in JSON is decoded by parsing),
 * and the headers it reads.
 */
export function mapErrorResponse(
  service: ServiceName,
  readEnvelope: ErrorEnvelopeReader,
  status: number,
  headers: Headers,
  text: string,
  secrets?: SecretRedactor,
): ApiError {
  // The text may have been cut at the error-body limit in the middle of the key: scrubCut catches that.
  const parsed = parseBodyText(secrets ? secrets.scrubCut(text) : text).body;
  const body = secrets ? secrets.scrubValue(parsed) : parsed;
  let envelope: ErrorEnvelope = {};
  try {
    envelope = readEnvelope(body);
  } catch {
    // A reader that throws on an odd body must not turn a typed HTTP error into a TypeError.
  }
  const header = headers.get('x-request-id');
  const requestId = envelope.requestId ?? (header === null ? undefined : secrets ? secrets.scrub(header) : header);
  const summary = envelope.message?.trim() || STATUS_TEXT[status] || `HTTP error ${status}`;
  const context = [`HTTP ${status}`, envelope.code, requestId && `request ${requestId}`].filter(Boolean).join(', ');
  return apiErrorFor({
    status,
    code: envelope.code,
    message: `${summary} (${context})`,
    requestId,
    body,
    service,
    errors: envelope.errors,
    serviceEnvelope: envelope.isServiceEnvelope === true,
    retryAfterMs: parseRetryAfter(headers.get('retry-after')),
  });
}

/** True when `body` is an object whose `success` is `false` and whose `field` is a string: a service's error envelope. */
export function isFailureEnvelope(body: unknown, field: string): boolean {
  return (
    body !== null && typeof body === 'object' && (body as { success?: unknown }).success === false && stringField(body, field) !== undefined
  );
}

/** A string field of an object, if it is one. */
export function stringField(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field = (value as Record<string, unknown>)[key];
  return typeof field === 'string' ? field : undefined;
}
