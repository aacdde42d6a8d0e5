/**
 * When and how a pending collection settles: by the number of status checks or the time since creation (whichever
 * comes first), to the outcome planned for its phone number; plus the manual clock that lets tests move time.
 *
 * @module
 */
import { OUTCOMES, type PlannedOutcome, type SettlementOutcome } from '../fixtures.js';
import { internationalPhone } from './formats.js';
import type { SimulatedCollection } from './records.js';

/**
 * When pending collections settle. A collection settles at the first of the two conditions;
 * `Infinity` turns a condition off (both `Infinity`: only {@link Simulator.settle} settles).
 *
 * @group Simulator
 */
export interface SettlementOptions {
  /** Status checks that still answer `pending`; the next one sees the final status. @defaultValue 1 */
  pendingPolls?: number | undefined;
  /** Milliseconds after creation (by the simulator's clock) after which the collection is settled. @defaultValue 3000 */
  pendingMs?: number | undefined;
  /** The outcome of collections whose phone number has none planned. @defaultValue {@link OUTCOMES}`.successful` */
  defaultOutcome?: SettlementOutcome | undefined;
}

/** A manual clock for {@link SimulatorOptions.now}. @group Simulator */
export interface ManualClock {
  /** The current time, epoch ms. */
  now(): number;
  /** Moves time forward by `ms`. */
  advance(ms: number): void;
  /** Sets the time, epoch ms. */
  set(epochMs: number): void;
}

/**
 * A clock that moves only when told, so tests of time-based settlement need no waiting.
 * @param startMs the initial time in epoch ms. Default `2026-01-01T00:00:00.000Z`.
 *
 * @group Simulator
 */
export function createManualClock(startMs: number = Date.UTC(2026, 0, 1)): ManualClock {
  let current = startMs;
  return {
    now: () => current,
    advance: (ms) => {
      current += ms;
    },
    set: (epochMs) => {
      current = epochMs;
    },
  };
}

/** A stored collection with what settlement needs to know about it. */
export interface CollectionEntry {
  /** The owning partner. */
  readonly partnerId: string;
  /** Creation time, epoch ms by the simulator's clock. */
  readonly createdMs: number;
  /** The record, changed in place when it settles. */
  readonly record: SimulatedCollection;
  /** The outcome it settles to. */
  planned: PlannedOutcome;
  /** Status checks answered so far. */
  statusChecks: number;
}

/** The settlement rules and the outcomes planned per phone number. */
export class Settlement {
  readonly #now: () => number;
  readonly #seededPlans: Readonly<Record<string, PlannedOutcome>>;
  readonly #rules: Required<SettlementOptions> = { pendingPolls: 1, pendingMs: 3000, defaultOutcome: OUTCOMES.successful };
  readonly #plans = new Map<string, PlannedOutcome>();

  constructor(now: () => number, seededPlans: Readonly<Record<string, PlannedOutcome>>, options: SettlementOptions) {
    this.#now = now;
    this.#seededPlans = seededPlans;
    this.configure(options);
    this.resetPlans();
  }

  /**
   * Changes the rules from now on (also for collections already pending).
   * @throws RangeError for a negative or non-integer `pendingPolls`, or a negative `pendingMs`.
   */
  configure(settlement: SettlementOptions): void {
    const { pendingPolls, pendingMs, defaultOutcome } = settlement;
    if (
      pendingPolls !== undefined &&
      !(pendingPolls === Number.POSITIVE_INFINITY || (Number.isInteger(pendingPolls) && pendingPolls >= 0))
    ) {
      throw new RangeError('settlement.pendingPolls must be a whole number ≥ 0 or Infinity');
    }
    if (pendingMs !== undefined && !(pendingMs >= 0)) throw new RangeError('settlement.pendingMs must be ≥ 0 or Infinity');
    if (pendingPolls !== undefined) this.#rules.pendingPolls = pendingPolls;
    if (pendingMs !== undefined) this.#rules.pendingMs = pendingMs;
    if (defaultOutcome !== undefined) this.#rules.defaultOutcome = defaultOutcome;
  }

  /** Plans the outcome of collections created from now on for a phone number (any accepted form). */
  plan(phoneNumber: string, outcome: PlannedOutcome): void {
    this.#plans.set(internationalPhone(phoneNumber), outcome);
  }

  /** Back to the fixtures' planned outcomes. */
  resetPlans(): void {
    this.#plans.clear();
    for (const [phone, outcome] of Object.entries(this.#seededPlans)) this.#plans.set(internationalPhone(phone), outcome);
  }

  /** The outcome a collection created now for `phoneNumber` will settle to. */
  plannedFor(phoneNumber: string): PlannedOutcome {
    return this.#plans.get(internationalPhone(phoneNumber)) ?? this.#rules.defaultOutcome;
  }

  /** Settles `entry` if a rule says it is due. */
  settleIfDue(entry: CollectionEntry): void {
    if (entry.record.status !== 'pending' || entry.planned === 'never') return;
    const { pendingPolls, pendingMs } = this.#rules;
    const nowMs = this.#now();
    const dueByPolls = entry.statusChecks > pendingPolls;
    const dueByTime = nowMs - entry.createdMs >= pendingMs;
    if (!dueByPolls && !dueByTime) return;
    // A time-based settlement happened at its due moment, not when someone happened to look.
    const atMs = dueByPolls ? nowMs : entry.createdMs + pendingMs;
    applyOutcome(entry.record, entry.planned, atMs);
  }

  /**
   * Settles now those of `entries` (the collections with `referenceId`) still pending.
   * @throws Error when none is pending.
   */
  settleNow(entries: CollectionEntry[], referenceId: string, outcome: 'successful' | 'failed' | SettlementOutcome | undefined): void {
    const pending = entries.filter((entry) => {
      this.settleIfDue(entry);
      return entry.record.status === 'pending';
    });
    if (pending.length === 0) {
      throw new Error(
        entries.length === 0 ? `No collection with referenceId ${referenceId}` : `The collection ${referenceId} has already settled`,
      );
    }
    for (const entry of pending) {
      const chosen =
        outcome === 'successful'
          ? OUTCOMES.successful
          : outcome === 'failed'
            ? OUTCOMES.systemError
            : (outcome ?? (entry.planned === 'never' ? OUTCOMES.successful : entry.planned));
      applyOutcome(entry.record, chosen, this.#now());
    }
  }
}

function applyOutcome(record: SimulatedCollection, outcome: SettlementOutcome, atMs: number): void {
  record.status = outcome.status;
  record.transactionCode = outcome.transactionCode;
  record.reason = outcome.reason;
  record.updatedAt = new Date(atMs).toISOString();
}
