/**
 * The service's answer to a create whose `referenceId` it already holds, read from the error's data alone (its
 * status, envelope and `errors[]`), never from its class: the one rule, shared by the create and by the CLI's
 * `probe duplicates` (whose bundle holds no copy of the SDK's classes).
 *
 * @module
 */
import type { FieldError } from '../core/errors.js';

/** What the rule reads of an error (an `ApiError`'s fields). */
interface AnswerData {
  readonly status?: unknown;
  readonly errors?: readonly FieldError[] | unknown;
  readonly serviceEnvelope?: unknown;
}

/**
 * True for the service's answer to a reference used before. Not documented: read as 409, or a 422 whose `errors[]`
 * flags `referenceId` with a uniqueness rule.
 */
export function isDuplicateReference(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { status, errors } = error as AnswerData;
  if (status === 409) return true;
  return (
    status === 422 &&
    Array.isArray(errors) &&
    errors.some(
      (item: Partial<FieldError>) =>
        typeof item?.field === 'string' &&
        typeof item.rule === 'string' &&
        /referenceId$/i.test(item.field) &&
        /unique|exist|duplicate/i.test(item.rule),
    )
  );
}

/**
 * True when a duplicate answer is evidence that the service holds the reference: it came in the service's own
 * error envelope. A proxy's page or an empty body with the same status proves nothing.
 */
export function isDuplicateEvidence(error: unknown): boolean {
  return isDuplicateReference(error) && (error as AnswerData).serviceEnvelope === true;
}
