/**
 * `CollectionsClient`: the Collections Gateway API (mobile money push payments).
 *
 * About 470 lines, one concern: the client's options and its public methods, each delegating (the create to
 * `create-collection.ts`, status checks and the 404 rule to `status-checks.ts`, the budget to `budget-options.ts`,
 * the instrumented worker to `worker-monitor.ts`); most of the length is the methods' TSDoc.
 *
 * @module
 */
import type { ClientOptions, RequestOptions } from '../core/config.js';
import { isTimerMs, MAX_TIMER_MS, resolveConfig } from '../core/config.js';
import {
  ApiError,
  ConfigurationError,
  JournalError,
  NotFoundError,
  RequestValidationError,
  ResponseValidationError,
} from '../core/errors.js';
import { monotonicNow } from '../core/monotonic.js';
import { type ApiResponse, type RawRequestOptions, rawRequest } from '../core/raw-request.js';
import { bearerAuth, type CallSettings, type HttpMethod, Transport } from '../core/transport.js';
import { newReferenceId } from '../core/uuid.js';
import { isWellFormedText, parseInput, parseResponse } from '../core/validation.js';
import type { PaymentJournal, PaymentRecord } from '../journal/journal.js';
import { sharedBudgetsOf } from './budget-options.js';
import { createCollection, sendWindowMs } from './create-collection.js';
import { ClientDeployment } from './deployment.js';
import { readCollectionsErrorEnvelope } from './envelope.js';
import { JournalBinding, watchOf } from './journal-binding.js';
import { initiateWithJournal, type RecordResender, resendRecord } from './journaled-initiate.js';
import { NotFoundEvidence } from './not-found-evidence.js';
import { normalizeZambianMobileNumber, type PhoneNumberFormat } from './phone-number.js';
import { type PollOptions, pollUntilSettled } from './poller.js';
import { type RecoverOptions, recoverPayments } from './recover.js';
import { DEFAULT_DUPLICATE_MEMORY_MS, rebuildCreate } from './resend.js';
import {
  type CollectionDetails,
  type CollectionInput,
  CollectionInputSchema,
  type CollectionStatus,
  GetCollectionResponseSchema,
  type HealthStatus,
  type InitiatedCollection,
} from './schemas.js';
import { sealPhoneNumber } from './sealed-number.js';
import {
  type SettlementWorker,
  type SettlementWorkerContext,
  type SettlementWorkerOptions,
  startSettlementWorker,
} from './settlement-worker.js';
import { checkReferenceId, StatusChecks } from './status-checks.js';
import { StatusWords, type StatusWordsOption } from './status-words.js';
import { type WaitForSettlementOptions, waitForSettlement } from './wait-for-settlement.js';
import { startMonitoredWorker } from './worker-monitor.js';

/** Options of {@link CollectionsClient}; the environment supplies `COLLECTIONS_API_KEY` and `COLLECTIONS_BASE_URL`. @group Configuration */
export interface CollectionsClientOptions extends ClientOptions {
  /**
   * The form phone numbers are sent in: `'international'` (`260977123456`, the form the Tap API returns)
   * or `'local'` (`0977123456`).
   * @defaultValue `'international'`
   */
  phoneNumberFormat?: PhoneNumberFormat | undefined;
  /**
   * The payment journal: `initiate` writes each payment to it before sending, and every outcome after, so
   * {@link CollectionsClient.recover} can bring in-flight payments to their outcome after a crash. See `docs/guide/journal.md`.
   * Needs Web Crypto (`globalThis.crypto.subtle`), which the client checks at construction.
   * @defaultValue none (no journal: nothing outlives the process)
   */
  journal?: PaymentJournal | undefined;
  /**
   * The status words the service answers, by meaning; each list given is added to its defaults. Compared without
   * regard to case or surrounding blanks; a word may stand in one list only. Every path that reads a status uses
   * them: `pollUntilSettled`, `checkStatus` with a journal, `recover()`, the settlement worker (and so `saleOutcome`
   * of what they record). A word in none of the lists keeps the payment open and is logged at `warn` once per
   * payment and word. See docs/guide/assumptions.md.
   * @defaultValue successful: `successful`, `success`, `completed`; failed: `failed`, `cancelled`, `canceled`,
   * `expired`, `declined`; pending: `pending`, `processing`
   */
  statusWords?: StatusWordsOption | undefined;
  /**
   * The API key's rate budget, shared by the fleet through the journal: every request of every client that sets it
   * with the same key on the same journal (creates, status checks, polls, every settlement worker's checks; in every
   * process on a `PostgresJournal`, the processes of one machine on a `SqliteJournal`, the clients of one process on a
   * `MemoryJournal`) stays within it in every 1 s window. Creates go first. `'adaptive'`: the fleet learns the limit,
   * raising its rate while the service accepts and cutting it on 429s. A settlement worker's own `requestsPerSecond`
   * is then a cap for that worker within this budget. Needs a journal that keeps budgets (`takeBudget`; every shipped
   * store does), else {@link ConfigurationError}. See docs/guide/settlement-worker.md ("One budget per API key").
   * @defaultValue none (no shared budget: each settlement worker keeps its own, tills are not limited)
   */
  requestsPerSecond?: number | 'adaptive' | undefined;
  /**
   * How long the journal counts this process's share of the shared budget without a renewal (renewed every 2 s, or
   * every `(budgetLeaseMs − 3020) / 2` ms when that is shorter): a process that dies leaves its share to the others
   * within it. At least 5000.
   * @defaultValue 10000
   */
  budgetLeaseMs?: number | undefined;
  /**
   * The name of the API key's account, e.g. `acme-production`. Each journaled payment records the deployment its push
   * went to (the base URL and this account), and only answers from that deployment move it: a client configured for
   * another (the sandbox's base URL, another account's key) leaves it open and says so. Named, records are tied to
   * the account, not to a key, so rotating the key changes nothing. At most 100 characters, no control characters.
   * @defaultValue none: the account is the key's identity (`key:` and 16 hex digits of an HMAC under the key, from
   * which the key cannot be learnt); every key the client's key function returns in this process counts as the same
   * account, and keys used before a restart are declared with `formerAccounts`. See docs/guide/journal.md.
   */
  account?: string | undefined;
  /**
   * Account identities this client also answers for, as a `ConfigurationError` or `journal show` prints them (e.g.
   * `key:3f9c0a17b2d4e681` for a key rotated away before a restart, or an earlier `account` name): payments pushed
   * under them, to this client's base URL, are settled by this client.
   * @defaultValue none
   */
  formerAccounts?: readonly string[] | undefined;
  /**
   * What the Collections service does with a second create for a `referenceId` it already holds.
   *
   * - `'unknown'`: the document does not say, so after an attempt whose outcome is unknown (a dropped connection, a
   *   timeout, 408, 5xx) the SDK never sends the create again: it checks the reference, and a payment it cannot find
   *   stays open until its sender's attempt window plus a grace has passed (about 2 minutes with the defaults).
   * - `'refused'`: you state that the service refuses it with 409 (or a 422 naming `referenceId`) in its error
   *   envelope, as MTN MoMo's API and most payment gateways do. Then the same create (same `referenceId`, the very same
   *   body) is sent again after the usual backoff, and the answer decides at once: a duplicate answer means the
   *   collection exists (`pending`). With a journal, `initiate` keeps the customer's number sealed in the record
   *   (AES-GCM under a key derived from the API key), so `recover()`, the settlement worker and a second `initiate`
   *   of the payment resend it too instead of waiting.
   *
   * **The mode is safe only if the service really refuses duplicates.** A service that stores a second create with
   * the same reference charges the customer twice in this mode. Check it against the sandbox with
   * `tap-collections-sdk probe duplicates --yes --product-id <uuid> --phone <number>` or from the provider's documents
   * before setting it. See docs/guide/cashier-mode.md.
   * @defaultValue `'unknown'`
   */
  duplicateReferences?: 'refused' | 'unknown' | undefined;
  /**
   * With `duplicateReferences: 'refused'`: how long the service remembers a reference, in milliseconds. A journal record
   * first written longer ago than this (by the journal's clock) is not resent: it is judged by the `'unknown'` rule.
   * Within one call, a resend leaves only if its attempt ends within this long of the call's start (of the record's
   * first write, for a record resent); past it the call checks the reference instead (found, or `UnknownOutcomeError`).
   * A whole number from 1 to 2 147 483 647.
   * @defaultValue `86400000` (24 h)
   */
  duplicateMemoryMs?: number | undefined;
}

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
  readonly #checks: StatusChecks;
  /** Where this client's pushes go (its base URL and account): the one check that an answer is about a record. */
  readonly #deployment: ClientDeployment;
  /** How the service treats a second create for a reference it holds (`duplicateReferences`). */
  readonly #duplicates: 'refused' | 'unknown';
  readonly #duplicateMemoryMs: number;

  /**
   * @throws {@link ConfigurationError} on a missing key or base URL, a bad option, a journal in a runtime without Web Crypto, or in a browser page
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
    this.#duplicates = options?.duplicateReferences ?? 'unknown';
    if (this.#duplicates !== 'refused' && this.#duplicates !== 'unknown') {
      throw new ConfigurationError("Invalid CollectionsClient options: duplicateReferences must be 'refused' or 'unknown'");
    }
    this.#duplicateMemoryMs = options?.duplicateMemoryMs ?? DEFAULT_DUPLICATE_MEMORY_MS;
    if (!isTimerMs(this.#duplicateMemoryMs)) {
      throw new ConfigurationError(
        `Invalid CollectionsClient options: duplicateMemoryMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
      );
    }
    this.#statusWords = new StatusWords(options?.statusWords);
    this.#transport = new Transport(config, { service: 'collections', auth: bearerAuth, readErrorEnvelope: readCollectionsErrorEnvelope });
    const transport = this.#transport;
    const deployment = new ClientDeployment(config.baseUrl, options, config.apiKey, () =>
      transport.apiKey(transport.settingsFor(undefined)),
    );
    this.#transport.onKey((apiKey) => deployment.noteKey(apiKey));
    this.#deployment = deployment;
    if (options?.journal !== undefined && typeof globalThis.crypto?.subtle?.importKey !== 'function') {
      // Each record carries HMACs (the payment's fingerprint, the key's account): without Web Crypto the first
      // initiate would fail with a bare TypeError instead of saying why.
      throw new ConfigurationError(
        'Invalid CollectionsClient options: journal needs Web Crypto (globalThis.crypto.subtle), which this runtime does not offer; a browser offers it only to pages served over https or from localhost',
      );
    }
    this.#journal =
      options?.journal === undefined
        ? undefined
        : new JournalBinding(options.journal, this.#transport.logger, this.#statusWords, deployment);
    this.#evidence = new NotFoundEvidence(() => this.health(), config.baseUrl);
    const journal = this.#journal;
    this.#checks = new StatusChecks(
      this.#transport,
      this.#statusWords,
      journal,
      this.#evidence,
      journal === undefined || this.#duplicates !== 'refused' ? undefined : (record) => this.#mayResend(journal, record),
    );
    const budgets = sharedBudgetsOf(options, this.#transport.logger);
    if (budgets !== undefined) this.#transport.useSharedBudgets(budgets);
  }

  /**
   * Pushes a payment request to the customer's phone (`POST /v1/collections/mobile-money`). Resolves
   * on 202 with every field of its `data` (`{ referenceId, status: 'pending', … }`); learn the outcome with
   * {@link pollUntilSettled}.
   *
   * `referenceId` is generated (UUID v4) when absent and kept for every attempt. After an attempt whose
   * outcome is unknown, the SDK checks the reference instead of sending again, so the customer is never
   * asked twice. With `duplicateReferences: 'refused'` it sends the same create again instead, and a duplicate
   * answer in the service's envelope resolves `{ referenceId, status: 'pending' }` (see the option).
   *
   * @throws {@link RequestValidationError} on bad input (nothing is sent).
   * @throws {@link ConfigurationError} with a journal, for a payment already in it whose push went to another
   * deployment (another base URL or account): nothing is sent, the record stays; the message names both.
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
    // The service's memory of the reference runs from the first push's commit, which comes after this reading.
    const duplicates = { duplicateReferences: this.#duplicates, rememberedUntil: monotonicNow() + this.#duplicateMemoryMs };
    return this.#transport.traced(
      'collections.initiate',
      settings,
      async (settings) => {
        if (journal === undefined) {
          return createCollection(this.#transport, this.#checks, this.#evidence, referenceId, body, settings, undefined, duplicates);
        }
        const payment = { ...body, phoneNumber: normalizeZambianMobileNumber(parsed.phoneNumber, 'international') };
        const resend = this.#resender(settings);
        return initiateWithJournal(journal, {
          payment,
          sendWindowMs: sendWindowMs(settings),
          attemptTimeoutMs: settings.timeoutMs,
          send: (beforeAttempt) =>
            createCollection(this.#transport, this.#checks, this.#evidence, referenceId, body, settings, beforeAttempt, duplicates),
          check: async () => {
            const found = await this.#checks.find(referenceId, settings);
            return found instanceof NotFoundError ? undefined : found;
          },
          signal: settings.signal,
          resend,
          // Only a body the record can rebuild byte for byte is sealed (a narration the journal scrubs cannot be).
          sealedPhoneNumber:
            resend === undefined || (body.narration !== undefined && journal.scrubText(body.narration) !== body.narration)
              ? undefined
              : await this.#seal(referenceId, body.phoneNumber, settings),
        });
      },
      undefined,
      { referenceId },
    );
  }

  /**
   * The number sealed for the record (see `sealPhoneNumber`), or `undefined` when the API key cannot be read now (a key
   * function that fails or is slow): the record then follows the `'unknown'` rule, and the call goes on as it would
   * (its own attempts read the key again, and fail as they always did if it still cannot be read).
   */
  async #seal(referenceId: string, phoneNumber: string, settings: CallSettings): Promise<string | undefined> {
    try {
      return await sealPhoneNumber(await this.#transport.apiKey(settings), referenceId, phoneNumber);
    } catch {
      this.#transport.logger.warn(`payment ${referenceId}: the API key could not be read to seal its number; it will not be resent`);
      return undefined;
    }
  }

  /** How this client resends an open record's create, when its service refuses duplicates; else `undefined`. */
  #resender(settings: CallSettings): RecordResender | undefined {
    if (this.#duplicates !== 'refused') return undefined;
    return {
      rule: {
        deploymentMismatch: (record) => this.#deployment.mismatch(record),
        duplicateMemoryMs: this.#duplicateMemoryMs,
        apiKey: () => this.#transport.apiKey(settings),
        logger: this.#transport.logger,
      },
      sendWindowMs: sendWindowMs(settings),
      attemptTimeoutMs: settings.timeoutMs,
      send: (body, beforeAttempt, rememberedUntil) =>
        createCollection(this.#transport, this.#checks, this.#evidence, body.referenceId, body, settings, beforeAttempt, {
          duplicateReferences: 'refused',
          resending: true,
          rememberedUntil,
        }),
    };
  }

  /** True when `record`'s create can be resent by this client (see `rebuildCreate`). */
  async #mayResend(journal: JournalBinding, record: PaymentRecord): Promise<boolean> {
    const resender = this.#resender(this.#transport.settingsFor(undefined));
    if (resender === undefined) return false;
    const now = await journal.use('read the clock', record.referenceId, (store) => store.now());
    return (await rebuildCreate(record, resender.rule, now)) !== undefined;
  }

  /**
   * Resends an open record's create (see `resendRecord`) unless this client is sending it now: the record afterwards
   * and whether this call sent it (`sent`; false when another writer moved it first), or `undefined` when it may not
   * be resent. The answer is recorded; a failure other than the journal's leaves the record as the journal holds it.
   */
  async #resendOpen(
    journal: JournalBinding,
    record: PaymentRecord,
    by: string,
    settings: CallSettings,
  ): Promise<{ record: PaymentRecord; sent: boolean } | undefined> {
    const resender = this.#resender(settings);
    if (resender === undefined || this.#journal?.inFlight.has(record.referenceId)) return undefined;
    let sent = false;
    try {
      const resent = await resendRecord(journal, resender, record, by, () => {
        sent = true;
      });
      return resent === undefined ? undefined : { record: resent.record ?? record, sent };
    } catch (error) {
      if (error instanceof JournalError || settings.signal?.aborted) throw error;
      const now = await journal.use('read the payment', record.referenceId, (store) => store.get(record.referenceId));
      return { record: now ?? record, sent };
    }
  }

  /**
   * After a restart: checks every open payment of the journal (`initiating`, `pending`, `unknown`) with the service
   * and moves it on: settled → `successful` / `failed`; still pending → `pending`; not held by the service (the
   * service's own 404) while `initiating` or `unknown`, once the record's age passes its sender's attempt window plus
   * `notFoundGraceMs` both by the journal's clock and by this process's own watch of it → `not-sent` (safe to start
   * the sale over); unreachable, or too young → left as it was (`decidableAt` says from when a verdict is possible:
   * after a restart, this process must first watch the record for the window plus the grace, 116 s with the
   * defaults, so call `recover()` again then, or run a settlement worker). Payments this client is sending right now
   * are left to their `initiate`. With `duplicateReferences: 'refused'`, an `initiating` or `unknown` record the service
   * does not show is resent at once instead (the same create, rebuilt from the record and its sealed number): 202 or
   * a duplicate answer → `pending`, a definite refusal → `rejected`, unknown again → left open; a record that cannot be
   * resent here (older than `duplicateMemoryMs`, sealed under another key, pushed to another base URL) follows the
   * rule above. Resolves with the records it looked at, in their new states, oldest first;
   * `saleOutcome(record)` says what a till shows for each.
   *
   * @throws {@link ConfigurationError} for a client without a journal; also, after every payment was checked, when
   * a status check answered a 404 that is not the Collections service's own (the base URL or a proxy is wrong): the
   * message names `baseUrl` and each payment left open so; likewise for payments whose push went to another
   * deployment than this client's (another base URL or account, see the option `account`): nothing is asked about
   * them, and the message names both deployments.
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
        (referenceId, requestOptions) => this.#checks.find(referenceId, { ...this.#transport.settingsFor(requestOptions), operation }),
        options,
        async (record, requestOptions) =>
          (await this.#resendOpen(journal, record, 'recover', { ...this.#transport.settingsFor(requestOptions), operation }))?.record,
      ),
    );
  }

  /**
   * The collection's status (`GET /v1/collections/check/:referenceId`). `transactionCode` and `reason`
   * may be absent or null while it is pending.
   *
   * A 404 follows the one 404 rule (docs/guide/journal.md, "Evidence for not-sent"): with a journal holding the payment
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
   * a base URL that has not proved to serve the API): `baseUrl` or a proxy is wrong; nothing is recorded. Also, with a
   * journal, for a payment pushed to another deployment (another base URL or account): nothing is sent, and the
   * message names both deployments.
   */
  async checkStatus(referenceId: string, options?: RequestOptions): Promise<CollectionStatus> {
    const reference = checkReferenceId(referenceId);
    return this.#transport.traced('collections.checkStatus', this.#transport.settingsFor(options), this.#checks.check, reference, {
      referenceId: reference,
    });
  }

  /**
   * Waits until the collection settles and resolves with its final status — a successful **or** a
   * failed word of the client's `statusWords` (a failed payment is a result, not an exception). A word in
   * none of the lists keeps it waiting (logged at `warn` once per payment and word).
   *
   * Checks at once, then after `initialDelayMs` (5 s), then every `intervalMs` growing to `maxIntervalMs`
   * (1.5 s → 2 s), jittered. When you set `intervalMs`, it is also the first pause (unless you set
   * `initialDelayMs` too). Network errors, timeouts, 408, 429 (honouring `Retry-After`) and 5xx keep it
   * waiting; 400/401/403/422 end it at once. A 404 follows the one 404 rule (docs/guide/journal.md): without a
   * journal (or for a payment the journal does not hold open), it keeps waiting for `notFoundGraceMs` (10 s), then
   * ends with {@link NotFoundError} (no proof the push was never sent); with a journal holding the payment
   * `initiating` or `unknown`, it keeps waiting until a `not-sent` verdict is provable within `maxWaitMs` (then
   * recorded, and the poll ends with a `NotFoundError` saying so), else ends at `maxWaitMs` with
   * {@link UnknownOutcomeError} carrying `decidableAt`. A 404 that is not the service's own ends it at once with
   * {@link ConfigurationError}, as does, with a journal, a payment pushed to another deployment (nothing is sent). `timeoutMs` bounds each status request; retries are the poll's own (`maxRetries` is
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
    return this.#transport.traced(
      'collections.pollUntilSettled',
      this.#transport.settingsFor(options),
      (settings) => {
        // The record's deployment is read once, before the first check (it never changes): a payment pushed to
        // another deployment is never asked about here.
        let guarded = this.#journal === undefined;
        return pollUntilSettled(
          reference,
          async (timeoutMs, deadline) => {
            if (!guarded) {
              await this.#journal?.guard(reference);
              guarded = true;
            }
            const once = { ...settings, maxRetries: 0, timeoutMs, deadline };
            let status: CollectionStatus;
            try {
              status = await this.#checks.once(reference, once, 1, false);
            } catch (error) {
              // Each 404 is judged by the one rule as it comes: a verdict ends the poll, "not yet" keeps it waiting.
              if (error instanceof NotFoundError) return this.#checks.afterNotFound(reference, error, once, 'poll');
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
        );
      },
      undefined,
      { referenceId: reference },
    );
  }

  /**
   * Starts a settlement worker: it settles every open payment of the journal (also those other processes
   * wrote) with one scheduler, at most `requestsPerSecond` status checks in any second (default 10), a
   * pause of every check on a 429, and leases, so workers on several machines share one journal and take
   * over the payments of a worker that died. Call `stop()` on shutdown. See docs/guide/settlement-worker.md.
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
    // Each check is an operation of its own, about its payment: a tracer can file it under the payment.
    const check: SettlementWorkerContext['check'] = (referenceId, timeoutMs, signal, beforeSend) =>
      this.#transport.traced(
        'collections.settlementWorker.check',
        { ...settings, signal, maxRetries: 0, timeoutMs, beforeSend },
        (checkSettings) => this.#checks.once(referenceId, checkSettings),
        undefined,
        { referenceId, background: true },
      );
    const context: SettlementWorkerContext = {
      journal,
      check,
      judgeNotFound: (error) => this.#evidence.judge(error),
      // The journal's one watch in this process: a payment any client here wrote or read counts from then.
      watch: watchOf(journal),
      deploymentMismatch: (record) => this.#deployment.mismatch(record),
      timeoutMs: settings.timeoutMs,
      maxRetryAfterMs: this.#transport.maxRetryAfterMs,
      // The client's check awaits beforeSend where the request leaves: the worker's token is taken there.
      tokenAtSend: true,
      maxRetries: settings.maxRetries,
      logger: this.#transport.logger,
      statusWords: this.#statusWords,
      // The worker resends through the journal it settles, and never a payment this client is sending right now.
      resend:
        this.#duplicates === 'refused'
          ? (record, by, signal) =>
              this.#resendOpen(
                journal === this.#journal?.journal
                  ? this.#journal
                  : new JournalBinding(journal, this.#transport.logger, this.#statusWords, this.#deployment),
                record,
                by,
                { ...settings, signal },
              )
          : undefined,
    };
    const hooks = this.#transport.instrumentation;
    if (hooks?.settlementWorker === undefined) return startSettlementWorker(context, options);
    return startMonitoredWorker(context, options, hooks);
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
      await this.#transport.withRetries(settings, (attemptNumber) => this.#checks.once(referenceId, settings, attemptNumber));
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
