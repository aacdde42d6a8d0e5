/**
 * A settlement worker's leases: which open payments it holds, and the journal calls that keep that true. It leases
 * what its budget can check (the quota, plus a reserve handed back after one check so new payments get in when it is
 * busy), renews what it holds, parks a payment until its next check by renewing its lease for that long, sets aside a
 * payment of another deployment, and releases everything on stop. It never checks a payment: a payment it adopts is
 * handed to the worker, and each lease step that ends asks the worker's scheduler to look again.
 *
 * @module
 */
import type { DueItem } from '../core/due-queue.js';
import { monotonicNow } from '../core/monotonic.js';
import { UUID_PATTERN } from '../core/uuid.js';
import type { PaymentDeployment, PaymentRecord, PaymentState } from '../journal/journal.js';
import type { JournalOutage } from './journal-outage.js';
import { type Plan, SET_ASIDE_MS, type SettlementWorkerContext } from './settlement-worker-options.js';
import { reasonOf } from './worker-outcome.js';

/** A payment this worker holds a lease on, as its scheduler and its checks see it. */
export interface Held extends DueItem {
  readonly referenceId: string;
  state: PaymentState;
  statusText: string | undefined;
  /** The next pause number of the poll schedule. */
  pauses: number;
  /**
   * When our lease runs out at the latest (this process's monotonic clock, as `dueAt` is): measured from before the
   * lease call was sent, so a step of this machine's wall clock never makes the worker believe it holds it longer.
   */
  leaseUntil: number;
  queued: boolean;
  /** No longer ours (lease lost, settled, or stopped). */
  gone: boolean;
  /** When the journal created the payment (epoch ms): its age slows its checks. */
  readonly createdAt: number;
  /** Its first check by this worker, of a payment younger than a minute: served before re-checks. */
  fresh: boolean;
  /** Where its push went (absent on records of earlier releases). */
  readonly deployment: PaymentDeployment | undefined;
  /** True once its deployment was found to be this client's (checked before its first check). */
  vetted: boolean;
}

/** What the leases ask of the worker that owns them. */
export interface LeaseHooks {
  /**
   * A payment newly held, to be checked after `pauseMs` (at most; it may be negative): the worker schedules it, or
   * first checks where its push went when `entry.vetted` is false.
   */
  readonly adopted: (entry: Held, pauseMs: number) => void;
  /** A scan or a renewal ended: the scheduler looks again (what is due, and when its timer fires). */
  readonly changed: () => void;
  /** A journal write started on the side: the worker waits for it before it releases its leases on stop. */
  readonly track: (task: Promise<void>) => void;
}

/** What the leases need of the worker's context: the store, the log, and this process's watch of open records. */
export type LeaseContext = Pick<SettlementWorkerContext, 'journal' | 'logger' | 'watch' | 'deploymentMismatch'>;

/** A payment younger than this on its first check is "new": its first check goes before every re-check. */
const FRESH_MS = 60_000;
/** Ids per renew or release statement. */
const BATCH = 1_000;
/** Records per lease statement: large, since a store may scan all its records per call. */
const LEASE_BATCH = 5_000;

/** The lease bookkeeping of one worker; see the module's first lines. */
export class WorkerLeases {
  readonly #owner: string;
  readonly #context: LeaseContext;
  readonly #plan: Plan;
  readonly #outage: JournalOutage;
  readonly #hooks: LeaseHooks;
  /** Payments this worker keeps at once: what its budget checks at the fastest pace within a lease period. */
  readonly #quota: number;
  /** Leased beyond the quota at each scan and handed back after one check: how new payments get in when busy. */
  readonly #reserve: number;
  readonly #held = new Map<string, Held>();
  /** Records leased whose reference id the SDK never writes, already reported (once each). */
  readonly #foreign = new Set<string>();
  #nextScanAt = 0;
  #nextRenewAt: number;
  #scanning: Promise<void> | undefined;
  #renewing: Promise<void> | undefined;

  /**
   * @param owner - the worker's id, the owner the journal's leases name
   * @param shares - the quota and the reserve of the worker's plan (`workerShares`)
   */
  constructor(
    owner: string,
    context: LeaseContext,
    plan: Plan,
    shares: { readonly quota: number; readonly reserve: number },
    outage: JournalOutage,
    hooks: LeaseHooks,
  ) {
    this.#owner = owner;
    this.#context = context;
    this.#plan = plan;
    this.#quota = shares.quota;
    this.#reserve = shares.reserve;
    this.#outage = outage;
    this.#hooks = hooks;
    this.#nextRenewAt = monotonicNow() + plan.leaseMs / 3;
  }

  /** The payment held under `referenceId` (a later lease of it replaces an entry forgotten meanwhile). */
  get(referenceId: string): Held | undefined {
    return this.#held.get(referenceId);
  }

  /** When the next renewal is due (monotonic): a check that cannot finish within its lease waits for it. */
  get nextRenewAt(): number {
    return this.#nextRenewAt;
  }

  /** True while a renewal is under way: a check waiting for it is due when it ends, not at the one after. */
  get renewing(): boolean {
    return this.#renewing !== undefined;
  }

  /** When the next scan or renewal is due (monotonic); `Infinity` while both are under way. */
  get nextDueAt(): number {
    return Math.min(
      this.#scanning ? Number.POSITIVE_INFINITY : this.#nextScanAt,
      this.#renewing ? Number.POSITIVE_INFINITY : this.#nextRenewAt,
    );
  }

  /** The scan and the renewal under way: stop waits for them before it releases. */
  get running(): readonly Promise<void>[] {
    return [this.#scanning, this.#renewing].filter((step) => step !== undefined);
  }

  /** Starts the scan and the renewal when due at `now` (`monotonicNow()`). Each ends by calling `changed`. */
  startDue(now: number): void {
    if (!this.#scanning && now >= this.#nextScanAt) {
      // Only what the budget can check: the rest stays free for other workers. The reserve lets new payments
      // in (the journal leases those first) even when the quota is full of payments that never settle.
      const room = Math.min(LEASE_BATCH, this.#quota + this.#reserve - this.#held.size);
      if (room <= 0) this.#nextScanAt = now + this.#plan.scanIntervalMs;
      else this.#scanning = this.#scan(room);
    }
    if (!this.#renewing && now >= this.#nextRenewAt) {
      if (this.#held.size === 0) this.#nextRenewAt = now + this.#plan.leaseMs / 3;
      else this.#renewing = this.#renew();
    }
  }

  /** No longer this worker's: its lease is left to the journal (released, parked, lapsing, or settled). */
  forget(entry: Held): void {
    entry.gone = true;
    this.#held.delete(entry.referenceId);
  }

  /**
   * After a check that leaves the payment open: false when the worker keeps it (its next check is near and the quota
   * allows), else parks it and says true: its lease renewed until its next check is due, then forgotten, so the
   * journal hands it out again when due, to this worker or another, after new payments.
   */
  park(entry: Held, pauseMs: number): boolean {
    if (pauseMs < this.#plan.leaseMs / 2 && this.#held.size <= this.#quota) return false;
    this.forget(entry);
    this.#hooks.track(
      this.#context.journal.renew(this.#owner, [entry.referenceId], Math.max(1, Math.round(pauseMs))).then(
        () => undefined,
        (error: unknown) =>
          this.#context.logger.debug('settlement worker: could not park a payment; its lease runs out by itself', reasonOf(error)),
      ),
    );
    return true;
  }

  /**
   * A payment pushed to another deployment: its lease held for a while, then left to lapse, so it is neither checked
   * nor leased again in a loop, and a worker of its own deployment can take it.
   */
  setAside(entry: Held): void {
    this.forget(entry);
    this.#hooks.track(
      this.#context.journal.renew(this.#owner, [entry.referenceId], SET_ASIDE_MS).then(
        () => undefined,
        (failure: unknown) =>
          this.#context.logger.debug('settlement worker: could not set a payment aside; its lease runs out by itself', reasonOf(failure)),
      ),
    );
  }

  /** Hands back every lease held (on stop); a failure leaves them to run out by themselves. */
  async releaseAll(): Promise<void> {
    const ids = [...this.#held.keys()];
    this.#held.clear();
    for (let start = 0; start < ids.length; start += BATCH) {
      await this.#context.journal.release(this.#owner, ids.slice(start, start + BATCH)).catch((error: unknown) => {
        if (!this.#outage.down)
          this.#context.logger.warn('settlement worker: could not release leases; they run out by themselves', reasonOf(error));
      });
    }
  }

  /** Leases up to `room` open payments nobody holds. Called only with room > 0, so it always awaits first. */
  async #scan(room: number): Promise<void> {
    const { journal, logger } = this.#context;
    let full = false;
    try {
      const sentAt = monotonicNow();
      const records = await journal.lease({ owner: this.#owner, leaseMs: this.#plan.leaseMs, limit: room });
      full = records.length === room;
      for (const record of records) this.#adopt(record, sentAt + this.#plan.leaseMs);
    } catch (error) {
      if (!this.#outage.down) logger.warn('settlement worker: could not lease open payments; trying again', reasonOf(error));
    } finally {
      // A full batch means more may be waiting: look again at once.
      const now = monotonicNow();
      this.#nextScanAt = full ? now : now + this.#plan.scanIntervalMs;
      this.#scanning = undefined;
      this.#hooks.changed();
    }
  }

  #adopt(record: PaymentRecord, leaseUntil: number): void {
    const known = this.#held.get(record.referenceId);
    if (known !== undefined) {
      known.leaseUntil = leaseUntil;
      return;
    }
    if (!UUID_PATTERN.test(record.referenceId)) {
      // Not a reference id the SDK writes (a foreign row): never requested, reported once, handed back.
      if (!this.#foreign.has(record.referenceId)) {
        this.#foreign.add(record.referenceId);
        this.#context.logger.warn('settlement worker: skipped a journal record whose referenceId is not a UUID', {
          referenceId: JSON.stringify(record.referenceId.slice(0, 100)),
        });
      }
      this.#hooks.track(this.#context.journal.release(this.#owner, [record.referenceId]).catch(() => undefined));
      return;
    }
    const createdAt = Date.parse(record.createdAt);
    const entry: Held = {
      referenceId: record.referenceId,
      createdAt,
      // An age: the journal's clock (`createdAt`) against this machine's wall clock, the only two that compare.
      fresh: Date.now() - createdAt < FRESH_MS,
      state: record.state,
      statusText: record.statusText,
      pauses: 1,
      leaseUntil,
      dueAt: 0,
      queued: false,
      gone: false,
      deployment: record.deployment,
      vetted: record.deployment === undefined || this.#context.deploymentMismatch === undefined,
    };
    this.#held.set(record.referenceId, entry);
    // The lease is this process's first sight of a payment another process wrote: its own watch starts here.
    if (record.state === 'initiating' || record.state === 'unknown') this.#context.watch.watched(record);
    // A payment initiated a moment ago is given the schedule's quiet start; one taken over is due now. `createdAt` is
    // the journal's clock and `Date.now()` this machine's: the quiet start is never longer than itself, so a clock
    // behind the journal's cannot hold a new payment's first check back by the skew (seed 18900: 270 s).
    const quietMs = Date.parse(record.createdAt) + this.#plan.initialDelayMs - Date.now();
    this.#hooks.adopted(entry, Math.min(this.#plan.initialDelayMs, quietMs));
  }

  /** Renews every lease held. Called only with leases held, so it always awaits first. */
  async #renew(): Promise<void> {
    const { journal, logger } = this.#context;
    const sentAt = monotonicNow();
    this.#nextRenewAt = sentAt + this.#plan.leaseMs / 3;
    try {
      const ids = [...this.#held.keys()];
      for (let start = 0; start < ids.length; start += BATCH) {
        // A store that answers at once (memory) would otherwise renew 100 000 leases in one turn of the loop.
        if (start > 0) await new Promise((resolve) => setTimeout(resolve, 0));
        const batch = ids.slice(start, start + BATCH);
        const kept = new Set(await journal.renew(this.#owner, batch, this.#plan.leaseMs));
        for (const id of batch) {
          const entry = this.#held.get(id);
          if (entry === undefined) continue;
          if (kept.has(id)) entry.leaseUntil = sentAt + this.#plan.leaseMs;
          else this.forget(entry);
        }
      }
    } catch (error) {
      // The leases run out by the local bound; no check starts past it.
      if (!this.#outage.down) logger.warn('settlement worker: could not renew leases; trying again', reasonOf(error));
      this.#nextRenewAt = monotonicNow() + Math.min(1_000, this.#plan.leaseMs / 10);
    } finally {
      this.#renewing = undefined;
      this.#hooks.changed();
    }
  }
}
