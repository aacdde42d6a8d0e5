/**
 * The Tap API's error envelope: `{ success: false, message, code: <HTTP status>, error: <identifier> }`.
 *
 * @module
 */
import { type ErrorEnvelope, isFailureEnvelope, stringField } from '../core/error-mapper.js';

/** The `error` identifier the Tap API sends with 409. @group Errors */
export const TAP_ALREADY_EXISTS = 'resource/already-exists-error';

/** Reads the Tap envelope; `code` is the envelope's `error` string (its numeric `code` repeats the status). */
export function readTapErrorEnvelope(body: unknown): ErrorEnvelope {
  return { code: stringField(body, 'error'), message: stringField(body, 'message'), isServiceEnvelope: isFailureEnvelope(body, 'error') };
}
