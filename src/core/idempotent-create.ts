/**
 * Creates that are retried without ever creating twice. The `referenceId` names the operation; when an
 * attempt's outcome is unknown (no response, a timeout, 408, 5xx) the SDK looks the operation up by
 * that reference instead of blindly resending, and says so ({@link UnknownOutcomeError}) when it cannot.
 *
 * @module
 */
import { ResponseValidationError, UnknownOutcomeError } from './errors.js';
import { isUnknownOutcome } from './retry.js';
import type { CallSettings, Transport } from './transport.js';

/** How one kind of create is sent and reconciled. */
export interface IdempotentCreate<Result> {
  /** The operation's idempotency key, kept for every attempt. */
  readonly referenceId: string;
  /** One attempt of the create. */
  readonly send: () => Promise<Result>;
  /**
   * Looks the operation up by `referenceId` (one attempt): the result when this call's operation
   * exists, `undefined` when it provably does not. Throws when the service cannot tell.
   */
  readonly lookup: () => Promise<Result | undefined>;
  /** True when the service refused a resend because the reference already exists. */
  readonly isDuplicate: (error: unknown) => boolean;
  /**
   * Look up before resending after an unknown outcome (Collections: a resend would push to the customer's
   * phone again, and the status check may lag behind the create), rather than resending and reconciling on
   * the duplicate answer (Tap: a resend is refused by the service's uniqueness rule, and the list is complete).
   */
  readonly lookupBeforeResend: boolean;
}

/**
 * Runs a create under the retry policy so that one call creates at most one operation:
 * - after an unknown outcome, either looks up before resending or resends and reconciles a duplicate answer;
 * - a 2xx with an unreadable body (the operation was created) is read back by reference;
 * - when retries run out while an outcome is still unknown, looks up once more: found → resolves with it,
 *   absent → the last error stands (nothing was created), lookup failed → {@link UnknownOutcomeError}.
 */
export async function createOnce<Result>(transport: Transport, settings: CallSettings, create: IdempotentCreate<Result>): Promise<Result> {
  let unknownOutcome: unknown;
  // Set once any attempt's outcome was unknown: a later duplicate answer may be that attempt's own operation,
  // even after a lookup found nothing (a collection not yet visible to the status check).
  let mayHaveCreated = false;
  try {
    return await transport.withRetries(settings, async () => {
      if (unknownOutcome !== undefined && create.lookupBeforeResend) {
        const existing = await create.lookup();
        if (existing !== undefined) return existing;
        unknownOutcome = undefined;
      }
      try {
        return await create.send();
      } catch (error) {
        // A 2xx whose body is unreadable still created the operation: read it back rather than report a failure.
        if (isUnknownOutcome(error) || error instanceof ResponseValidationError) {
          unknownOutcome = error;
          mayHaveCreated = true;
        } else if (mayHaveCreated && create.isDuplicate(error)) {
          const existing = await create.lookup();
          if (existing !== undefined) return existing;
          // The service says the reference exists, but the lookup cannot see it: when lookups may lag behind
          // creates, it may well be this call's own operation, so only "unknown" is honest.
          if (create.lookupBeforeResend) throw new UnknownOutcomeError(create.referenceId, error);
          // The lookup is complete and the reference belongs to another operation: this call created nothing.
          unknownOutcome = undefined;
          mayHaveCreated = false;
        }
        throw error;
      }
    });
  } catch (error) {
    if (unknownOutcome === undefined || settings.signal?.aborted) throw error;
    let existing: Result | undefined;
    try {
      existing = await create.lookup();
    } catch {
      transport.logger.error(`outcome unknown for referenceId ${create.referenceId}: reconcile later, do not resend`);
      throw new UnknownOutcomeError(create.referenceId, error);
    }
    if (existing !== undefined) return existing;
    throw error;
  }
}
