/**
 * The journal as each simulated process sees it: one real store, `MemoryJournal` or (the SQLite variant,
 * `SIM_JOURNAL=sqlite`) a `SqliteJournal` on a private in-memory database, or (the PostgreSQL variant,
 * `SIM_JOURNAL=postgres`) a model of `PostgresJournal` under READ COMMITTED (postgres-model.ts), whose clock is the
 * journal's own simulated clock (it may be offset and jump), reached through a per-process wrapper in which every call
 * takes simulated time (it is applied after a latency and acknowledged after another, each an operation of the
 * scheduler), may fail with `JournalError` before it is applied, or be applied and then lose its acknowledgement.
 *
 * No vitest import (see scheduler.ts).
 */
import { JournalError } from '../../src/core/errors.js';
import type { BudgetGrant, BudgetRequest } from '../../src/journal/budget.js';
import type { PaymentChange, PaymentJournal, PaymentRecord, PaymentTransition } from '../../src/journal/journal.js';
import { MemoryJournal } from '../../src/journal/memory.js';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { DEFAULT_GRACE_MS, isOpenState, judgedWindow, notFoundIsEvidence, verdictAge } from './oracle.js';
import { PostgresModel } from './postgres-model.js';
import type { Proc, Scheduler } from './scheduler.js';

export interface JournalFaults {
  maxLatencyMs: number;
  /** A call fails before it is applied. */
  failBefore: number;
  /** A write is applied, then its acknowledgement is lost (the caller sees `JournalError`). */
  lostAck: number;
  /** A `takeBudget` fails (after its latency, not applied): the holder spends what is left of its share, then waits. */
  budgetFail?: number;
  /** A `takeBudget` is slow: up to this much more latency (a busy database), so shares lapse locally meanwhile. */
  maxBudgetStallMs?: number;
}

/** The PostgreSQL variant: the longest a write holds its row locks on a healthy server (its run and commit). */
const HEALTHY_HOLD_MS = 3;

export const RELIABLE_JOURNAL: JournalFaults = { maxLatencyMs: 0, failBefore: 0, lostAck: 0 };

/**
 * Which store a run's journal is: the SQLite variant runs the same world on `SqliteJournal`, the PostgreSQL variant
 * on the model of `PostgresJournal` under READ COMMITTED (postgres-model.ts).
 */
export type SimStore = 'memory' | 'sqlite' | 'postgres';

/** The one store of a run, with its clock. */
export class SimJournal {
  readonly store: PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget' | 'close'>>;
  readonly kind: SimStore;
  #offset = 0;
  /** Called when the journal's clock steps (`size` ms, forward when positive). */
  onClockStep: (size: number) => void = () => {};
  /**
   * The settlement workers' leases as the journal sees them (invariants.ts, `Rechecks`): a lease or renewal
   * applied (the ids it handed out or kept), and a renewal or release issued by `proc` (before the journal's latency).
   */
  onLeased: (proc: Proc, leased: readonly { readonly id: string; readonly createdAt: number }[]) => void = () => {};
  onRenewed: (proc: Proc, asked: readonly string[], kept: readonly string[]) => void = () => {};
  /** A renewal (with its lease) or a release (`leaseMs` undefined) issued. */
  onLeaseCall: (proc: Proc, ids: readonly string[], leaseMs: number | undefined) => void = () => {};

  /** The journal clock's offset from true time; clock jumps change it. */
  get offset(): number {
    return this.#offset;
  }

  set offset(value: number) {
    const size = value - this.#offset;
    this.#offset = value;
    if (size !== 0) this.onClockStep(size);
  }
  faults: JournalFaults;
  readonly #sim: Scheduler;
  readonly #random: () => number;
  /** The PostgreSQL variant's statements (`store` is then its committed rows). */
  readonly #postgres: PostgresModel | undefined;
  readonly hits = new Map<string, number>();
  /**
   * True time of each process's last write that let an attempt leave (`initiating`), by process and reference (the
   * time its stamp stands for, see `lastWrite`): the service's physics bounds a push's effect by it (service.ts).
   */
  readonly sendingWrites = new Map<string, number>();
  /**
   * True time the writer learnt of that write (its acknowledgement): an attempt's deadline starts there, so a push
   * may leave up to the write's round trip after `sendingWrites` (service.ts checks departures against it).
   */
  readonly sendingAcks = new Map<string, number>();
  /**
   * For each `initiate` call in flight (`proc.id:reference`, set by the till's sale): whether it has written
   * `initiating` yet. Its later `initiating` writes are resends of the same call, each after a definite answer or a
   * lookup (the call's own attempts, answered), not a takeover: a resend after a long `Retry-After` comes more than a
   * window after the call's first write (seeds 7450 and 9165 of the 10 000-seed sweep).
   */
  readonly callsWriting = new Map<string, boolean>();
  /**
   * True time the writer issued that write (before its latency): an attempt's deadline counts from a clock reading
   * before the write is issued (journaled-initiate.ts), so no push leaves later than its window after this.
   */
  readonly sendingIssues = new Map<string, number>();
  /** References whose record is open (kept as writes land, so the runner can tell when all are final without a read). */
  readonly open = new Set<string>();
  /**
   * The last applied write of each reference: its version, process and state, and the true time its stamp
   * (`updatedAt`) stands for: the moment it was applied, or on PostgreSQL its statement's start (`now()`), which may
   * come before a wait for the row's lock and so before the write commits.
   */
  readonly lastWrite = new Map<string, { version: number; at: number; proc: Proc; state: string }>();
  /** The shortest grace a reader of this world gives a 404 (the verdict bound, see `#judgeVerdict`). */
  minGraceMs = DEFAULT_GRACE_MS;
  /** Each process's true attempt window (the oracle's formula of its client's settings: processes.ts). */
  readonly senderWindows = new Map<Proc, number>();
  /** The process that last wrote `initiating` for each reference: the window a verdict on it is judged with is its. */
  readonly lastSender = new Map<string, Proc>();
  /**
   * Each process's first sight of the newest version of each record it was handed (`proc.id:reference`): the true time
   * the answer that carried it was applied (a read's, or the process's own write's). The process's watch of that
   * version can start no earlier, so it measures at most the time since (the watch's invariant, `#judgeMeasures`).
   */
  readonly #sightings = new Map<string, { version: number; at: number }>();
  /** Every journal-clock reading each process was answered (`now()`), with the true time it was applied. */
  readonly #readings = new Map<number, { at: number; value: number }[]>();
  /**
   * The world's clients say the service refuses duplicate references: an open record is resent (taken over) at once
   * by design, so the takeover bound of the `'unknown'` rule does not apply; the service's refusal and the ledger's
   * one-collection-per-sale check carry the safety instead.
   */
  resendsAtOnce = false;
  /** Violations of the verdict bound (the runner adds them to the ledger's). */
  readonly violations: string[] = [];
  /** The last status answer `proc` had for a reference (service.ts), and whether its baseUrl is wrong (sim.ts). */
  lastStatusOf: (proc: Proc, referenceId: string) => string | undefined = () => undefined;
  wrongPrefix: (proc: Proc) => boolean = () => false;
  /** The base URL `proc` is configured for, when it is a second deployment's (elsewhere.ts); `undefined` otherwise. */
  elsewhere: (proc: Proc) => string | undefined = () => undefined;
  /** Called when the journal grants a holder its share (the budget's trace: sim.ts). */
  onGrant: (proc: Proc, request: BudgetRequest, grant: BudgetGrant) => void = () => {};
  /** Called when a holder's renewal is sent, and when it fails (sim.ts: the budget's documented limit). */
  onRenewalSent: (proc: Proc) => void = () => {};
  onRenewalFailed: (proc: Proc) => void = () => {};
  /** Called when a process's write lets a push leave (directed deciders watch from there: sim.ts). */
  onSendingWrite: (proc: Proc, record: PaymentRecord) => void = () => {};

  constructor(sim: Scheduler, random: () => number, faults: JournalFaults, kind: SimStore = 'memory') {
    this.#sim = sim;
    this.#random = random;
    this.faults = faults;
    this.kind = kind;
    const now = () => sim.now + this.offset;
    if (kind === 'postgres') {
      // Its own stream of draws (lock holds, round trips between a method's statements): the journal's stream keeps
      // the draws it makes on the other stores.
      const own = seededRandom(Math.floor(random() * 2 ** 32));
      const latency = () => Math.floor(own() * (this.faults.maxLatencyMs + 1));
      // A write holds its row locks while it runs and its commit is flushed: a few milliseconds on a healthy server,
      // up to half the journal's latency on a slow one (the same fault: a busy database), so none once faults stop.
      const slowCommits = own() / 2;
      const maxHoldMs = () => HEALTHY_HOLD_MS + Math.floor(slowCommits * this.faults.maxLatencyMs);
      this.#postgres = new PostgresModel(sim, own, now, () => latency() + latency(), maxHoldMs, this.hits);
      this.store = this.#postgres.rows;
    } else this.store = kind === 'sqlite' ? new SqliteJournal(':memory:', { now }) : new MemoryJournal({ now });
  }

  /**
   * No record moves on a second deployment's answers (CONTRACT, "Evidence from the deployment the push went to"): a
   * process configured for another base URL than the one the record's push went to never writes it. (A record with no
   * deployment predates them, or its key could not be read and nothing was sent: any client may judge it.)
   */
  #judgeElsewhere(proc: Proc, before: PaymentRecord | undefined, change: { state: string }): void {
    const configured = this.elsewhere(proc);
    const recorded = before?.deployment?.baseUrl;
    if (configured === undefined || before === undefined || recorded === undefined || recorded === configured) return;
    this.violations.push(
      `MOVED-ELSEWHERE: ${before.referenceId.slice(0, 8)} (pushed to ${recorded}) moved ${before.state} → ${change.state} by ${proc.name}, configured for ${configured}`,
    );
  }

  /**
   * The verdict bound, in true time: a `not-sent` verdict (a `not-sent` without an error of the sender's own) or a
   * takeover (another process's, or a later call's, write of `initiating` over an open record) lands only once the
   * window of the record it judged and the decider's grace have passed since that record's write. Clocks drift by
   * up to 0.01 % (the processes' watches), so the bound is shortened by 0.02 %.
   *
   * "Since that record's write" is since the true time its stamp stands for (`lastWrite`): on PostgreSQL the
   * statement's start, not its commit. The SDK promises the window from `updatedAt` (its attempts' deadlines count
   * from a clock reading before the write is issued, so before the statement starts), and the service's physics
   * bounds a push's effect by the same moment (`sendingWrites`). Measured from the commit, the bound would flag a
   * verdict the window honestly allows (a decider trusting `updatedAt` after the write waited for a lock: every push
   * of it is over by then); measured from the issue it would miss one a lock wait made early. The verdict itself
   * lands when it commits (now).
   */
  #judgeVerdict(proc: Proc, before: PaymentRecord | undefined, change: { state: string; error?: unknown; by: string }): void {
    if (before === undefined || !isOpenState(before.state) || before.state === 'pending') return;
    const last = this.lastWrite.get(before.referenceId);
    if (last === undefined || last.version !== before.version) return;
    const elapsed = this.#sim.now - last.at;
    const sender = this.lastSender.get(before.referenceId);
    const window = judgedWindow(before, sender === undefined ? undefined : this.senderWindows.get(sender));
    const short = before.referenceId.slice(0, 8);
    if (change.state === 'not-sent' && change.error === undefined) {
      const seen = this.lastStatusOf(proc, before.referenceId);
      if (!notFoundIsEvidence(seen, this.wrongPrefix(proc)))
        this.violations.push(
          `NOT-SENT-ON-BARE-404: ${short} closed not-sent by ${proc.name} (${this.wrongPrefix(proc) ? 'its baseUrl has a wrong prefix' : 'its last status answer was a bare 404'})`,
        );
      if (!Number.isFinite(window)) {
        this.violations.push(`NOT-SENT-BY-AGE-WITHOUT-WINDOW: ${short} closed not-sent by ${proc.name}; its record has no window`);
        return;
      }
      this.#judgeMeasures(proc, before, window);
      const bound = verdictAge(window, this.minGraceMs);
      if (elapsed < bound)
        this.violations.push(
          `EARLY-VERDICT: ${short} closed not-sent by ${proc.name} ${Math.round(elapsed)} ms after its last write (window ${window} ms + grace ${this.minGraceMs} ms)`,
        );
    } else if (change.state === 'initiating' && last.proc === proc && this.callsWriting.get(`${proc.id}:${before.referenceId}`) === true) {
      // A resend within the call that wrote the record: not a takeover.
    } else if (
      !this.resendsAtOnce &&
      change.state === 'initiating' &&
      (last.proc !== proc || this.#sim.now - (this.sendingAcks.get(`${proc.id}:${before.referenceId}`) ?? last.at) >= window)
    ) {
      // A takeover by `initiate` (its grace is the default): a resend's own write comes within its call's window
      // after the acknowledgement of its last write (the attempt's deadline starts there).
      const bound = verdictAge(window, DEFAULT_GRACE_MS);
      if (!(elapsed >= bound))
        this.violations.push(
          `EARLY-TAKEOVER: ${short} taken over by ${proc.name} ${Math.round(elapsed)} ms after ${last.proc.name}'s write (window ${window} ms + grace ${DEFAULT_GRACE_MS} ms)`,
        );
    }
  }

  /**
   * One invariant per measure of a record's age (CONTRACT, "Evidence for `not-sent`", "Age is measured twice"), each
   * judged alone, so that a slip in one is not hidden by the other:
   * - the watch alone never says a record is older than it is: the decider must have held the version it closed for
   *   the window and the grace of true time since its first sight of it (`WATCH-MEASURE`);
   * - the journal's measure alone never says a record is older than it is by the journal's clock: a reading of that
   *   clock the decider was answered after its first sight must be the record's `updatedAt` plus the window and the
   *   grace or later (`JOURNAL-MEASURE`).
   */
  #judgeMeasures(proc: Proc, before: PaymentRecord, window: number): void {
    const short = before.referenceId.slice(0, 8);
    const bound = verdictAge(window, this.minGraceMs);
    const sight = this.#sightings.get(`${proc.id}:${before.referenceId}`);
    const watched = sight === undefined || sight.version !== before.version ? 0 : this.#sim.now - sight.at;
    if (watched < bound)
      this.violations.push(
        `WATCH-MEASURE: ${short} closed not-sent by ${proc.name}, which had held version ${before.version} for ${Math.round(watched)} ms of true time (window ${window} ms + grace ${this.minGraceMs} ms)`,
      );
    const since = sight?.at ?? this.#sim.now;
    const readings = (this.#readings.get(proc.id) ?? []).filter((reading) => reading.at >= since).map((reading) => reading.value);
    const measured = readings.length === 0 ? Number.NEGATIVE_INFINITY : Math.max(...readings) - Date.parse(before.updatedAt);
    if (!(measured >= (window + this.minGraceMs) * (1 - 1e-9)))
      this.violations.push(
        `JOURNAL-MEASURE: ${short} closed not-sent by ${proc.name}; the journal's clock had said it was ${readings.length === 0 ? 'never read since' : `${Math.round(measured)} ms old`} (window ${window} ms + grace ${this.minGraceMs} ms)`,
      );
  }

  #read(proc: Proc, value: unknown): void {
    const readings = this.#readings.get(proc.id) ?? [];
    readings.push({ at: this.#sim.now, value: Date.parse(String(value)) });
    this.#readings.set(proc.id, readings);
  }

  /** Notes the records an answer to `proc` carried (its first sight of each version). */
  #sighted(proc: Proc, value: unknown): void {
    const note = (record: unknown) => {
      if (record === null || typeof record !== 'object') return;
      const { referenceId, version } = record as { referenceId?: unknown; version?: unknown };
      if (typeof referenceId !== 'string' || typeof version !== 'number') return;
      const key = `${proc.id}:${referenceId}`;
      const seen = this.#sightings.get(key);
      if (seen === undefined || seen.version < version) this.#sightings.set(key, { version, at: this.#sim.now });
    };
    if (Array.isArray(value)) for (const item of value) note(item);
    else if (value !== null && typeof value === 'object' && 'applied' in value) note((value as PaymentTransition).record);
    else note(value);
  }

  /** The true window of the process that last sent `referenceId` (the oracle's formula of its settings), if known. */
  windowOf(referenceId: string): number | undefined {
    const sender = this.lastSender.get(referenceId);
    return sender === undefined ? undefined : this.senderWindows.get(sender);
  }

  /** A write landed; `at` is the true time its stamp stands for (see `lastWrite`). */
  #wrote(proc: Proc, record: PaymentRecord | undefined, at = this.#sim.now): void {
    if (record === undefined) return;
    this.lastWrite.set(record.referenceId, { version: record.version, at, proc, state: record.state });
  }

  /** The bookkeeping of an insert that landed (`at` as in {@link SimJournal.lastWrite}). */
  #inserted(proc: Proc, referenceId: string, inserted: PaymentRecord | undefined, issuedAt: number, at: number): void {
    this.#note(inserted);
    this.#wrote(proc, inserted, at);
    if (inserted !== undefined && inserted.state === 'initiating') {
      if (this.callsWriting.has(`${proc.id}:${referenceId}`)) this.callsWriting.set(`${proc.id}:${referenceId}`, true);
      this.sendingWrites.set(`${proc.id}:${referenceId}`, at);
      this.sendingIssues.set(`${proc.id}:${referenceId}`, issuedAt);
      this.lastSender.set(inserted.referenceId, proc);
      this.onSendingWrite(proc, inserted);
    }
  }

  /** The bookkeeping of a transition, as it lands (`before`: the record it found; `at` as in {@link SimJournal.lastWrite}). */
  #transitioned(
    proc: Proc,
    referenceId: string,
    change: PaymentChange,
    before: PaymentRecord | undefined,
    result: PaymentTransition,
    issuedAt: number,
    at: number,
  ): void {
    if (result.applied) {
      this.#judgeElsewhere(proc, before, change);
      this.#judgeVerdict(proc, before, change);
      this.#note(result.record);
      this.#wrote(proc, result.record, at);
    }
    if (result.applied && change.state === 'initiating') {
      if (this.callsWriting.has(`${proc.id}:${referenceId}`)) this.callsWriting.set(`${proc.id}:${referenceId}`, true);
      this.sendingWrites.set(`${proc.id}:${referenceId}`, at);
      this.sendingIssues.set(`${proc.id}:${referenceId}`, issuedAt);
      if (result.record !== undefined) this.lastSender.set(result.record.referenceId, proc);
      if (result.record !== undefined) this.onSendingWrite(proc, result.record);
    } else if (!result.applied) this.hits.set('compare-and-set lost', (this.hits.get('compare-and-set lost') ?? 0) + 1);
  }

  #note(record: PaymentRecord | undefined): void {
    if (record === undefined) return;
    if (isOpenState(record.state)) this.open.add(record.referenceId);
    else this.open.delete(record.referenceId);
  }

  #hit(what: string): void {
    this.hits.set(what, (this.hits.get(what) ?? 0) + 1);
  }

  /**
   * An operator closes an open record by hand (`not-sent`, straight in the store): the writer between two attempts
   * of one call must then stop sending (it is overtaken).
   */
  async closeByHand(referenceId: string, operator: Proc): Promise<void> {
    const current = await this.store.get(referenceId);
    if (current === undefined || (current.state !== 'initiating' && current.state !== 'unknown')) return;
    const change: PaymentChange = { state: 'not-sent', by: 'operator' };
    if (this.#postgres !== undefined) {
      // The operator's UPDATE is a statement like any other: it may wait for the row's lock.
      await this.#postgres.transition(operator, referenceId, current.version, change, (_before, result, started) => {
        if (!result.applied) return;
        this.#hit('record closed by hand');
        this.#note(result.record);
        this.#wrote(operator, result.record, started.at);
      });
      return;
    }
    const result = await this.store.transition(referenceId, current.version, change);
    if (!result.applied) return;
    this.#hit('record closed by hand');
    this.#note(result.record);
    this.#wrote(operator, result.record);
  }

  /** The journal as `proc` reaches it. */
  forProcess(proc: Proc): PaymentJournal {
    const call = <T>(
      label: string,
      write: boolean,
      apply: (issuedAt: number) => Promise<T>,
      acked: () => void = () => {},
      stallMs = 0,
    ): Promise<T> => {
      const sim = this.#sim;
      const random = this.#random;
      const f = this.faults;
      const latency = () => Math.floor(random() * (f.maxLatencyMs + 1));
      const issuedAt = sim.now;
      return new Promise<T>((resolve, reject) => {
        sim.at(sim.now + latency() + stallMs, proc, `journal ${label}`, () => {
          if (f.failBefore > 0 && random() < f.failBefore) {
            this.#hit('journal failed before applying');
            reject(new JournalError(`Payment journal: ${label} failed (simulated)`, undefined, undefined));
            return;
          }
          apply(issuedAt).then(
            (value) => {
              if (label === 'now') this.#read(proc, value);
              else this.#sighted(proc, value);
              const lost = write && f.lostAck > 0 && random() < f.lostAck;
              if (lost) this.#hit('journal write applied, acknowledgement lost');
              sim.at(sim.now + latency(), proc, `journal ${label} ack`, () => {
                if (lost) return reject(new JournalError(`Payment journal: ${label}: connection lost (simulated)`, undefined, undefined));
                acked();
                resolve(value);
              });
            },
            (error: unknown) => sim.at(sim.now + latency(), proc, `journal ${label} failed`, () => reject(error)),
          );
        });
      });
    };
    const store = this.store;
    const postgres = this.#postgres;
    const sim = this.#sim;
    const short = (referenceId: string) => referenceId.slice(0, 8);
    return {
      insert: (record) =>
        call(
          `insert ${short(record.referenceId)}`,
          true,
          async (issuedAt) => {
            if (postgres !== undefined)
              return postgres.insert(record, (inserted, started) =>
                this.#inserted(proc, record.referenceId, inserted, issuedAt, started.at),
              );
            const inserted = await store.insert(record);
            this.#inserted(proc, record.referenceId, inserted, issuedAt, sim.now);
            return inserted;
          },
          () => this.sendingAcks.set(`${proc.id}:${record.referenceId}`, sim.now),
        ),
      transition: (referenceId, version, change) =>
        call(
          `transition ${short(referenceId)} v${version} → ${change.state}`,
          true,
          async (issuedAt) => {
            if (postgres !== undefined)
              return postgres.transition(proc, referenceId, version, change, (before, result, started) =>
                this.#transitioned(proc, referenceId, change, before, result, issuedAt, started.at),
              );
            const before = await store.get(referenceId);
            const result = await store.transition(referenceId, version, change);
            this.#transitioned(proc, referenceId, change, before, result, issuedAt, sim.now);
            return result;
          },
          () => {
            if (change.state === 'initiating') this.sendingAcks.set(`${proc.id}:${referenceId}`, sim.now);
          },
        ),
      now: () => call('now', false, () => store.now()),
      get: (referenceId) => call(`get ${short(referenceId)}`, false, () => store.get(referenceId)),
      list: (filter) => call('list', false, () => store.list(filter)),
      history: (referenceId) => call(`history ${short(referenceId)}`, false, () => store.history(referenceId)),
      // Reads (`now`, `get`, `list`, `history`) need nothing of their own on PostgreSQL: each runs when its statement
      // starts and sees what was committed then (its answer comes back a latency later).
      lease: (request) =>
        call('lease', true, async () => {
          const records = await (postgres ?? store).lease(request);
          // A record's creation in true time: its stamp is the journal's clock, whose offset is known here.
          this.onLeased(
            proc,
            records.map((record) => ({ id: record.referenceId, createdAt: Date.parse(record.createdAt) - this.offset })),
          );
          return records;
        }),
      renew: (owner, ids, leaseMs) => {
        this.onLeaseCall(proc, ids, leaseMs);
        return call('renew', true, async () => {
          const kept = await (postgres ?? store).renew(owner, ids, leaseMs);
          this.onRenewed(proc, ids, kept);
          return kept;
        });
      },
      release: (owner, ids) => {
        this.onLeaseCall(proc, ids, undefined);
        return call('release', true, () => (postgres ?? store).release(owner, ids));
      },
      // The key's shared budget (a write: a renewal applied whose acknowledgement is lost leaves the holder with less
      // than the journal counts, never more). Slow or failing sometimes: the holder's share lapses locally meanwhile.
      takeBudget: (request) => {
        const f = this.faults;
        const stall = (f.maxBudgetStallMs ?? 0) > 0 && this.#random() < 0.2 ? Math.floor(this.#random() * (f.maxBudgetStallMs ?? 0)) : 0;
        this.onRenewalSent(proc);
        return call(
          `takeBudget ${request.holder.slice(0, 8)} keep ${request.keep} want ${request.want}`,
          true,
          async () => {
            if ((f.budgetFail ?? 0) > 0 && this.#random() < (f.budgetFail ?? 0)) {
              this.#hit('takeBudget failed');
              this.onRenewalFailed(proc);
              throw new JournalError('Payment journal: takeBudget failed (simulated)', undefined, undefined);
            }
            if (stall > 0) this.#hit('takeBudget slow');
            const grant = await (postgres === undefined ? store.takeBudget(request) : postgres.takeBudget(proc, request));
            this.onGrant(proc, request, grant);
            return grant;
          },
          () => {},
          stall,
        );
      },
    };
  }
}
