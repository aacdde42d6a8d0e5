/**
 * The two services' response bodies, as their documents define them: the Tap envelope
 * (`{ success, message, code, error }`), the Collections envelope (`{ success, data, code, message, requestId }`) and
 * its 422 problem body with `errors[]`.
 *
 * @module
 */
import type { SimulatedService } from '../fixtures.js';
import type { SimulatorResponse } from './exchange.js';

/** One field error of the Collections 422 body. */
export interface FieldError {
  /** Human-readable text. */
  message: string;
  /** The rule that failed, e.g. `required`, `uuid`. */
  rule: string;
  /** Where, e.g. `body.amount` or `params.referenceId`. */
  field: string;
}

/** A JSON response carrying the request id. */
export function json(status: number, body: unknown, requestId: string): SimulatorResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId },
    body: JSON.stringify(body),
  };
}

/** A Tap error envelope; `error` is the document's identifier, e.g. `auth/unauthorized-error`. */
export function tapError(status: number, error: string, message: string, requestId: string): SimulatorResponse {
  return json(status, { success: false, message, code: status, error }, requestId);
}

/** A Collections error envelope; `code` is e.g. `E_NOT_FOUND`. */
export function collectionsError(status: number, code: string, message: string, requestId: string): SimulatorResponse {
  return json(status, { success: false, data: null, code, message, requestId }, requestId);
}

/** The identifier of one error in each service's vocabulary. */
export interface ErrorCodes {
  /** The Tap `error` identifier. */
  readonly tap: string;
  /** The Collections `code`. */
  readonly collections: string;
}

/** The error envelope of `service`, for errors both services answer alike (auth, routing, limits, faults). */
export function serviceError(
  service: SimulatedService,
  status: number,
  codes: ErrorCodes,
  message: string,
  requestId: string,
): SimulatorResponse {
  return service === 'tap'
    ? tapError(status, codes.tap, message, requestId)
    : collectionsError(status, codes.collections, message, requestId);
}

/** The Collections 422 problem body. */
export function validationProblem(instance: string, errors: FieldError[], requestId: string): SimulatorResponse {
  return json(
    422,
    {
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      type: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Reference/Status/422',
      title: 'Validation Error',
      status: 422,
      detail: 'Validation failure',
      instance,
      errors,
      requestId,
    },
    requestId,
  );
}
