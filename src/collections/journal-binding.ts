/**
 * A `CollectionsClient`'s link to its payment journal: reads and writes that fail as `JournalError`, the
 * payments this client is sending right now, and the recording of statuses the client sees.
 *
 * @module
 */
import { ApiError, ConfigurationError, JournalError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { isOpenPaymentState, type PaymentChange, type PaymentError, type PaymentJournal, type PaymentState } from '../journal/journal.js';
import type { CollectionStatus } from './schemas.js';

const JOURNAL_METHODS = ['insert', 'update', 'get', 'list'] as const;

/** The journal as the client uses it. */
export class JournalBinding {
  readonly journal: PaymentJournal;
  readonly logger: LevelLogger;
  /** Payments whose `initiate` runs in this client now: `recover()` leaves them alone, a second call waits. */
  readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(journal: unknown, logger: LevelLogger) {
    if (
      journal === null ||
      typeof journal !== 'object' ||
      JOURNAL_METHODS.some((name) => typeof (journal as Record<string, unknown>)[name] !== 'function')
    ) {
      throw new ConfigurationError('Invalid CollectionsClient options: journal must be a PaymentJournal (insert, update, get, list)');
    }
    this.journal = journal as PaymentJournal;
    this.logger = logger;
  }

  /** Runs a journal operation; its failure becomes a {@link JournalError} saying what could not be done. */
  async use<T>(what: string, referenceId: string | undefined, operation: (journal: PaymentJournal) => Promise<T>): Promise<T> {
    try {
      return await operation(this.journal);
    } catch (error) {
      throw new JournalError(`Payment journal: could not ${what}`, referenceId, error);
    }
  }

  /**
   * Writes a change after the service answered: a failure here must not turn a known answer into an error
   * (the payment was sent either way), so it is logged, and `recover()` brings the record up to date later.
   */
  async recordAfterSending(referenceId: string, change: PaymentChange): Promise<void> {
    try {
      await this.journal.update(referenceId, change);
    } catch (error) {
      this.logger.error(`payment journal: could not record ${change.state} for referenceId ${referenceId}; recover() will`, {
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * Records a status the service answered for a payment in the journal: settled → final; otherwise `pending`.
   * Writes only when something changed (a poll that keeps seeing `pending` writes once).
   */
  async recordStatus(referenceId: string, status: CollectionStatus): Promise<void> {
    try {
      const record = await this.journal.get(referenceId);
      if (record === undefined || !isOpenPaymentState(record.state)) return;
      const change = statusChange(status);
      if (change.state === record.state && change.statusText === record.statusText) return;
      await this.journal.update(referenceId, change);
    } catch (error) {
      this.logger.error(`payment journal: could not record status ${status.statusText} for referenceId ${referenceId}; recover() will`, {
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

/** The journal change for a status the service answered. */
export function statusChange(status: CollectionStatus): PaymentChange {
  const state: PaymentState = status.statusText === 'successful' ? 'successful' : status.statusText === 'failed' ? 'failed' : 'pending';
  return {
    state,
    updatedAt: now(),
    statusText: status.statusText,
    ...(typeof status.transactionCode === 'string' ? { transactionCode: status.transactionCode } : {}),
    ...(typeof status.reason === 'string' ? { reason: status.reason } : {}),
  };
}

/** An error as plain data for the journal: its class, status and code (never a body). */
export function paymentError(error: unknown): PaymentError {
  const name = error instanceof Error ? error.name : 'Error';
  if (!(error instanceof ApiError)) return { name };
  return { name, status: error.status, ...(error.code === undefined ? {} : { code: error.code }) };
}

/** The time of a journal write, as the journal keeps it. */
export function now(): string {
  return new Date().toISOString();
}
