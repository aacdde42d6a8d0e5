/**
 * A `CollectionsClient`'s link to its payment journal: reads and writes that fail as `JournalError`, the
 * payments this client is sending right now, and the recording of what the client learns, every change
 * through the one state machine (`src/journal/state-machine.ts`).
 *
 * @module
 */
import { ApiError, ConfigurationError, JournalError, PaymentContradictionError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import type { PaymentError, PaymentJournal, PaymentRecord } from '../journal/journal.js';
import { RecordWatch } from '../journal/record-watch.js';
import {
  type Advanced,
  advance,
  type NotFoundVerdict,
  type PaymentObservation,
  type RecheckStatus,
  settleNotFound,
  verdictBound,
} from '../journal/state-machine.js';
import type { ClientDeployment } from './deployment.js';
import type { CollectionStatus } from './schemas.js';
import type { StatusWords } from './status-words.js';

const JOURNAL_METHODS = ['insert', 'transition', 'now', 'get', 'list', 'history'] as const;

/** The watch of each journal object in this process: every client (and worker) on one journal shares it. */
const WATCHES = new WeakMap<object, RecordWatch>();

/**
 * This process's one watch of `journal`'s open records: a record one client wrote or read counts as watched by every
 * client of the process on that journal, so an app that builds a client per request still reaches a verdict.
 */
export function watchOf(journal: object): RecordWatch {
  let watch = WATCHES.get(journal);
  if (watch === undefined) {
    watch = new RecordWatch();
    WATCHES.set(journal, watch);
  }
  return watch;
}

/** The journal as the client uses it. */
export class JournalBinding {
  readonly journal: PaymentJournal;
  readonly logger: LevelLogger;
  /** The client's status words: the one mapping of a status answer to a state. */
  readonly statusWords: StatusWords;
  /** Payments whose `initiate` runs in this client now: `recover()` leaves them alone, a second call waits. */
  readonly inFlight = new Map<string, Promise<unknown>>();
  /**
   * This process's own watch of the open records it wrote or read (the second measure of a record's age before
   * `not-sent`; see `RecordWatch`): the journal's, shared by every client and settlement worker of the process on it.
   */
  readonly watch: RecordWatch;
  /** Where the client's pushes go: written into each new record, and checked before any answer moves one. */
  readonly deployment: ClientDeployment;

  /** @param watch - The process's watch of open records (by default the journal's, see {@link watchOf}). */
  constructor(journal: unknown, logger: LevelLogger, statusWords: StatusWords, deployment: ClientDeployment, watch?: RecordWatch) {
    if (!isPaymentJournal(journal)) {
      throw new ConfigurationError(
        `Invalid CollectionsClient options: journal must be a PaymentJournal (${JOURNAL_METHODS.join(', ')}; see checkPaymentJournal)`,
      );
    }
    this.journal = journal;
    this.logger = logger;
    this.statusWords = statusWords;
    this.deployment = deployment;
    this.watch = watch ?? watchOf(journal);
  }

  /**
   * Whether this client's answers are evidence about `record`: `undefined` when they are (its push went to this
   * client's base URL and account, or it predates deployments), else the {@link ConfigurationError} (a
   * `DeploymentMismatchError`) naming both base URLs and both account identities. Every path that sends a request
   * about a journaled payment (a status check, a resend) asks this first, and sends nothing when it is defined.
   */
  deploymentMismatch(record: PaymentRecord): Promise<ConfigurationError | undefined> {
    return this.deployment.mismatch(record);
  }

  /**
   * Rejects with the record's {@link deploymentMismatch} before a request about `referenceId` leaves; resolves when
   * the journal does not hold it, or its push went to this client's deployment.
   */
  async guard(referenceId: string): Promise<void> {
    const record = await this.use('read the payment', referenceId, (journal) => journal.get(referenceId));
    const mismatch = record === undefined ? undefined : await this.deploymentMismatch(record);
    if (mismatch !== undefined) throw mismatch;
  }

  /** Runs a journal operation; its failure becomes a {@link JournalError} saying what could not be done. */
  async use<T>(what: string, referenceId: string | undefined, operation: (journal: PaymentJournal) => Promise<T>): Promise<T> {
    try {
      return await operation(this.journal);
    } catch (error) {
      if (error instanceof JournalError) throw error;
      throw new JournalError(`Payment journal: could not ${what}`, referenceId, error);
    }
  }

  /** Moves the record by what was learnt (see `advance`); a journal failure is a {@link JournalError}. */
  async observe(referenceId: string, observation: PaymentObservation, by: string, basedOn?: PaymentRecord): Promise<Advanced> {
    const scrubbed = scrubObservation(observation, this.logger);
    const moved = await this.use(`record ${observation.kind}`, referenceId, (journal) =>
      advance(journal, referenceId, scrubbed, by, basedOn),
    );
    if (moved.applied && moved.record !== undefined) this.wrote(moved.record);
    return moved;
  }

  /** A record this process wrote: an open one's watch counts from this write. */
  wrote(record: PaymentRecord): void {
    if (record.state === 'initiating' || record.state === 'unknown') this.watch.watched(record);
    else this.watch.forget(record.referenceId);
  }

  /**
   * Records what the service said after a request left: a failure here must not turn a known answer into an
   * error (the payment was sent either way), so it is logged, and `recover()` or the worker brings the record
   * up to date later.
   */
  async observeAfterSending(
    referenceId: string,
    observation: PaymentObservation,
    by: string,
    basedOn?: PaymentRecord,
  ): Promise<Advanced | undefined> {
    let advanced: Advanced;
    try {
      advanced = await this.observe(referenceId, observation, by, basedOn);
    } catch (error) {
      this.logger.error(`payment journal: could not record ${observation.kind} for referenceId ${referenceId}; recover() will`, {
        reason: error instanceof JournalError && error.cause instanceof Error ? error.cause.message : String(error),
      });
      return undefined;
    }
    throwIfContradicted(referenceId, advanced, observation);
    return advanced;
  }

  /** Records a status the service answered (settled → final, otherwise `pending`), writing only what is new. */
  async recordStatus(referenceId: string, status: CollectionStatus, by: string, requestId?: string): Promise<void> {
    await this.observeAfterSending(referenceId, this.statusObservation(status, requestId), by);
  }

  /** A status answer as an observation, by this client's status words (see `StatusWords.observation`). */
  statusObservation(status: CollectionStatus, requestId?: string): Extract<PaymentObservation, { kind: 'status' }> {
    return this.statusWords.observation(status, requestId);
  }

  /**
   * After a 404 that is evidence (see `NotFoundEvidence`): the `not-sent` verdict when it is provable (see
   * `settleNotFound`: the record's age by the journal's clock and by this process's own watch), else the record
   * as it is, its `decidableAt` the later of the two bounds.
   */
  async settleNotFound(
    referenceId: string,
    graceMs: number,
    recheck: RecheckStatus,
    by: string,
    conclusion?: Extract<PaymentObservation, { kind: 'not-found' | 'sending' }>,
  ): Promise<NotFoundVerdict> {
    // The recheck's own failure (the service unreachable) is the caller's to read, never a journal failure.
    let recheckFailure: { error: unknown } | undefined;
    const scrubbedRecheck: RecheckStatus = async () => {
      try {
        const seen = await recheck();
        return seen === 'not-found' ? seen : scrubObservation(seen, this.logger);
      } catch (error) {
        recheckFailure = { error };
        throw error;
      }
    };
    try {
      return await settleNotFound(this.journal, this.watch, referenceId, graceMs, scrubbedRecheck, by, conclusion);
    } catch (error) {
      if (recheckFailure !== undefined && recheckFailure.error === error) throw error;
      throw new JournalError('Payment journal: could not record a payment the service does not hold', referenceId, error);
    }
  }

  /**
   * The earliest time a `not-sent` verdict on `record` is possible for this process (ISO 8601): the later of the
   * journal's bound and this process's own watch of the record (see `settleNotFound`), with `graceMs` of grace.
   * The record's own `decidableAt` when the journal's clock cannot be read.
   */
  async decidableAt(record: PaymentRecord, graceMs: number): Promise<string | undefined> {
    if (record.state !== 'initiating' && record.state !== 'unknown') return undefined;
    try {
      const journalNow = Date.parse(await this.journal.now());
      const bound = verdictBound(record, this.watch.watched(record), journalNow, graceMs);
      if (bound === 'now') return Number.isFinite(journalNow) ? new Date(journalNow).toISOString() : record.decidableAt;
      return bound ?? record.decidableAt;
    } catch {
      return record.decidableAt;
    }
  }

  /** Stored text passes the log redaction: a record never holds a full phone number or the key. */
  scrubText(text: string): string {
    return this.logger.redact(text);
  }
}

/**
 * Rejects with {@link PaymentContradictionError} when the service's answer contradicted the final record (marked
 * by then, see `advance`): a contradiction is never a quiet success.
 */
export function throwIfContradicted(referenceId: string, advanced: Advanced, observation: PaymentObservation): void {
  if (advanced.contradiction === undefined) return;
  const requestId = observation.kind === 'status' || observation.kind === 'accepted' ? observation.requestId : undefined;
  throw new PaymentContradictionError({
    referenceId,
    recordState: advanced.record?.state ?? 'unknown',
    statusText: advanced.contradiction.statusText,
    requestId,
  });
}

/** An observation with the text it would store scrubbed as log text is (phone numbers masked, the key removed). */
export function scrubObservation<Observation extends PaymentObservation>(observation: Observation, logger: LevelLogger): Observation {
  if (observation.kind !== 'status' && observation.kind !== 'accepted') return observation;
  const scrubbed: Record<string, unknown> = { ...observation };
  // Not the request id: the transport already took the key out of it, and an identifier is never masked
  // (a masked id is one support cannot find).
  for (const key of ['statusText', 'transactionCode', 'reason'] as const) {
    const value = scrubbed[key];
    if (typeof value === 'string') scrubbed[key] = logger.redact(value);
  }
  return scrubbed as Observation;
}

function isPaymentJournal(value: unknown): value is PaymentJournal {
  return (
    value !== null &&
    typeof value === 'object' &&
    JOURNAL_METHODS.every((name) => typeof (value as Record<string, unknown>)[name] === 'function')
  );
}

/** An error as plain data for the journal: its class, status and code (never a body). */
export function paymentError(error: unknown): PaymentError {
  const name = error instanceof Error ? error.name : 'Error';
  if (!(error instanceof ApiError)) return { name };
  return { name, status: error.status, ...(error.code === undefined ? {} : { code: error.code }) };
}
