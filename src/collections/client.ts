/**
 * `CollectionsClient`: the Collections Gateway API (mobile money push payments).
 *
 * @module
 */
import { type ClientOptions, type RequestOptions, resolveConfig } from '../core/config.js';
import {
  ApiError,
  ConfigurationError,
  ConflictError,
  JournalError,
  NotFoundError,
  RequestValidationError,
  ResponseValidationError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../core/errors.js';
import { createOnce } from '../core/idempotent-create.js';
import { type ApiResponse, type RawRequestOptions, rawRequest } from '../core/raw-request.js';
import { attemptWindowMs } from '../core/retry.js';
import { bearerAuth, type CallSettings, type HttpMethod, Transport } from '../core/transport.js';
import { newReferenceId, UUID_PATTERN } from '../core/uuid.js';
import { isWellFormedText, parseInput, parseResponse } from '../core/validation.js';
import type { PaymentJournal, PaymentRecord } from '../journal/journal.js';
import { RecordWatch } from '../journal/record-watch.js';
import { readCollectionsErrorEnvelope } from './envelope.js';
import { JournalBinding } from './journal-binding.js';
import { initiateWithJournal, NOT_FOUND_GRACE_MS } from './journaled-initiate.js';
import { NotFoundEvidence, notProof, provenNotSent } from './not-found-evidence.js';
import { normalizeZambianMobileNumber, type PhoneNumberFormat } from './phone-number.js';
import { type PollOptions, pollUntilSettled } from './poller.js';
import { type RecoverOptions, recoverPayments } from './recover.js';
import {
  CheckStatusResponseSchema,
  type CollectionDetails,
  type CollectionInput,
  CollectionInputSchema,
  type CollectionStatus,
  GetCollectionResponseSchema,
  type HealthStatus,
  InitiateCollectionResponseSchema,
  type InitiatedCollection,
} from './schemas.js';
import {
  type SettlementWorker,
  type SettlementWorkerContext,
  type SettlementWorkerOptions,
  startSettlementWorker,
} from './settlement-worker.js';
import { StatusWords, type StatusWordsOption } from './status-words.js';
import { type WaitForSettlementOptions, waitForSettlement } from './wait-for-settlement.js';
import { WorkerMonitor } from './worker-monitor.js';

/** Options of {@link CollectionsClient}; the environment supplies `COLLECTIONS_API_KEY` and `COLLECTIONS_BASE_URL`. @group Configuration */
export interface CollectionsClientOptions extends ClientOptions {
  /**
   * The form phone numbers are sent in: `'international'` (`260977123456`, the form the Tap API returns)
   * or `'local'` (`0977123456`).
   * @defaultValue `'international'`
   */
  phoneNumberFormat?: PhoneNumberFormat;
  /**
   * The payment journal: `initiate` writes each payment to it before sending, and every outcome after, so
   * {@link CollectionsClient.recover} can bring in-flight payments to their outcome after a crash. See `docs/journal.md`.
   * @defaultValue none (no journal: nothing outlives the process)
   */
  journal?: PaymentJournal;
  /**
   * The status words the service answers, by meaning; each list given is added to its defaults. Compared without
   * regard to case or surrounding blanks; a word may stand in one list only. Every path that reads a status uses
   * them: `pollUntilSettled`, `checkStatus` with a journal, `recover()`, the settlement worker (and so `saleOutcome`
   * of what they record). A word in none of the lists keeps the payment open and is logged at `warn` once per
   * payment and word. See docs/assumptions.md.
   * @defaultValue successful: `successful`, `success`, `completed`; failed: `failed`, `cancelled`, `canceled`,
   * `expired`, `declined`; pending: `pending`, `processing`
   */
  statusWords?: StatusWordsOption;
}

const CREATE_PATH = '/v1/collections/mobile-money';
/** The status check's route template (traces name the route, never a reference). */
const CHECK_ROUTE = '/v1/collections/check/{referenceId}';

/** Characters that would change the path of `GET /v1/collections/:id` if sent as they are. */
const PATH_CHANGING = /[/\\?#]/;

/**
 * The Collections Gateway API: push a mobile money payment request to a customer's phone, then learn
 * how it settled.
 *
 * ```ts
 * const collections = new CollectionsClient({ apiKey: process.env.COLLECTIONS_API_KEY, baseUrl: 'https://sandbox.example' });
 * const { referenceId } = await collections.initiate({ productId, phoneNumber: '0977123456', amount: 25 });
 * const outcome = await collections.pollUntilSettled(referenceId, { onUpdate: (s) => console.log(s.statusText) });
 * ```
 *
 * Sends `Authorization: Bearer <key>` on every request.
 *
 * @group Clients
 */
export class CollectionsClient {
  readonly #transport: Transport;
  readonly #phoneNumberFormat: PhoneNumberFormat;
  readonly #journal: JournalBinding | undefined;
  readonly #statusWords: StatusWords;
  /** Whether a status check's 404 is the service's own answer: the one judgement every entry point uses. */
  readonly #evidence: NotFoundEvidence;

  /**
   * @throws {@link ConfigurationError} on a missing key or base URL, a bad option, or in a browser page
   * without `dangerouslyAllowBrowser`.
   */
  constructor(options?: CollectionsClientOptions) {
    const config = resolveConfig(options, {
      apiKeyVariable: 'COLLECTIONS_API_KEY',
      baseUrlVariable: 'COLLECTIONS_BASE_URL',
      clientName: 'CollectionsClient',
    });
    const format = options?.phoneNumberFormat ?? 'international';
    if (format !== 'international' && format !== 'local') {
      throw new ConfigurationError("Invalid CollectionsClient options: phoneNumberFormat must be 'international' or 'local'");
    }
    this.#phoneNumberFormat = format;
    this.#statusWords = new StatusWords(options?.statusWords);
    this.#transport = new Transport(config, { service: 'collections', auth: bearerAuth, readErrorEnvelope: readCollectionsErrorEnvelope });
    this.#journal =
      options?.journal === undefined ? undefined : new JournalBinding(options.journal, this.#transport.logger, this.#statusWords);
    this.#evidence = new NotFoundEvidence(() => this.health());
  }

  /**
   * Pushes a payment request to the customer's phone (`POST /v1/collections/mobile-money`). Resolves
   * on 202 with every field of its `data` (`{ referenceId, status: 'pending', … }`); learn the outcome with
   * {@link pollUntilSettled}.
   *
   * `referenceId` is generated (UUID v4) when absent and kept for every attempt. After an attempt whose
   * outcome is unknown, the SDK checks the reference before sending again, so the customer is never
   * asked twice.
   *
   * @throws {@link RequestValidationError} on bad input (nothing is sent).
   * @throws {@link UnprocessableEntityError} when the service rejects a field (`errors` names it).
   * @throws {@link UnknownOutcomeError} when the outcome could not be established: keep the `referenceId`,
   * check it later; never resend with a new one. Once an attempt's outcome was unknown, this is how the call
   * ends unless the collection is found (a 404 from a status check that may lag proves nothing).
   */
  async initiate(input: CollectionInput, options?: RequestOptions): Promise<InitiatedCollection> {
    const parsed = parseInput(CollectionInputSchema, input);
    const settings = this.#transport.settingsFor(options);
    // Reference ids are UUIDs compared without regard to case: one form (lower case) at every boundary.
    const referenceId = (parsed.referenceId ?? newReferenceId()).toLowerCase();
    const body = {
      productId: parsed.productId,
      referenceId,
      phoneNumber: normalizeZambianMobileNumber(parsed.phoneNumber, this.#phoneNumberFormat),
      currency: parsed.currency ?? 'ZMW',
      amount: parsed.amount,
      ...(parsed.narration === undefined ? {} : { narration: parsed.narration }),
    };
    const journal = this.#journal;
    return this.#transport.traced('collections.initiate', settings, (settings) => {
      if (journal === undefined) return this.#createCollection(referenceId, body, settings);
      const payment = { ...body, phoneNumber: normalizeZambianMobileNumber(parsed.phoneNumber, 'international') };
      return initiateWithJournal(journal, {
        payment,
        sendWindowMs: sendWindowMs(settings),
        attemptTimeoutMs: settings.timeoutMs,
        send: (beforeAttempt) => this.#createCollection(referenceId, body, settings, beforeAttempt),
        check: () => this.#findStatus(referenceId, settings),
        signal: settings.signal,
      });
    });
  }

  /**
   * The create itself: sent and reconciled by `referenceId`. With a journal, `beforeAttempt` runs before each
   * attempt (the journal's write) and gives the time the attempt must neither leave nor last past; a duplicate
   * answer then always means the reference exists (the journal holds this payment), never "not created".
   */
  #createCollection(
    referenceId: string,
    body: object,
    settings: CallSettings,
    beforeAttempt?: () => Promise<number>,
  ): Promise<InitiatedCollection> {
    const attempt = { ...settings, maxRetries: 0 };
    return createOnce<InitiatedCollection>(this.#transport, settings, {
      referenceId,
      lookupBeforeResend: true,
      duplicateMeansExists: beforeAttempt !== undefined,
      send: async (attemptNumber) => {
        const deadline = await beforeAttempt?.();
        const limited = deadline === undefined ? attempt : { ...attempt, deadline: Math.min(deadline, attempt.deadline ?? deadline) };
        const result = await this.#transport.send({ method: 'POST', path: CREATE_PATH, route: CREATE_PATH, body }, limited, attemptNumber);
        // Every field of the 202's data, including those the document does not list.
        const created = withTextId(parseResponse(InitiateCollectionResponseSchema, result, 'collections').data);
        this.#evidence.markProved();
        return created;
      },
      lookup: async (attemptNumber) => {
        try {
          const status = await this.#checkStatusOnce(referenceId, attempt, attemptNumber);
          return { kind: 'found', result: { referenceId, status: status.statusText } };
        } catch (error) {
          // Not visible yet is no proof of absence (the status check may lag behind the create).
          if (error instanceof NotFoundError) return { kind: 'absent' };
          throw error;
        }
      },
      isDuplicate: isDuplicateReference,
    });
  }

  /**
   * After a restart: checks every open payment of the journal (`initiating`, `pending`, `unknown`) with the service
   * and moves it on: settled → `successful` / `failed`; still pending → `pending`; not held by the service (the
   * service's own 404) while `initiating` or `unknown`, once the record's age passes its sender's attempt window plus
   * `notFoundGraceMs` both by the journal's clock and by this process's own watch of it → `not-sent` (safe to start
   * the sale over); unreachable, or too young → left as it was (`decidableAt` says from when a verdict is possible:
   * after a restart, this process must first watch the record for the window plus the grace, 116 s with the
   * defaults, so call `recover()` again then, or run a settlement worker). Payments this client is sending right now
   * are left to their `initiate`. Resolves with the records it looked at, in their new states, oldest first;
   * `saleOutcome(record)` says what a till shows for each.
   *
   * @throws {@link ConfigurationError} for a client without a journal; also, after every payment was checked, when
   * a status check answered a 404 that is not the Collections service's own (the base URL or a proxy is wrong): the
   * message names `baseUrl` and each payment left open so.
   * @throws {@link JournalError} when the journal cannot be read or written.
   * @throws {@link AuthenticationError} / {@link PermissionDeniedError} when the key cannot check statuses.
   */
  async recover(options?: RecoverOptions): Promise<PaymentRecord[]> {
    if (this.#journal === undefined) {
      throw new ConfigurationError('recover() needs a client with a journal (CollectionsClient option journal)');
    }
    const journal = this.#journal;
    return this.#transport.traced('collections.recover', this.#transport.settingsFor(undefined), ({ operation }) =>
      recoverPayments(
        journal,
        (referenceId, requestOptions) => this.#findStatus(referenceId, { ...this.#transport.settingsFor(requestOptions), operation }),
        options,
      ),
    );
  }

  /**
   * A status check with retries: the status, or `undefined` when the service holds no such collection (a 404 that
   * is evidence; any other 404 rejects with `ConfigurationError`, see `NotFoundEvidence`).
   */
  async #findStatus(referenceId: string, settings: CallSettings): Promise<CollectionStatus | undefined> {
    try {
      return await this.#transport.withRetries(settings, () => this.#checkStatusOnce(referenceId, settings));
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      await this.#evidence.judge(error);
      return undefined;
    }
  }

  /**
   * The collection's status (`GET /v1/collections/check/:referenceId`). `transactionCode` and `reason`
   * may be absent or null while it is pending.
   *
   * A 404 follows the one rule of docs/assumptions.md ("One 404 rule"): with a journal holding the payment
   * `initiating` or `unknown`, it closes the record as `not-sent` only when provable (see `recover()`), and before
   * then rejects with {@link UnknownOutcomeError} carrying `decidableAt`.
   *
   * @throws {@link RequestValidationError} when `referenceId` is not a UUID (nothing is sent).
   * @throws {@link NotFoundError} when the service (its own 404) holds no collection with this reference. That is
   * **no proof the push was never sent** (it may still arrive, or the read lag): never start a sale over on it. Only
   * a journal record in state `not-sent` is (the message then says the journal recorded it).
   * @throws {@link UnknownOutcomeError} with a journal, for a 404 on an `initiating` or `unknown` payment before
   * its `decidableAt`.
   * @throws {@link ConfigurationError} for a 404 that is not the Collections service's answer (no error envelope, or
   * a base URL that has not proved to serve the API): `baseUrl` or a proxy is wrong; nothing is recorded.
   */
  async checkStatus(referenceId: string, options?: RequestOptions): Promise<CollectionStatus> {
    const reference = checkReferenceId(referenceId);
    return this.#transport.traced('collections.checkStatus', this.#transport.settingsFor(options), this.#checkStatus, reference);
  }

  // An arrow made once per client: `traced` runs it without a closure per call when no hooks are configured.
  readonly #checkStatus = async (settings: CallSettings, reference: string): Promise<CollectionStatus> => {
    try {
      // The first attempt is sent directly; only a failure goes through the retry loop (which sends it no more
      // than the policy allows), so a status answered at once costs no retry closure.
      settings.signal?.throwIfAborted();
      let status: CollectionStatus;
      try {
        status = await this.#checkStatusOnce(reference, settings, 1);
      } catch (error) {
        status = await this.#transport.retryAfterFirst(settings, error, (attemptNumber) =>
          this.#checkStatusOnce(reference, settings, attemptNumber),
        );
      }
      const journal = this.#journal;
      if (journal !== undefined) await journal.recordStatus(reference, status, 'checkStatus');
      return status;
    } catch (error) {
      if (error instanceof NotFoundError) return this.#afterNotFound(reference, error, settings, 'checkStatus');
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
   * - `initiating` / `unknown`, not yet provable by both clocks: `UnknownOutcomeError` with `decidableAt`.
   * - `initiating` / `unknown`, provable, and the recheck answers 404 too: recorded `not-sent`, `NotFoundError` saying so
   *   (also for a record already `not-sent`).
   */
  async #afterNotFound(reference: string, error: NotFoundError, settings: CallSettings, by: string): Promise<CollectionStatus> {
    await this.#evidence.judge(error);
    const journal = this.#journal;
    if (journal === undefined) throw notProof(error);
    let found: CollectionStatus | undefined;
    let verdict: Awaited<ReturnType<JournalBinding['settleNotFound']>>;
    try {
      verdict = await journal.settleNotFound(
        reference,
        NOT_FOUND_GRACE_MS,
        async () => {
          found = await this.#findStatus(reference, settings);
          return found === undefined ? 'not-found' : journal.statusObservation(found);
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
      throw new UnknownOutcomeError(reference, error, verdict.decidableAt ?? record.decidableAt);
    }
    throw notProof(error);
  }

  /**
   * One status request. A word the status words do not name is warned about here (once per payment and word),
   * except for the poll, whose own `settledStatuses` may name it.
   */
  async #checkStatusOnce(referenceId: string, settings: CallSettings, attemptNumber = 1, warnUnknown = true): Promise<CollectionStatus> {
    // Encoded even though every caller passes a checked UUID: an id read from a journal is data, never a path.
    const result = await this.#transport.send(
      { method: 'GET', path: `/v1/collections/check/${encodeURIComponent(referenceId)}`, route: CHECK_ROUTE },
      settings,
      attemptNumber,
    );
    const status = parseResponse(CheckStatusResponseSchema, result, 'collections').data;
    this.#evidence.markProved();
    if (warnUnknown) this.#statusWords.warnIfUnknown(referenceId, status.statusText, this.#transport.logger);
    return status;
  }

  /**
   * Waits until the collection settles and resolves with its final status — a successful **or** a
   * failed word of the client's `statusWords` (a failed payment is a result, not an exception). A word in
   * none of the lists keeps it waiting (logged at `warn` once per payment and word).
   *
   * Checks at once, then after `initialDelayMs` (5 s), then every `intervalMs` growing to `maxIntervalMs`
   * (1.5 s → 2 s), jittered. When you set `intervalMs`, it is also the first pause (unless you set
   * `initialDelayMs` too). Network errors, timeouts, 408, 429 (honouring `Retry-After`) and 5xx keep it
   * waiting; 400/401/403/422 end it at once. A 404 follows the one 404 rule (docs/assumptions.md): without a
   * journal (or for a payment the journal does not hold open), it keeps waiting for `notFoundGraceMs` (10 s), then
   * ends with {@link NotFoundError} (no proof the push was never sent); with a journal holding the payment
   * `initiating` or `unknown`, it keeps waiting until a `not-sent` verdict is provable within `maxWaitMs` (then
   * recorded, and the poll ends with a `NotFoundError` saying so), else ends at `maxWaitMs` with
   * {@link UnknownOutcomeError} carrying `decidableAt`. A 404 that is not the service's own ends it at once with
   * {@link ConfigurationError}. `timeoutMs` bounds each status request; retries are the poll's own (`maxRetries` is
   * not used).
   *
   * @throws {@link PollTimeoutError} at `maxWaitMs` (2 min), even with a request in flight. The payment may
   * still settle: keep the `referenceId` and check again later. Its `unrecognizedStatuses` names the words seen
   * that `statusWords` does not.
   * @throws {@link UnknownOutcomeError} at `maxWaitMs`, with a journal, when every answer since the last status was
   * a 404 for an `initiating` or `unknown` payment whose verdict is not yet provable (`decidableAt` says when).
   * @throws {@link RequestValidationError} on a bad option; with a journal, also for a `settledStatuses` word
   * that is not a successful or failed word of `statusWords` (nothing is sent).
   */
  async pollUntilSettled(referenceId: string, options: PollOptions = {}): Promise<CollectionStatus> {
    const reference = checkReferenceId(referenceId);
    return this.#transport.traced('collections.pollUntilSettled', this.#transport.settingsFor(options), (settings) =>
      pollUntilSettled(
        reference,
        async (timeoutMs, deadline) => {
          const once = { ...settings, maxRetries: 0, timeoutMs, deadline };
          let status: CollectionStatus;
          try {
            status = await this.#checkStatusOnce(reference, once, 1, false);
          } catch (error) {
            // Each 404 is judged by the one rule as it comes: a verdict ends the poll, "not yet" keeps it waiting.
            if (error instanceof NotFoundError) return this.#afterNotFound(reference, error, once, 'poll');
            throw error;
          }
          await this.#journal?.recordStatus(reference, status, 'poll');
          return status;
        },
        options,
        settings.timeoutMs,
        this.#transport.logger,
        this.#statusWords,
        this.#journal !== undefined,
      ),
    );
  }

  /**
   * Starts a settlement worker: it settles every open payment of the journal (also those other processes
   * wrote) with one scheduler, at most `requestsPerSecond` status checks in any second (default 10), a
   * pause of every check on a 429, and leases, so workers on several machines share one journal and take
   * over the payments of a worker that died. Call `stop()` on shutdown. See docs/settlement-worker.md.
   *
   * @throws {@link ConfigurationError} when there is no journal to settle.
   * @throws {@link RequestValidationError} naming each bad option.
   */
  startSettlementWorker(options: SettlementWorkerOptions = {}): SettlementWorker {
    const journal = options.journal ?? this.#journal?.journal;
    if (journal === undefined) {
      throw new ConfigurationError('startSettlementWorker() needs a client with a journal (CollectionsClient option journal)');
    }
    const settings = this.#transport.settingsFor(undefined);
    const check: SettlementWorkerContext['check'] = (referenceId, timeoutMs, signal, beforeSend) =>
      this.#checkStatusOnce(referenceId, { ...settings, signal, maxRetries: 0, timeoutMs, beforeSend });
    const context: SettlementWorkerContext = {
      journal,
      check,
      judgeNotFound: (error) => this.#evidence.judge(error),
      // The client's own watch when the worker settles the client's journal: a payment this process wrote counts
      // from its own write. Another journal: a watch of its own.
      watch: journal === this.#journal?.journal ? this.#journal.watch : new RecordWatch(),
      timeoutMs: settings.timeoutMs,
      maxRetryAfterMs: this.#transport.maxRetryAfterMs,
      // The client's check awaits beforeSend where the request leaves: the worker's token is taken there.
      tokenAtSend: true,
      maxRetries: settings.maxRetries,
      logger: this.#transport.logger,
      statusWords: this.#statusWords,
    };
    const hooks = this.#transport.instrumentation;
    if (hooks?.settlementWorker === undefined) return startSettlementWorker(context, options);
    // Instrumented from outside: the same worker, given a counting journal, a timed check and a reporting onSettled.
    const monitor = new WorkerMonitor(journal);
    const worker = startSettlementWorker(
      { ...context, journal: monitor.journal(), check: monitor.check(check) },
      {
        ...options,
        journal: undefined,
        // A bad onSettled is left as given, for the worker's own check to name it.
        onSettled:
          options.onSettled === undefined || typeof options.onSettled === 'function'
            ? monitor.onSettled(options.onSettled)
            : options.onSettled,
      },
    );
    monitor.started(hooks, worker, options.requestsPerSecond ?? 10);
    return worker;
  }

  /**
   * Waits for the journal to record the payment's final state (`successful`, `failed`, `not-sent`, `rejected`),
   * written by any process: a settlement worker, another till, `recover()`. Sends nothing to the service, so a
   * fleet of tills plus one worker makes only the worker's requests. With `PostgresJournal` it listens
   * (`LISTEN`/`NOTIFY`: woken as the state commits); with other journals it reads the journal on a schedule
   * (every 250 ms, slowing to every 2 s).
   *
   * @throws {@link RequestValidationError} when `referenceId` is not a UUID or an option is bad (nothing read).
   * @throws {@link ConfigurationError} for a client without a journal.
   * @throws {@link PollTimeoutError} when no final state was recorded within `maxWaitMs` (default 2 min).
   */
  async waitForSettlement(referenceId: string, options: WaitForSettlementOptions = {}): Promise<PaymentRecord> {
    const reference = checkReferenceId(referenceId);
    if (this.#journal === undefined) {
      throw new ConfigurationError('waitForSettlement() needs a client with a journal (CollectionsClient option journal)');
    }
    return waitForSettlement(this.#journal.journal, reference, options, this.#transport.logger);
  }

  /**
   * The collection's details record (`GET /v1/collections/:id`); its fields are not documented, so its
   * shape is open. The id is percent-encoded.
   *
   * `id` is the service's own identifier of the collection, not its `referenceId`. `initiate` resolves with it
   * as `id` when the 202 carries one; the document's 202 lists only `referenceId` and `status`, so otherwise it
   * comes from outside the API (the gateway's reports or support). To follow a payment you started, use
   * {@link checkStatus} / {@link pollUntilSettled} with its `referenceId`.
   *
   * @throws {@link RequestValidationError} for an id that would change the path: empty, `.`, `..`, or
   * containing `/`, `\`, `?` or `#` (nothing is sent).
   * @throws {@link NotFoundError} when there is no such collection.
   */
  async getById(id: string, options?: RequestOptions): Promise<CollectionDetails> {
    if (typeof id !== 'string' || id === '' || id === '.' || id === '..' || PATH_CHANGING.test(id)) {
      throw new RequestValidationError([{ path: 'id', message: 'must be a non-empty id without /, \\, ? or #, and not . or ..' }]);
    }
    // encodeURIComponent throws a URIError on a lone surrogate: refuse it as the input it is.
    if (!isWellFormedText(id)) throw new RequestValidationError([{ path: 'id', message: 'must be well-formed text (no lone surrogate)' }]);
    const spec = { method: 'GET', path: `/v1/collections/${encodeURIComponent(id)}`, route: '/v1/collections/{id}' } as const;
    return this.#transport.traced('collections.getById', this.#transport.settingsFor(options), async (settings) => {
      const result = await this.#transport.withRetries(settings, (attemptNumber) => this.#transport.send(spec, settings, attemptNumber));
      const details = parseResponse(GetCollectionResponseSchema, result, 'collections').data;
      this.#evidence.markProved();
      return details;
    });
  }

  /**
   * Checks access (`GET /health`): the first call to make with new credentials. Resolves on 2xx with the
   * body (parsed JSON, else the text); its shape is not documented, so it is never validated.
   *
   * @throws {@link AuthenticationError} when the key is missing or invalid.
   */
  async health(options?: RequestOptions): Promise<HealthStatus> {
    const spec = { method: 'GET', path: '/health', route: '/health' } as const;
    return this.#transport.traced('collections.health', this.#transport.settingsFor(options), async (settings) => {
      const result = await this.#transport.withRetries(settings, (attemptNumber) => this.#transport.send(spec, settings, attemptNumber));
      this.#evidence.markProved();
      return result.body;
    });
  }

  /**
   * Checks the configuration before the first sale, as `TapClient.verify()` does for Tap: `GET /health`
   * (the document's access check), then one authenticated status check of a fresh random `referenceId`
   * (`GET /v1/collections/check/:referenceId`), which no collection holds. Call it once at start-up.
   *
   * Resolves when the key is accepted by both and the status check answers as the Collections API does:
   * 404 in its error envelope (no such collection), judged by the same rule as every status check's 404. The
   * status check proves what `/health` cannot: that the key may read collections, and that the Collections routes
   * live under `baseUrl`. Nothing is created or journaled.
   *
   * @throws {@link ConfigurationError} when `baseUrl` does not serve the Collections API: `/health` or the
   * status check answered 404 or 405 as a server without those routes does (a 404 without the Collections error
   * envelope, or one naming a route), or a 2xx that is not a collection status. `cause` holds the original error.
   * @throws {@link AuthenticationError} when the key is missing, invalid, revoked or expired (401).
   * @throws {@link PermissionDeniedError} when the key may not check collections (403).
   * @throws {@link ConnectionError} / {@link TimeoutError} when the service cannot be reached.
   */
  async verify(options?: RequestOptions): Promise<void> {
    const notCollections = (request: string, answer: string, cause: unknown) =>
      new ConfigurationError(
        `CollectionsClient: the base URL does not serve the Collections API: ${request} answered ${answer}. Check baseUrl / COLLECTIONS_BASE_URL.`,
        { cause },
      );
    try {
      await this.health(options);
    } catch (error) {
      if (error instanceof ApiError && (error.status === 404 || error.status === 405)) {
        throw notCollections('GET /health', `HTTP ${error.status}`, error);
      }
      throw error;
    }
    const settings = this.#transport.settingsFor(options);
    const probe = 'GET /v1/collections/check/<a random referenceId>';
    const referenceId = newReferenceId();
    try {
      await this.#transport.withRetries(settings, (attemptNumber) => this.#checkStatusOnce(referenceId, settings, attemptNumber));
    } catch (error) {
      // The service's "no such collection" is its error envelope; a server without the route answers HTML, text,
      // nothing, or another service's envelope: the one judgement of a 404 says which (`/health` proved the URL).
      if (error instanceof NotFoundError) {
        await this.#evidence.judge(error);
        return;
      }
      if (error instanceof ApiError && error.status === 405) throw notCollections(probe, `HTTP ${error.status}`, error);
      if (error instanceof ResponseValidationError) throw notCollections(probe, 'a body that is not a collection status', error);
      throw error;
    }
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

/**
 * How long after an attempt's journal write a push of this call can still reach the service: every attempt's
 * time limit and the backoff between them (3 × 30 s + 2 × 8 s with the defaults).
 */
function sendWindowMs(settings: CallSettings): number {
  return attemptWindowMs(settings.maxRetries, settings.timeoutMs);
}

/**
 * The 202's undocumented `id` as `getById` takes it: text kept, a number as its decimal text, anything else left out
 * (a create the service accepted must never fail over a field the document does not even list).
 */
function withTextId(data: Record<string, unknown> & { referenceId: string; status: string }): InitiatedCollection {
  const { id, ...rest } = data;
  if (typeof id === 'string' && id !== '') return { ...rest, id };
  if (typeof id === 'number' && Number.isFinite(id)) return { ...rest, id: String(id) };
  return rest;
}

/** A reference id checked (a UUID) and in its one form, lower case. */
function checkReferenceId(referenceId: string): string {
  if (typeof referenceId !== 'string' || !UUID_PATTERN.test(referenceId)) {
    throw new RequestValidationError([{ path: 'referenceId', message: 'must be a UUID' }]);
  }
  return referenceId.toLowerCase();
}

/**
 * The service's answer to a reference used before. Not documented: read as 409, or a 422 whose
 * `errors[]` flags `referenceId` with a uniqueness rule.
 */
function isDuplicateReference(error: unknown): boolean {
  if (error instanceof ConflictError) return true;
  return (
    error instanceof UnprocessableEntityError &&
    error.errors.some((item) => /referenceId$/i.test(item.field) && /unique|exist|duplicate/i.test(item.rule))
  );
}
