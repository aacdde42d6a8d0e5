/**
 * Creates that are safe to retry: the one place that decides how a create ends once an attempt's
 * outcome is unknown (see docs/guide/reliability.md, "What proves nothing was created").
 *
 * @module
 */
import { ResponseValidationError, UNKNOWN_OUTCOME_SEEN, UnknownOutcomeError, type UnknownOutcomeSeen } from './errors.js';
import { monotonicNow } from './monotonic.js';
import { isUnknownOutcome } from './retry.js';
import type { CallSettings, Transport } from './transport.js';

/**
 * What a lookup by reference saw:
 * - `found`: this call's operation exists (`result` is it);
 * - `absent`: it is not visible. After an unknown outcome this proves nothing: the lookup may lag behind
 *   the create, and an attempt that timed out may still be processed by the service;
 * - `excluded`: the service shows another operation holding one of this operation's unique keys, so by
 *   the service's own uniqueness rule this call's operation does not exist and never will.
 */
export type LookupResult<Result> =
  | { readonly kind: 'found'; readonly result: Result }
  | { readonly kind: 'absent' }
  | { readonly kind: 'excluded' };

/** One create, as a client describes it to {@link createOnce}. */
export interface IdempotentCreate<Result> {
  /** The operation's idempotency key, kept for every attempt. */
  readonly referenceId: string;
  /** One attempt of the create (`attemptNumber` counts from 1). */
  readonly send: (attemptNumber: number) => Promise<Result>;
  /** Looks the operation up by `referenceId` (one attempt). Throws when the service cannot tell. */
  readonly lookup: (attemptNumber: number) => Promise<LookupResult<Result>>;
  /** True when the service refused a resend because the reference already exists. */
  readonly isDuplicate: (error: unknown) => boolean;
  /**
   * Look up before resending after an unknown outcome (Collections: a resend would push to the customer's
   * phone again, and no document says the service refuses a second push with the same reference), rather than
   * resending and reconciling on the duplicate answer (Tap, whose document promises that refusal). A lookup
   * that does not see the operation then ends the call with `UnknownOutcomeError`: it proves nothing (status
   * reads may lag behind the create), so resending on it could create the operation twice.
   */
  readonly lookupBeforeResend: boolean;
  /**
   * A duplicate answer means the operation exists even on a first attempt (the caller knows this reference is
   * its own, e.g. from its journal): reconcile it, and end with the found operation or `UnknownOutcomeError`,
   * never with the duplicate error. Default: only after an unknown outcome.
   */
  readonly duplicateMeansExists?: boolean;
  /**
   * Set when the service is known to refuse a second create with a reference it holds (Collections
   * `duplicateReferences: 'refused'`): after an unknown outcome the same create is sent again at once (no lookup
   * first), and its answer decides. `existing(error)` reads a duplicate answer that proves the operation exists (the
   * service's own envelope) into the result; `refusal(error)` is true for a definite refusal that proves it does not
   * (the body is the same, so the first attempt was refused alike). Default: unset (look up before any resend).
   */
  readonly refusesDuplicates?: {
    readonly existing: (error: unknown) => Result | undefined;
    readonly refusal: (error: unknown) => boolean;
    /**
     * Until when (this process's monotonic clock, `monotonicNow()`) the service is known to remember the reference. A
     * resend leaves only if its attempt's time limit (`timeoutMs`) ends before then; past it the service may have
     * forgotten the reference and would store a second operation, so the call looks up instead (found: the operation;
     * not seen: `UnknownOutcomeError`). Default: unset (no bound).
     */
    readonly rememberedUntil?: number;
  };
  /** An earlier call's attempt may have created the operation: the first attempt is already a resend. Default: false. */
  readonly resending?: boolean;
  /** How a lookup that does not see the operation is said in `UnknownOutcomeError`. Default: `'nothing-yet'`. */
  readonly absentSeen?: UnknownOutcomeSeen;
}

/**
 * Runs a create under the retry policy so that one call creates at most one operation, and never reports
 * "not created" about an operation that may exist:
 * - after an unknown outcome, either looks up and ends with what it finds (found: the operation; not seen:
 *   `UnknownOutcomeError`, never a resend), or, where the service refuses a second operation with the same
 *   reference, resends and reconciles the duplicate answer;
 * - a 2xx with an unreadable body (the operation was created) is read back by reference;
 * - once any attempt's outcome was unknown, the call ends with the found operation or with
 *   {@link UnknownOutcomeError} (the last error as its `cause`). A definite error is thrown then only when
 *   the service proves this call's operation does not exist (a lookup answers `excluded`); a lookup that
 *   does not see it is no proof.
 * A caller's abort ends the call with the signal's reason, as every call does.
 */
export async function createOnce<Result>(transport: Transport, settings: CallSettings, create: IdempotentCreate<Result>): Promise<Result> {
  // Set once any attempt's outcome was unknown, and never cleared by a lookup that did not see the operation.
  let mayHaveCreated = create.resending === true;
  let lookUpFirst = false;
  const refuses = create.refusesDuplicates;
  const absent = create.absentSeen ?? 'nothing-yet';
  // The log says what the next attempt does: a lookup is no resend.
  const nextStep = () => (lookUpFirst ? `outcome unknown: checking referenceId ${create.referenceId} (not sending it again)` : undefined);
  let lastAttempt = 0;
  /** The failure that left the outcome unknown: the cause of the `UnknownOutcomeError` a lookup ends with. */
  let lastError: unknown;
  try {
    return await transport.withRetries(
      settings,
      async (attemptNumber) => {
        lastAttempt = attemptNumber;
        // Measured as the resend is about to leave: a long Retry-After or a stalled process may have outlasted the memory.
        if (!lookUpFirst && mayHaveCreated && !remembered(refuses?.rememberedUntil, settings.timeoutMs)) {
          lookUpFirst = true;
          transport.logger.warn(
            `referenceId ${create.referenceId}: the service may have forgotten it by now (duplicateMemoryMs): checking it instead of sending it again`,
          );
        }
        if (lookUpFirst) {
          const seen = await create.lookup(attemptNumber);
          if (seen.kind === 'found') return seen.result;
          // Not seen is no proof that the earlier attempt created nothing: a resend could be a second operation.
          if (seen.kind === 'absent') throw unknown(transport, create.referenceId, lastError, absent);
          mayHaveCreated = false;
          lookUpFirst = false;
        }
        try {
          return await create.send(attemptNumber);
        } catch (error) {
          // A 2xx whose body is unreadable still created the operation: read it back rather than report a failure.
          if (isUnknownOutcome(error) || error instanceof ResponseValidationError) {
            mayHaveCreated = true;
            lastError = error;
            lookUpFirst = create.lookupBeforeResend && refuses === undefined;
          } else {
            // The operation may exist: an earlier attempt's outcome is unknown, or the caller knows the reference is its own.
            const mayExist = mayHaveCreated || create.duplicateMeansExists === true;
            // Where the service refuses duplicates, its answer to the same create decides: no lookup needed.
            const existing = mayExist ? refuses?.existing(error) : undefined;
            if (existing !== undefined) return existing;
            if (mayHaveCreated && refuses?.refusal(error) === true) mayHaveCreated = false;
            else if (mayExist && create.isDuplicate(error)) {
              const seen = await create.lookup(attemptNumber);
              if (seen.kind === 'found') return seen.result;
              if (seen.kind === 'excluded') mayHaveCreated = false;
              // The reference exists but the lookup cannot see it: it may well be this call's own operation.
              else throw new UnknownOutcomeError(create.referenceId, error, undefined, absent);
            }
          }
          throw error;
        }
      },
      undefined,
      nextStep,
    );
  } catch (error) {
    if (!mayHaveCreated || error instanceof UnknownOutcomeError || settings.signal?.aborted) throw error;
    let seen: LookupResult<Result>;
    try {
      seen = await create.lookup(lastAttempt + 1);
    } catch (lookupError) {
      // An abort during the final lookup ends the call like any abort: with the signal's reason.
      if (settings.signal?.aborted && lookupError === settings.signal.reason) throw lookupError;
      throw unknown(transport, create.referenceId, error, 'unreachable');
    }
    if (seen.kind === 'found') return seen.result;
    if (seen.kind === 'excluded') throw error;
    throw unknown(transport, create.referenceId, error, absent);
  }
}

/** True while an attempt leaving now would end before `until` (monotonic); always true without a bound. */
function remembered(until: number | undefined, timeoutMs: number): boolean {
  return until === undefined || monotonicNow() + timeoutMs <= until;
}

function unknown(transport: Transport, referenceId: string, cause: unknown, seen: UnknownOutcomeSeen): UnknownOutcomeError {
  const error = new UnknownOutcomeError(referenceId, cause, undefined, seen);
  transport.logger.error(
    `outcome unknown for referenceId ${referenceId}: reconcile later by this referenceId, do not resend with a new one (${UNKNOWN_OUTCOME_SEEN[seen]})`,
  );
  return error;
}
