/**
 * The Collections API's error bodies: the 422 problem body of section 7 (`code`, `errors[]`,
 * `requestId`, …); for other statuses the body is not documented, so every field is read only if present.
 *
 * @module
 */
import { type ErrorEnvelope, isFailureEnvelope, stringField } from '../core/error-mapper.js';
import type { FieldError } from '../core/errors.js';

/** The `code` of the Collections API's 422 validation problem. @group Errors */
export const COLLECTIONS_VALIDATION_ERROR = 'E_VALIDATION_ERROR';

function fieldErrors(body: unknown): FieldError[] | undefined {
  const errors = body !== null && typeof body === 'object' ? (body as { errors?: unknown }).errors : undefined;
  if (!Array.isArray(errors)) return undefined;
  return errors.map((item) => ({
    field: stringField(item, 'field') ?? '',
    rule: stringField(item, 'rule') ?? '',
    message: stringField(item, 'message') ?? '',
  }));
}

/**
 * Reads a Collections error body: `code`, a message (`message`, else `detail`, else `title`), `requestId`, `errors[]`.
 * It is the service's own envelope only with `success: false` and a string `code` (the Tap API's `code` is a number).
 */
export function readCollectionsErrorEnvelope(body: unknown): ErrorEnvelope {
  return {
    isServiceEnvelope: isFailureEnvelope(body, 'code'),
    code: stringField(body, 'code'),
    message: stringField(body, 'message') ?? stringField(body, 'detail') ?? stringField(body, 'title'),
    requestId: stringField(body, 'requestId'),
    errors: fieldErrors(body),
  };
}
