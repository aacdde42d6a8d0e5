/**
 * The Collections status check (`GET /v1/collections/check/:referenceId`) every entry point shares: one request,
 * the check with retries, `checkStatus`'s own path, and the one 404 rule (see docs/internals/assumptions-rationale.md, "One 404 rule").
 *
 * @module
 */
import { JournalError, NotFoundError, RequestValidationError, UnknownOutcomeError } from '../core/errors.js';
import type { CallSettings, Transport } from '../core/transport.js';
import { UUID_PATTERN } from '../core/uuid.js';
import { parseResponse } from '../core/validation.js';
import type { PaymentRecord } from '../journal/journal.js';
import type { JournalBinding } from './journal-binding.js';
import { NOT_FOUND_GRACE_MS } from './journaled-initiate.js';
import { type NotFoundEvidence, notProof, provenNotSent } from './not-found-evidence.js';
import { withRequestId } from './request-id.js';
import { CheckStatusResponseSchema, type CollectionStatus } from './schemas.js';
import type { StatusWords } from './status-words.js';

/** The status check's route template (traces name the route, never a reference). */
export const CHECK_ROUTE = '/v1/collections/check/{referenceId}';

/** The status checks of one client: its transport, status words, journal (if any) and 404 evidence. */
export class StatusChecks {
  readonly #transport: Transport;
  readonly #statusWords: StatusWords;
  readonly #journal: JournalBinding | undefined;
  readonly #evidence: NotFoundEvidence;
  readonly #mayResend: ((record: PaymentRecord) => Promise<boolean>) | undefined;

  /**
   * @param mayResend - True when an open record can still be answered by a resend of its create (a service that
   *   refuses duplicate references): a 404 then never closes it as `not-sent`. Default: never.
   */
  constructor(
    transport: Transport,
    statusWords: StatusWords,
    journal: JournalBinding | undefined,
    evidence: NotFoundEvidence,
    mayResend?: (record: PaymentRecord) => Promise<boolean>,
  ) {
    this.#transport = transport;
    this.#statusWords = statusWords;
    this.#journal = journal;
    this.#evidence = evidence;
    this.#mayResend = mayResend;
  }

  /**
   * A status check with retries: the status, or the service's own 404 when it holds no such collection (a 404 that
   * is evidence, returned for its request id; any other 404 rejects with `ConfigurationError`, see `NotFoundEvidence`).
   */
  async find(referenceId: string, settings: CallSettings): Promise<CollectionStatus | NotFoundError> {
    try {
      return await this.#transport.withRetries(settings, () => this.once(referenceId, settings));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      await this.#evidence.judge(error);
      return error;
    }
  }

  // An arrow made once per client: `traced` runs it without a closure per call when no hooks are configured.
  readonly check = async (settings: CallSettings, reference: string): Promise<CollectionStatus> => {
    try {
      // The first attempt is sent directly; only a failure goes through the retry loop (which sends it no more
      // than the policy allows), so a status answered at once costs no retry closure.
      settings.signal?.throwIfAborted();
      // A payment pushed to another deployment is never asked about here: its answer would be no evidence.
      await this.#journal?.guard(reference);
      let status: CollectionStatus;
      try {
        status = await this.once(reference, settings, 1);
      } catch (error) {
        status = await this.#transport.retryAfterFirst(settings, error, (attemptNumber) => this.once(reference, settings, attemptNumber));
      }
      const journal = this.#journal;
      if (journal !== undefined) await journal.recordStatus(reference, status, 'checkStatus');
      return status;
    } catch (error) {
      if (error instanceof NotFoundError) return this.afterNotFound(reference, error, settings, 'checkStatus');
      throw error;
    }
  };

  /**
   * The one 404 rule of `checkStatus` and `pollUntilSettled` (`recover()` and the worker apply the same rule through
   * the same judgement and `settleNotFound`): resolves with a status the recheck found, or rejects with what the 404
   * means for this payment.
   *
   * - Not the service's own 404 (see `NotFoundEvidence`): `ConfigurationError`, nothing recorded.
   * - No journal, no record, or a record the service accepted (`pending`) or closed: `NotFoundError` saying it is no
   *   proof the push was never sent.
   * - `initiating` / `unknown` that a resend can still answer (`mayResend`): `UnknownOutcomeError`, nothing recorded.
   * - `initiating` / `unknown`, not yet provable by both clocks: `UnknownOutcomeError` with `decidableAt`.
   * - `initiating` / `unknown`, provable, and the recheck answers 404 too: recorded `not-sent`, `NotFoundError` saying so
   *   (also for a record already `not-sent`).
   */
  async afterNotFound(reference: string, error: NotFoundError, settings: CallSettings, by: string): Promise<CollectionStatus> {
    await this.#evidence.judge(error);
    const journal = this.#journal;
    if (journal === undefined) throw notProof(error);
    await journal.guard(reference);
    if (this.#mayResend !== undefined) {
      // A resend can still answer (recover(), the worker, initiate of the payment make it): a 404 closes nothing.
      const record = await journal.use('read the payment', reference, (store) => store.get(reference));
      if (record !== undefined && (record.state === 'initiating' || record.state === 'unknown') && (await this.#mayResend(record))) {
        throw new UnknownOutcomeError(reference, error, undefined, 'not-found');
      }
    }
    let found: CollectionStatus | undefined;
    let verdict: Awaited<ReturnType<JournalBinding['settleNotFound']>>;
    try {
      verdict = await journal.settleNotFound(
        reference,
        NOT_FOUND_GRACE_MS,
        async () => {
          const answer = await this.find(reference, settings);
          if (answer instanceof NotFoundError) return { kind: 'not-found', requestId: answer.requestId };
          found = answer;
          return journal.statusObservation(answer);
        },
        by,
      );
    } catch (failure) {
      if (!(failure instanceof JournalError)) throw failure;
      // The journal cannot say: the 404 stands, for what it is worth (no proof).
      journal.logger.warn(`payment journal: could not judge a 404 for referenceId ${reference}`, { reason: failure.message });
      throw notProof(error);
    }
    if (found !== undefined) return found;
    const record = verdict.record;
    if (record?.state === 'not-sent') throw provenNotSent(error);
    if (record !== undefined && (record.state === 'initiating' || record.state === 'unknown')) {
      throw new UnknownOutcomeError(reference, error, verdict.decidableAt ?? record.decidableAt, 'not-found');
    }
    throw notProof(error);
  }

  /**
   * One status request. A word the status words do not name is warned about here (once per payment and word),
   * except for the poll, whose own `settledStatuses` may name it.
   */
  async once(referenceId: string, settings: CallSettings, attemptNumber = 1, warnUnknown = true): Promise<CollectionStatus> {
    // Encoded even though every caller passes a checked UUID: an id read from a journal is data, never a path.
    const result = await this.#transport.send(
      { method: 'GET', path: `/v1/collections/check/${encodeURIComponent(referenceId)}`, route: CHECK_ROUTE, referenceId },
      settings,
      attemptNumber,
    );
    const status = withRequestId(parseResponse(CheckStatusResponseSchema, result, 'collections').data, result.requestId);
    this.#evidence.markProved();
    if (warnUnknown) this.#statusWords.warnIfUnknown(referenceId, status.statusText, this.#transport.logger);
    return status;
  }
}

/** A reference id checked (a UUID) and in its one form, lower case. */
export function checkReferenceId(referenceId: string): string {
  if (typeof referenceId !== 'string' || !UUID_PATTERN.test(referenceId)) {
    throw new RequestValidationError([{ path: 'referenceId', message: 'must be a UUID' }]);
  }
  return referenceId.toLowerCase();
}
