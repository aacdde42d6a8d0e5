/**
 * What callers were told, and the invariants it must keep against what the service holds:
 * - `initiate` resolving means the service holds the payment (checked when it resolves);
 * - a definite error (anything but `UnknownOutcomeError` and `JournalError`, with the journal's record closed as
 *   `not-sent` or `rejected`, which is what a till goes by) means the service never holds it;
 * - every settled word, `onSettled`, `waitForSettlement` and `recover()` record agrees with the service (with
 *   either outcome of a collection the service reversed: the journal keeps the first it recorded);
 * - a final record the service contradicts (a reversal) is said: once faults stop, `checkStatus` on it rejects with
 *   `PaymentContradictionError` and the record carries the mark (sim.ts's audit);
 * - a journaled create's `UnknownOutcomeError` carries `decidableAt` (unless the record's window is not known);
 * - at most one collection per sale, whatever its references (checked as each collection is created);
 * - once faults stop, every payment reaches a final state in agreement with the service within the documented
 *   bound (`settlementBoundMs`, plus the service's own settlement time: sim.ts), without a final `recover()`;
 * - under the key's shared budget, arrivals of its processes never exceed its limit in any 1 s window
 *   (`budgetWindowViolations`; the probe of sim.ts checks that the budget comes back and is used).
 * - a payment a settlement worker holds is checked again, renewed or released after each answer, never left to lapse,
 *   and once the faults stop (without a shared budget) checked again within its longest pause and a lease (`Rechecks`).
 *
 * No vitest import (see scheduler.ts).
 */
import type { UnknownOutcomeError } from '../../src/core/errors.js';
import type { PaymentRecord } from '../../src/journal/journal.js';
import { carriesWindow, isOpenState, isSdkError, isSettledWord, meaningOfWord } from './oracle.js';
import type { Sale } from './processes.js';
import { type Proc, T0 } from './scheduler.js';
import { type Collection, outcomeAt, type Service } from './service.js';

/** Every outcome the service ever says of `collection`: its own, and the other once it is reversed. */
function outcomesOf(collection: Collection | undefined): string[] {
  if (collection === undefined) return [];
  return collection.reversedAt === undefined ? [collection.outcome] : [collection.outcome, outcomeAt(collection, collection.reversedAt)];
}
const short = (referenceId: string) => referenceId.slice(0, 8);

interface Told {
  readonly by: string;
  /** `successful`, `failed`, `not-sent`, `rejected`. */
  readonly meaning: string;
}

/** Errors a caller may be told while faults last (the SDK's own); anything else is a violation. */
export function isExpectedError(error: unknown): boolean {
  return isSdkError(error);
}

export class Ledger {
  readonly violations: string[] = [];
  /** Rare paths seen in this run (coverage feedback). */
  readonly probes = new Map<string, number>();
  readonly #told = new Map<string, Told[]>();
  readonly #definite = new Map<string, string>();
  readonly #service: Service;
  readonly #saleOf: Map<string, Sale>;
  readonly #steps: () => number;

  constructor(service: Service, saleOf: Map<string, Sale>, steps: () => number) {
    this.#service = service;
    this.#saleOf = saleOf;
    this.#steps = steps;
    service.onCreate = (collection) => this.#created(collection);
  }

  probe(name: string): void {
    this.probes.set(name, (this.probes.get(name) ?? 0) + 1);
  }

  #created(collection: Collection): void {
    const reference = collection.referenceId.toLowerCase();
    if (this.#definite.has(reference)) {
      this.violations.push(
        `TOLD-NOT-CREATED: ${short(reference)} was answered ${this.#definite.get(reference)}, then collection #${collection.id} was created`,
      );
    }
    const sale = this.#saleOf.get(reference);
    if (sale === undefined) return;
    const held = sale.references.flatMap((r) => this.#service.holding(r));
    if (held.length > 1) {
      this.violations.push(
        `DOUBLE: sale ${sale.id} has ${held.length} collections (${held.map((c) => `#${c.id} ${short(c.referenceId)} by ${c.by}`).join(', ')}) at step ${this.#steps()}`,
      );
    }
  }

  accepted(reference: string, returned: string): void {
    if (returned !== reference) this.violations.push(`ANSWER: initiate for ${short(reference)} resolved with referenceId ${returned}`);
    if (this.#service.holding(reference).length === 0) {
      this.violations.push(`ACCEPTED-NOT-HELD: initiate resolved for ${short(reference)} but the service holds no collection`);
    }
    if (this.#service.hits.get('duplicate refused')) this.probe('initiate resolved after a duplicate answer');
  }

  /**
   * `initiate` ended unknown; `record` is the journal's record now (its window says whether a verdict time exists).
   * `onceWindowless`: a till of the previous release inserted it without a window. A call that last saw that version
   * (a reconcile judging it; a resend whose write, carrying a window, landed but whose acknowledgement was lost)
   * cannot promise a time, rightly, even when the record has a window now (seeds 8664 and 9932 of the 10 000-seed
   * sweep).
   */
  unknown(reference: string, error: UnknownOutcomeError, record: PaymentRecord | undefined, onceWindowless = false): void {
    this.probe(error.decidableAt === undefined ? 'UnknownOutcomeError without decidableAt' : 'UnknownOutcomeError with decidableAt');
    // A journaled create's unknown outcome carries decidableAt, unless no window is known (no age decides then).
    if (
      error.decidableAt === undefined &&
      !onceWindowless &&
      record !== undefined &&
      isOpenState(record.state) &&
      record.state !== 'pending' &&
      carriesWindow(record)
    )
      this.violations.push(`NO-DECIDABLE-AT: initiate for ${short(reference)} ended unknown without decidableAt (${record.state})`);
    if (/another process meanwhile/.test(String((error.cause as Error | undefined)?.message))) this.probe('resend overtaken');
    if (error.referenceId !== reference)
      this.violations.push(`ANSWER: UnknownOutcomeError for ${short(reference)} names ${error.referenceId}`);
  }

  /** A definite answer of `initiate` (nothing was created); false when the error is not the SDK's. */
  definite(reference: string, error: unknown): boolean {
    if (!this.expected(error, `initiate ${short(reference)}`)) return false;
    const name = (error as Error).name;
    this.#definite.set(reference, name);
    this.probe(`initiate definite: ${name}`);
    const held = this.#service.holding(reference);
    if (held.length > 0)
      this.violations.push(
        `TOLD-NOT-CREATED: initiate for ${short(reference)} ended with ${name} (${(error as Error).message.slice(0, 120)}) but the service holds collection #${held[0]?.id}`,
      );
    return true;
  }

  settledWord(reference: string, by: string, word: string): void {
    const meaning = meaningOfWord(word);
    if (!isSettledWord(word) || meaning === undefined) {
      this.violations.push(`ANSWER: ${by} for ${short(reference)} ended with the word ${JSON.stringify(word)}, which is not settled`);
      return;
    }
    this.#tell(reference, { by, meaning });
  }

  finalRecord(reference: string, by: string, record: PaymentRecord): void {
    if (record.state === 'initiating' || record.state === 'pending' || record.state === 'unknown') {
      if (by !== 'recover') this.violations.push(`ANSWER: ${by} for ${short(reference)} gave an open record (${record.state})`);
      return;
    }
    if (record.state === 'not-sent' && by === 'onSettled') this.probe('worker not-sent');
    this.#tell(reference.toLowerCase(), { by, meaning: record.state });
  }

  #tell(reference: string, told: Told): void {
    const list = this.#told.get(reference) ?? [];
    list.push(told);
    this.#told.set(reference, list);
  }

  /** Records an error a caller saw; false (and a violation) when it is not one of the SDK's. */
  expected(error: unknown, what: string): boolean {
    if (isExpectedError(error)) return true;
    const text =
      error instanceof Error ? `${error.name}: ${error.message} ${(error.stack ?? '').split('\n').slice(1, 4).join(' |')}` : String(error);
    this.violations.push(`UNEXPECTED: ${what} failed with ${text}`);
    return false;
  }

  /** The end: what callers were told and what the journal holds, against the service, after the liveness bound. */
  finish(records: readonly PaymentRecord[], boundMs: number): void {
    const service = this.#service;
    const byReference = new Map(records.map((record) => [record.referenceId.toLowerCase(), record]));
    for (const collection of service.collections) {
      const record = byReference.get(collection.referenceId.toLowerCase());
      if (record === undefined)
        this.violations.push(`LOST: collection #${collection.id} (${short(collection.referenceId)}) has no journal record`);
    }
    for (const record of records) {
      const held = service.holding(record.referenceId);
      const reference = short(record.referenceId);
      if ((record.state === 'initiating' || record.state === 'unknown') && held.length === 0 && !carriesWindow(record)) {
        // No window known (written by the previous release, or resent since under the unbounded window its first push
        // kept: seed 2458, a record past duplicateMemoryMs that no resend may answer): no age decides it; it stays open
        // for a person (onStale).
        this.probe('open without a window, held by no one');
      } else if (record.state === 'initiating' || record.state === 'pending' || record.state === 'unknown') {
        this.violations.push(
          `LIVENESS: ${reference} still ${record.state} ${Math.round(boundMs / 1_000)} s after the faults stopped (service: ${held[0]?.outcome ?? 'nothing'})`,
        );
      } else if ((record.state === 'not-sent' || record.state === 'rejected') && held.length > 0) {
        this.violations.push(`CONTRADICTION: ${reference} is ${record.state} but the service holds collection #${held[0]?.id}`);
      } else if ((record.state === 'successful' || record.state === 'failed') && !outcomesOf(held[0]).includes(record.state)) {
        // A reversed collection's first outcome may stay the record's: the contradiction is then said (sim.ts's audit).
        this.violations.push(`CONTRADICTION: ${reference} is ${record.state}; the service says ${held[0]?.outcome ?? 'nothing'}`);
      }
    }
    for (const [reference, tolds] of this.#told) {
      const held = service.holding(reference);
      for (const told of tolds) {
        const truth = held[0] === undefined ? 'nothing' : outcomesOf(held[0]).join(' then ');
        const agrees =
          told.meaning === 'not-sent' || told.meaning === 'rejected' ? held.length === 0 : outcomesOf(held[0]).includes(told.meaning);
        if (!agrees) this.violations.push(`TOLD-WRONG: ${told.by} told ${told.meaning} for ${short(reference)}; the service says ${truth}`);
      }
    }
    for (const [reference, name] of this.#definite) {
      if (service.holding(reference).length > 0)
        this.violations.push(`TOLD-NOT-CREATED: ${short(reference)} was answered ${name} but the service holds it`);
    }
  }
}

/** One arrival at the service: its true time, its process's name, and when it was handed to `fetch` (its token taken). */
export interface Arrival {
  readonly at: number;
  readonly by: string;
  readonly handedAt?: number;
}

/**
 * The key's shared budget: arrivals of the processes that draw on it never exceed `limit` in any 1 s window of true
 * time (sliding: `limit + 1` arrivals less than 1 000 ms apart break it). Reports the first such window. An adaptive
 * key's limit is a function of the window (sim.ts's `learntLimit`): of its first arrival, and of the earliest moment one
 * of its requests was handed to `fetch` (`from`). A request's token is spent when it is handed to `fetch`, under the
 * share and the rate learnt then; it may wait long before it arrives (a connection pool, within its attempt's time
 * limit), while the journal keeps its token counted (a holder keeps its requests in flight), and a window is judged by
 * what was learnt when its requests were spent, not by a rate learnt since.
 */
export function budgetWindowViolations(arrivals: readonly Arrival[], limitOf: number | ((at: number, from: number) => number)): string[] {
  for (let i = 0; i < arrivals.length; i++) {
    const first = arrivals[i] as Arrival;
    if (typeof limitOf === 'number') {
      const last = arrivals[i + limitOf];
      if (last === undefined) break;
      if (last.at - first.at < 1_000) return [windowViolation(arrivals.slice(i, i + limitOf + 1), limitOf)];
      continue;
    }
    let from = first.at;
    for (let j = i; j < arrivals.length && (arrivals[j] as Arrival).at - first.at < 1_000; j++) {
      const arrival = arrivals[j] as Arrival;
      from = Math.min(from, arrival.handedAt ?? arrival.at);
      const limit = limitOf(first.at, from);
      if (j - i + 1 > limit) return [windowViolation(arrivals.slice(i, j + 1), limit)];
    }
  }
  return [];
}

function windowViolation(inWindow: readonly Arrival[], limit: number): string {
  const first = inWindow[0] as Arrival;
  const last = inWindow.at(-1) as Arrival;
  const by = new Map<string, number>();
  for (const arrival of inWindow) by.set(arrival.by, (by.get(arrival.by) ?? 0) + 1);
  return `BUDGET-WINDOW: ${inWindow.length} arrivals in ${Math.round(last.at - first.at)} ms from t+${((first.at - T0) / 1_000).toFixed(3)}s (limit ${limit}/s): ${[...by].map(([name, count]) => `${name} ×${count}`).join(', ')}`;
}

/** What the re-check invariant reads of the scheduler: true time, and whether a process ran late (paused, stalled). */
export interface RecheckClock {
  readonly now: () => number;
  readonly ranLate: (proc: Proc, from: number, to: number) => boolean;
  /** The lease a worker renews what it keeps with (a renewal with another is a park, or a set-aside). */
  readonly leaseOf: (proc: Proc) => number | undefined;
}

/** CONTRACT ("the poll schedule"): the worker's longest pause by default, its jitter, and the pause by age. */
const DEFAULT_MAX_INTERVAL_MS = 2_000;
const JITTER = 0.1;
const SLOWEST_PAUSE_MS = 60_000;
const SLOW_AFTER_MS = 3_600_000;

/**
 * The longest pause a worker takes before checking a payment again (CONTRACT, docs/guide/settlement-worker.md): its
 * schedule's largest pause, `maxIntervalMs` jittered ±10 %; for a payment open long, up to a minute by its age (a
 * minute after an hour), `maxIntervalMs` if larger.
 */
export function longestPauseMs(ageMs: number, maxIntervalMs = DEFAULT_MAX_INTERVAL_MS): number {
  const byAge = Math.min(Math.max(SLOWEST_PAUSE_MS, maxIntervalMs), (Math.max(0, ageMs) * SLOWEST_PAUSE_MS) / SLOW_AFTER_MS);
  return Math.max(maxIntervalMs * (1 + JITTER), byAge);
}

/**
 * The settlement worker's re-check (docs/guide/settlement-worker.md: a payment it holds stays in its one queue until it
 * settles; one whose next check is far off is parked, its lease renewed until that check is due; a 429 pauses every
 * check, the leases still renewed; a journal that fails has its renewals tried again; `stop()` releases):
 *
 * - RECHECK-LAPSED: a worker that was answered about a payment it holds acts on it again before its lease can run
 *   out: it checks it again, renews its lease (kept, parked, or set aside: each a renewal naming it) or releases it.
 *   A lease that runs out after a check with none of these (the journal hands the payment out again while the worker
 *   still owes it a step) is a LAPSED lease: the payment was dropped and waits for the lease's expiry and a scan
 *   instead of its schedule, which the liveness bound (a lease plus a scan per dead worker) is too loose to see.
 *   Judged when the journal leases the payment again. Not judged (the worker could not act, or the lease ran out
 *   under it): the worker died or stopped; an operation of its waited a second or more to run in between (paused,
 *   its event loop stalled: its renewal timer may have run late); the journal's clock stepped forward in between (the
 *   journal's leases ran out early by the step). "In between" runs from the grant of the lease that ran out (its lease
 *   or renewal applied) to the new lease. A step of the worker's own wall clock is no excuse, either way: it measures
 *   its leases, renewals and schedule on its monotonic clock, which never steps.
 * - RECHECK-LATE, once `timed` is set (sim.ts: the faults stopped, in worlds without the key's shared budget, whose
 *   tokens may hold a queue back for longer): a payment the worker keeps (no parking renewal, no release, not leased
 *   away) is checked again by it within `timed`'s allowance from the answer: the longest pause of its schedule for
 *   the payment's age and one lease. Not judged after a 429 answered to it since (the whole worker pauses).
 */
export class Rechecks {
  readonly violations: string[] = [];
  /** Set when checks are timed: for a worker and a payment created at `createdAt` (true time), how long its next check may take from an answer. */
  timed: ((proc: Proc, createdAt: number) => number) | undefined;
  readonly #clock: RecheckClock;
  readonly #probe: (name: string) => void;
  /**
   * The process the journal last leased each reference to, or renewed its lease for, while that holds, and when
   * (true time): the lease it holds ran from then.
   */
  readonly #holder = new Map<string, { readonly proc: Proc; readonly since: number }>();
  /**
   * References a holder was answered about and has not acted on since: the holder, the answer's true time, and when
   * the lease it held then was granted.
   */
  readonly #owed = new Map<string, { readonly proc: Proc; readonly at: number; readonly granted: number }>();
  /** Timed references a holder keeps: its answer's true time and when its next check is due at the latest. */
  readonly #due = new Map<string, { readonly proc: Proc; readonly at: number; readonly by: number }>();
  /** References whose holder last parked or set them aside (a renewal with a lease other than its own). */
  readonly #parked = new Set<string>();
  /** References each holder was answered about at least once since it leased them. */
  readonly #answered = new Set<string>();
  /** Each reference's creation (true time), as leases handed it out. */
  readonly #createdAt = new Map<string, number>();
  /** The last 429 each process was answered (true time). */
  readonly #rateLimited = new Map<Proc, number>();
  /** When the journal's clock stepped forward (true time): the only step that may end a lease early. */
  readonly #steps: number[] = [];

  constructor(clock: RecheckClock, probe: (name: string) => void) {
    this.#clock = clock;
    this.#probe = probe;
  }

  /** A status check's answer (`what`: its word, `429`, `404`, `refused`…) reached `proc`. */
  answered(proc: Proc, referenceId: string, what = ''): void {
    const now = this.#clock.now();
    if (what.startsWith('429')) this.#rateLimited.set(proc, now);
    const holder = this.#holder.get(referenceId);
    if (holder?.proc !== proc) return;
    this.#answered.add(referenceId);
    this.#owed.set(referenceId, { proc, at: now, granted: holder.since });
    const createdAt = this.#createdAt.get(referenceId);
    if (this.timed !== undefined && createdAt !== undefined)
      this.#due.set(referenceId, { proc, at: now, by: now + this.timed(proc, createdAt) });
  }

  /** `proc` handed a status check of `referenceId` to `fetch`. */
  asked(proc: Proc, referenceId: string): void {
    const due = this.#due.get(referenceId);
    if (this.#owed.get(referenceId)?.proc === proc) this.#owed.delete(referenceId);
    if (due?.proc !== proc) return;
    this.#due.delete(referenceId);
    this.#late(referenceId, due, this.#clock.now());
  }

  /** `proc` acted on these references: a renewal (with its lease) or a release (`leaseMs` undefined) issued. */
  acted(proc: Proc, referenceIds: readonly string[], leaseMs?: number): void {
    // A release, or a renewal for another time than the worker's lease (parked until its next check, or set aside).
    const letGo = leaseMs === undefined || leaseMs !== this.#clock.leaseOf(proc);
    for (const referenceId of referenceIds) {
      if (this.#owed.get(referenceId)?.proc === proc) this.#owed.delete(referenceId);
      if (!letGo) continue;
      if (this.#holder.get(referenceId)?.proc === proc) this.#parked.add(referenceId);
      if (this.#due.get(referenceId)?.proc === proc) this.#due.delete(referenceId);
    }
  }

  /** A renewal of `proc` applied: it holds what was kept, and no longer what was not. */
  renewed(proc: Proc, asked: readonly string[], kept: readonly string[]): void {
    const still = new Set(kept);
    for (const referenceId of asked) {
      if (still.has(referenceId)) this.#holder.set(referenceId, { proc, since: this.#clock.now() });
      else if (this.#holder.get(referenceId)?.proc === proc) {
        this.#holder.delete(referenceId);
        this.#due.delete(referenceId);
      }
    }
  }

  /**
   * A clock stepped: the journal's (`proc` undefined) or a process's. Only the journal's forward steps can end a lease
   * early; a process's own steps never touch the worker's leases (it measures them on its monotonic clock).
   */
  clockStep(proc: Proc | undefined, size: number): void {
    if (proc === undefined && size > 0) this.#steps.push(this.#clock.now());
  }

  /** The journal leased these references to `proc`: any still owed by an earlier holder lapsed. */
  leased(proc: Proc, leased: readonly { readonly id: string; readonly createdAt: number }[]): void {
    const now = this.#clock.now();
    for (const { id: referenceId, createdAt } of leased) {
      this.#createdAt.set(referenceId, createdAt);
      this.#due.delete(referenceId);
      this.#parked.delete(referenceId);
      this.#answered.delete(referenceId);
      const owed = this.#owed.get(referenceId);
      this.#owed.delete(referenceId);
      this.#holder.set(referenceId, { proc, since: now });
      if (owed === undefined) continue;
      // From the grant of the lease that ran out: a step or a stall before the answer may have ended it too.
      const stepped = this.#steps.some((at) => at >= owed.granted);
      if (owed.proc.dead || owed.proc.done || stepped || this.#clock.ranLate(owed.proc, owed.granted, now)) {
        this.#probe('lease lapsed after a check (worker dead, late or stepped)');
        continue;
      }
      this.violations.push(
        `RECHECK-LAPSED: ${owed.proc.name} was answered about ${short(referenceId)} at t+${((owed.at - T0) / 1_000).toFixed(3)}s, held it, and neither checked it again, renewed (kept or parked) nor released it: its lease ran out and the journal leased it to ${proc.name} at t+${((now - T0) / 1_000).toFixed(3)}s`,
      );
    }
  }

  /**
   * Checks become timed (the faults stopped): a payment a live worker holds and keeps (it was answered about it since
   * its lease, and did not park it) is due a check within the allowance from now.
   */
  startTiming(timed: (proc: Proc, createdAt: number) => number): void {
    this.timed = timed;
    const now = this.#clock.now();
    for (const [referenceId, holder] of this.#holder) {
      const createdAt = this.#createdAt.get(referenceId);
      if (holder.proc.dead || holder.proc.done || createdAt === undefined) continue;
      if (this.#parked.has(referenceId) || !this.#answered.has(referenceId)) continue;
      this.#due.set(referenceId, { proc: holder.proc, at: now, by: now + timed(holder.proc, createdAt) });
    }
  }

  /** The end of the run: a kept payment still open (`isOpen`) whose next check was due before it and never came. */
  finish(isOpen: (referenceId: string) => boolean): void {
    const now = this.#clock.now();
    for (const [referenceId, due] of this.#due) if (due.by < now && isOpen(referenceId)) this.#late(referenceId, due, now, true);
    this.#due.clear();
  }

  #late(referenceId: string, due: { readonly proc: Proc; readonly at: number; readonly by: number }, now: number, never = false): void {
    if (now <= due.by) {
      this.#probe('kept payment checked again in time');
      return;
    }
    if (due.proc.dead || due.proc.done || (this.#rateLimited.get(due.proc) ?? Number.NEGATIVE_INFINITY) >= due.at) return;
    if (this.#clock.ranLate(due.proc, due.at, now)) return;
    this.violations.push(
      `RECHECK-LATE: ${due.proc.name} kept ${short(referenceId)} from t+${((due.at - T0) / 1_000).toFixed(3)}s (an answer, or the start of timed checks) and ${never ? 'had not checked it again by the end' : `checked it again only at t+${((now - T0) / 1_000).toFixed(3)}s`} (due by t+${((due.by - T0) / 1_000).toFixed(3)}s: its longest pause and a lease)`,
    );
  }
}
