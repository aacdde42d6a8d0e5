/**
 * `recover()`: after a restart, bring every open payment of the journal to what the service knows.
 *
 * @module
 */
import type { RequestOptions } from '../core/config.js';
import {
  AuthenticationError,
  ConfigurationError,
  JournalError,
  NotFoundError,
  type PaymentContradictionError,
  PermissionDeniedError,
  RequestValidationError,
} from '../core/errors.js';
import { UUID_PATTERN } from '../core/uuid.js';
import { OPEN_PAYMENT_STATES, type PaymentRecord } from '../journal/journal.js';
import type { Advanced, PaymentObservation } from '../journal/state-machine.js';
import { DeploymentMismatchError } from './deployment.js';
import { type JournalBinding, throwIfContradicted } from './journal-binding.js';
import { NOT_FOUND_GRACE_MS } from './journaled-initiate.js';
import { WrongBaseUrlError } from './not-found-evidence.js';
import type { CollectionStatus } from './schemas.js';

/** Options of `CollectionsClient.recover`. */
export interface RecoverOptions extends RequestOptions {
  /**
   * A record `initiating` or `unknown` that the service does not hold (its own 404) becomes `not-sent` once it
   * has been untouched for the attempt window of the client that last sent it (recorded with it) plus this long,
   * measured both by the journal's clock and by this process's own monotonic watch of the record (a process that
   * reads it first waits that long once): by then its push cannot still be on its way, and a lagging status read
   * has caught up. A longer grace waits longer; `0` waits for the window alone, never less.
   * @defaultValue `10000`
   */
  notFoundGraceMs?: number | undefined;
  /**
   * How many status checks run at once.
   * @defaultValue `8`
   */
  concurrency?: number | undefined;
}

/**
 * A status check by reference with the call's retries: the status, or the service's own 404 (its request id decides
 * a `not-sent`; `WrongBaseUrlError` for any other 404).
 */
export type RecoverCheck = (referenceId: string, options: RequestOptions) => Promise<CollectionStatus | NotFoundError>;

/**
 * For a service that refuses duplicate references: sends an open record's create again and resolves with the record
 * afterwards, or `undefined` when it may not be resent (then the `'unknown'` rule judges it).
 */
export type RecoverResend = (record: PaymentRecord, options: RequestOptions) => Promise<PaymentRecord | undefined>;

/** Errors that no other record would escape: stop and reject rather than leave every record "unreachable". */
function isFatal(error: unknown): boolean {
  return error instanceof AuthenticationError || error instanceof PermissionDeniedError || error instanceof ConfigurationError;
}

/** Runs `recover()`: see `CollectionsClient.recover`. */
export async function recoverPayments(
  binding: JournalBinding,
  check: RecoverCheck,
  options: RecoverOptions = {},
  resend?: RecoverResend,
): Promise<PaymentRecord[]> {
  const { notFoundGraceMs = NOT_FOUND_GRACE_MS, concurrency = 8, ...requestOptions } = options;
  const issues = [];
  if (typeof notFoundGraceMs !== 'number' || !Number.isFinite(notFoundGraceMs) || notFoundGraceMs < 0) {
    issues.push({ path: 'notFoundGraceMs', message: 'must be a finite number ≥ 0' });
  }
  if (!Number.isInteger(concurrency) || concurrency < 1) issues.push({ path: 'concurrency', message: 'must be an integer ≥ 1' });
  if (issues.length > 0) throw new RequestValidationError(issues, 'recover options');
  requestOptions.signal?.throwIfAborted();

  const open = await binding.use('list the open payments', undefined, (journal) => journal.list({ states: OPEN_PAYMENT_STATES }));
  // Payments this client is sending right now are its own business: their initiate records the outcome.
  const records = open.filter((record) => {
    if (binding.inFlight.has(record.referenceId)) return false;
    if (UUID_PATTERN.test(record.referenceId)) return true;
    // A row the SDK did not write (its id is not a UUID): never requested, reported, the others go on.
    binding.logger.warn('recover: skipped a journal record whose referenceId is not a UUID', {
      referenceId: JSON.stringify(record.referenceId.slice(0, 100)),
    });
    return false;
  });
  const results: PaymentRecord[] = new Array(records.length);
  // Contradictions are said once every other payment has been recovered: one must not hold up the rest.
  const contradictions: PaymentContradictionError[] = [];
  const noteContradiction = (referenceId: string, advanced: Advanced, observation: PaymentObservation) => {
    try {
      throwIfContradicted(referenceId, advanced, observation);
    } catch (error) {
      contradictions.push(error as PaymentContradictionError);
    }
  };

  let next = 0;
  let fatal: { error: unknown } | undefined;
  /**
   * Payments left open because a 404 was not the service's own (a wrong base URL or proxy), or because their push
   * went to another deployment, with the first such error.
   */
  const misdirected: PaymentRecord[] = [];
  let wrongBaseUrl: WrongBaseUrlError | DeploymentMismatchError | undefined;

  const recoverOne = async (record: PaymentRecord): Promise<PaymentRecord> => {
    try {
      // Nothing is asked about a payment pushed to another deployment: that service's answer is no evidence.
      const mismatch = await binding.deploymentMismatch(record);
      if (mismatch !== undefined) throw mismatch;
      return await settleOne(record);
    } catch (error) {
      if (requestOptions.signal?.aborted) throw error;
      if (error instanceof WrongBaseUrlError || error instanceof DeploymentMismatchError) {
        // Said per payment, and the call fails once all were checked: an answer that is not evidence proves nothing.
        wrongBaseUrl ??= error;
        misdirected.push(record);
        binding.logger.error(`recover: ${record.referenceId} left ${record.state}: ${error.message}`);
        return record;
      }
      if (isFatal(error) || error instanceof JournalError) throw error;
      binding.logger.warn(`recover: could not check referenceId ${record.referenceId}; left ${record.state}`, {
        reason: error instanceof Error ? error.message : String(error),
      });
      return record;
    }
  };

  const settleOne = async (record: PaymentRecord): Promise<PaymentRecord> => {
    const status = await check(record.referenceId, requestOptions);
    if (!(status instanceof NotFoundError)) {
      const observation = binding.statusObservation(status);
      const moved = await binding.observe(record.referenceId, observation, 'recover');
      noteContradiction(record.referenceId, moved, observation);
      return moved.record ?? record;
    }
    if (record.state === 'pending') {
      binding.logger.warn(`recover: the service no longer finds referenceId ${record.referenceId}, which it accepted; left pending`);
      return record;
    }
    // A service that refuses duplicates answers the same create at once: no wait for the window to pass.
    const resent = await resend?.(record, requestOptions);
    if (resent !== undefined) return resent;
    // `not-sent` only when the journal's clock proves no attempt can still arrive (see settleNotFound).
    const verdict = await binding.settleNotFound(
      record.referenceId,
      notFoundGraceMs,
      async () => {
        const again = await check(record.referenceId, requestOptions);
        return again instanceof NotFoundError ? { kind: 'not-found', requestId: again.requestId } : binding.statusObservation(again);
      },
      'recover',
    );
    noteContradiction(record.referenceId, verdict, { kind: 'not-found' });
    return verdict.record ?? record;
  };

  const worker = async () => {
    while (fatal === undefined && next < records.length) {
      const index = next++;
      try {
        results[index] = await recoverOne(records[index] as PaymentRecord);
      } catch (error) {
        fatal ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, records.length) }, worker));
  if (fatal !== undefined) throw fatal.error;
  if (wrongBaseUrl !== undefined) throw leftOpen(misdirected, wrongBaseUrl);
  const [contradicted] = contradictions;
  if (contradicted !== undefined) {
    for (const error of contradictions) binding.logger.error(`recover: ${error.message}`);
    throw contradicted;
  }
  return results;
}

/** How many payments the error of a misdirected `recover()` names (the log names every one). */
const NAMED = 20;

/**
 * `recover()`'s error when some answers were no evidence (a 404 not the service's, or a payment pushed to another
 * deployment): every payment so left open, by reference and state, and what the first such error said.
 */
function leftOpen(records: readonly PaymentRecord[], first: WrongBaseUrlError | DeploymentMismatchError): ConfigurationError {
  const named = records.slice(0, NAMED).map((record) => `${record.referenceId} (${record.state})`);
  const more = records.length > NAMED ? ` and ${records.length - NAMED} more (each is in the log)` : '';
  const why =
    first instanceof DeploymentMismatchError
      ? `their push went to another deployment than this client's (first: ${first.recorded.baseUrl}, account ${first.recorded.account}; this client: ${first.configured.baseUrl}, account ${first.configured.account})`
      : 'the base URL does not answer as the Collections API (check baseUrl / COLLECTIONS_BASE_URL and any proxy)';
  return new ConfigurationError(`recover(): ${records.length} payment(s) left open because ${why}: ${named.join(', ')}${more}`, {
    cause: first,
  });
}
