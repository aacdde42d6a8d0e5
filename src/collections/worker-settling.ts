/**
 * A settlement worker's settling steps: what it writes after a check, and to whom it says so. A status moves the
 * record (a final one delivered to `onSettled` first), a 404 may resend the create or close the payment as
 * `not-sent`, and a final record the service contradicts is marked and reported. Every write goes through the state
 * machine; the worker keeps the scheduling: each step tells it, through {@link SettlingHooks}, what became of the
 * payment at the moment it happened.
 *
 * @module
 */
import { NotFoundError } from '../core/errors.js';
import { isOpenPaymentState, type PaymentRecord } from '../journal/journal.js';
import { advance, decide, type PaymentObservation, settleNotFound } from '../journal/state-machine.js';
import { scrubObservation } from './journal-binding.js';
import type { CollectionStatus } from './schemas.js';
import type { Plan, SettlementWorkerContext, SettlementWorkerOptions } from './settlement-worker-options.js';
import type { Held } from './worker-leases.js';
import { mergeChange, reasonOf } from './worker-outcome.js';

/** What the settling steps need of the worker's context. */
export type SettlingContext = Pick<SettlementWorkerContext, 'journal' | 'logger' | 'watch' | 'judgeNotFound' | 'statusWords' | 'resend'>;

/** What the settling steps ask of the worker that owns them, each at the moment the step decides it. */
export interface SettlingHooks {
  /** The payment is no longer this worker's to check (settled, or closed by someone else). */
  readonly forget: (entry: Held) => void;
  /** The payment stays open: checked again on its poll schedule (or parked until then). */
  readonly later: (entry: Held) => void;
  /** Not recorded (onSettled threw): checked again after the longest pause. */
  readonly retry: (entry: Held) => void;
  /** A second status request for the payment, its token taken like any other check's. */
  readonly checkAgain: (referenceId: string) => Promise<CollectionStatus>;
  /** True once the worker was told to stop. */
  readonly stopped: () => boolean;
}

/** The settling steps of one worker; see the module's first lines. */
export class WorkerSettling {
  readonly #context: SettlingContext;
  readonly #plan: Plan;
  /** Who the journal's history names for this worker's writes. */
  readonly #by: string;
  readonly #onSettled: SettlementWorkerOptions['onSettled'];
  readonly #onContradiction: SettlementWorkerOptions['onContradiction'];
  /** The worker's own signal: aborted when it stops. */
  readonly #signal: AbortSignal;
  readonly #hooks: SettlingHooks;

  constructor(
    context: SettlingContext,
    plan: Plan,
    by: string,
    options: Pick<SettlementWorkerOptions, 'onSettled' | 'onContradiction'>,
    signal: AbortSignal,
    hooks: SettlingHooks,
  ) {
    this.#context = context;
    this.#plan = plan;
    this.#by = by;
    this.#onSettled = options.onSettled;
    this.#onContradiction = options.onContradiction;
    this.#signal = signal;
    this.#hooks = hooks;
  }

  /** A `pending` answer: written when it tells something new (an initiating or unknown payment exists, or a new word). */
  async pending(entry: Held, observation: Extract<PaymentObservation, { kind: 'status' }>): Promise<void> {
    if (entry.state !== 'pending' || entry.statusText !== observation.statusText) {
      const moved = await advance(this.#context.journal, entry.referenceId, observation, this.#by);
      if (moved.record !== undefined && !isOpenPaymentState(moved.record.state)) {
        if (moved.contradiction !== undefined) await this.reportContradiction(moved.record);
        this.#hooks.forget(entry);
        return;
      }
      entry.state = 'pending';
      entry.statusText = observation.statusText;
    }
    this.#hooks.later(entry);
  }

  /**
   * Delivers the final status (`onSettled`), then records it. In that order, a crash between the two
   * delivers twice rather than never; a status is a fact about the service, so delivering it is never false.
   */
  async settle(entry: Held, observation: Extract<PaymentObservation, { kind: 'status' }>): Promise<void> {
    const { journal, logger } = this.#context;
    const current = await journal.get(entry.referenceId);
    if (current === undefined || !isOpenPaymentState(current.state)) {
      // Settled by someone else (a till's own poll, recover()): they had the outcome; nothing to deliver, unless
      // the service's answer contradicts the outcome they recorded: that is marked and reported.
      // A final record is never leased again: its lease needs no release (one write less per payment).
      if (current !== undefined && decide(current, observation, this.#by).kind === 'contradiction') {
        const marked = await advance(journal, entry.referenceId, observation, this.#by);
        if (marked.contradiction !== undefined && marked.record !== undefined) await this.reportContradiction(marked.record);
      }
      this.#hooks.forget(entry);
      return;
    }
    if (entry.gone) return;
    const decision = decide(current, observation, this.#by);
    if (this.#onSettled !== undefined && decision.kind === 'change') {
      try {
        await this.#onSettled(mergeChange(current, decision.change));
      } catch (error) {
        logger.error(`settlement worker: onSettled threw for ${entry.referenceId}; it stays open and is delivered again`, reasonOf(error));
        this.#hooks.retry(entry);
        return;
      }
    }
    await advance(journal, entry.referenceId, observation, this.#by);
    this.#context.watch.forget(entry.referenceId);
    this.#hooks.forget(entry);
  }

  /**
   * After a 404, for a service that refuses duplicate references: sends the payment's create again (see
   * `SettlementWorkerContext.resend`) and follows the record it leaves. True when a resend was made (the payment is
   * then settled, or checked again on its schedule).
   */
  async resent(entry: Held): Promise<boolean> {
    const { journal, resend } = this.#context;
    if (resend === undefined) return false;
    const record = await journal.get(entry.referenceId);
    if (record === undefined || (record.state !== 'initiating' && record.state !== 'unknown')) return false;
    let resent: Awaited<ReturnType<typeof resend>>;
    try {
      resent = await resend(record, this.#by, this.#signal);
    } catch (error) {
      // Stopped mid-resend: the record says unknown (written by the resend), and the next worker takes it up.
      if (this.#hooks.stopped()) return true;
      throw error;
    }
    if (resent === undefined) return false;
    const moved = resent.record;
    if (isOpenPaymentState(moved.state)) {
      entry.state = moved.state;
      entry.statusText = moved.statusText;
      this.#hooks.later(entry);
      return true;
    }
    // Delivered only when this worker's own resend settled it: another writer that did delivers it itself.
    if (resent.sent && this.#onSettled !== undefined) {
      try {
        await this.#onSettled(moved);
      } catch (error) {
        this.#context.logger.error(
          `settlement worker: onSettled threw for ${entry.referenceId} (${moved.state}, recorded)`,
          reasonOf(error),
        );
      }
    }
    this.#hooks.forget(entry);
    return true;
  }

  /**
   * After a 404: closes the payment as `not-sent` when the journal proves nothing can still arrive (see
   * `settleNotFound`; its second status check takes a token like any other). True when the payment is no
   * longer this worker's to check. `not-sent` is recorded before `onSettled` hears of it: delivered first, a
   * close that then lost its race (an attempt began meanwhile) would have announced a false outcome.
   */
  async notFound(entry: Held): Promise<boolean> {
    const { journal, watch } = this.#context;
    const verdict = await settleNotFound(
      journal,
      watch,
      entry.referenceId,
      this.#plan.notFoundGraceMs,
      async () => {
        try {
          const again = await this.#hooks.checkAgain(entry.referenceId);
          return scrubObservation(this.#context.statusWords.observation(again), this.#context.logger);
        } catch (error) {
          if (!(error instanceof NotFoundError)) throw error;
          // The deciding 404 is judged like the first: only the service's own answer closes a payment.
          await this.#context.judgeNotFound(error);
          return { kind: 'not-found', requestId: error.requestId };
        }
      },
      this.#by,
    );
    const record = verdict.record;
    if (verdict.contradiction !== undefined && record !== undefined) await this.reportContradiction(record);
    if (record === undefined || isOpenPaymentState(record.state)) {
      if (record !== undefined) entry.state = record.state;
      return false;
    }
    // Delivered only when this worker's own write settled it. A contradiction is applied too (the mark), but on a
    // record someone else closed, who had that outcome, and which the service now denies: reported, never delivered.
    if (verdict.applied && verdict.contradiction === undefined && this.#onSettled !== undefined) {
      try {
        await this.#onSettled(record);
      } catch (error) {
        this.#context.logger.error(`settlement worker: onSettled threw for ${entry.referenceId} (not-sent, recorded)`, reasonOf(error));
      }
    }
    this.#hooks.forget(entry);
    return true;
  }

  /** A payment whose final record the service contradicts (marked by then): `onContradiction`, else an `error` line. */
  async reportContradiction(record: PaymentRecord): Promise<void> {
    const { logger } = this.#context;
    const { referenceId, state, contradiction } = record;
    try {
      if (this.#onContradiction !== undefined) await this.#onContradiction(record);
      else {
        logger.error(
          `settlement worker: the service contradicts ${referenceId}, which the journal records as ${state}; the record keeps its state and is marked (journal list --contradictions): a person must look at it`,
          { state, statusText: contradiction?.statusText, requestId: contradiction?.requestId },
        );
      }
    } catch (error) {
      logger.error(`settlement worker: onContradiction threw for ${referenceId}`, reasonOf(error));
    }
  }
}
