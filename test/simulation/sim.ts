/**
 * The deterministic simulation of the payment journal (the way TigerBeetle's VOPR and FoundationDB test theirs).
 *
 * One seed decides everything: how many tills, workers, checkers and `recover()` calls run as "processes", each
 * one's clock offset (minutes apart), the fault mix of the simulated Collections service (swarm testing: every
 * seed draws its own probabilities), which process the scheduler resumes at every step, and which process is
 * killed when. The code under test is the production code, unchanged: `initiateWithJournal` with the real
 * `createOnce`, `recoverPayments`, the state machine's `advance`/`settleNotFound` (the settlement worker's rules),
 * `JournalBinding.recordStatus`/`settleNotFound` (status checks and polls), over one `MemoryJournal` whose clock is
 * the simulated true time.
 *
 * Every await point that touches the journal or the service is a step: the call registers an operation, the
 * scheduler picks one runnable operation (seeded), runs it, and waits until every process is blocked again.
 * Simulated time moves only when nothing is runnable (to the next timer), so minutes of timeouts cost nothing.
 * While a process runs, `Date.now()` reads the true time plus that process's offset.
 *
 * No vitest import: `bench/simulation.ts` runs this file under Node's type stripping.
 */
import { createHmac } from 'node:crypto';
import { JournalBinding } from '../../src/collections/journal-binding.js';
import { initiateWithJournal, NOT_FOUND_GRACE_MS } from '../../src/collections/journaled-initiate.js';
import { recoverPayments } from '../../src/collections/recover.js';
import type { CollectionStatus, InitiatedCollection } from '../../src/collections/schemas.js';
import { StatusWords } from '../../src/collections/status-words.js';
import { ConflictError, InternalServerError, NotFoundError, TimeoutError, UnknownOutcomeError } from '../../src/core/errors.js';
import { createOnce } from '../../src/core/idempotent-create.js';
import { LevelLogger } from '../../src/core/logger.js';
import { BACKOFF_BASE_MS, BACKOFF_MAX_MS, isRetryable } from '../../src/core/retry.js';
import type { CallSettings, Transport } from '../../src/core/transport.js';
import { type PaymentJournal, type PaymentRecord, withDecidableAt } from '../../src/journal/journal.js';
import { MemoryJournal } from '../../src/journal/memory.js';
import { RecordWatch } from '../../src/journal/record-watch.js';
import { advance, settleNotFound } from '../../src/journal/state-machine.js';
import { seededRandom } from '../helpers/seeded-random.js';

/**
 * The old rules, expressed as broken inputs to the unchanged production code (plus the issue's case 1), each
 * with the old single measure of a record's age (the journal's clock; no watch of its own, see `watchOf`):
 * - `unconditional`: the store ignores `expectedVersion` (every write lands, as the old `update` did);
 * - `reader-clock`: the journal's `now()` is the reading process's own (skewed) clock;
 * - `no-window`: records lose `sendWindowMs`, read as 0 (the old rule: 404 and 10 s of grace prove nothing was sent);
 * - `case-1`: the issue's case 1 (a till killed 1 s into a push the service takes 15 s to commit, `recover()` with
 *   default options on restart, the sale started over on `not-sent`) under the `no-window` rule;
 * - `case-1-new`: the same scenario under the new rules (must find nothing);
 * - `409-rejected`: `initiate`'s create treats a 409 on a first attempt as a refusal (`duplicateMeansExists` off);
 * - `beyond-model`: not a mutant of the code but of the world: the service may commit a push minutes after the
 *   client gave up (past every window and grace); no client rule can prevent a double then (shows the boundary).
 */
export type Mutant = 'unconditional' | 'reader-clock' | 'no-window' | 'case-1' | 'case-1-new' | '409-rejected' | 'beyond-model';

export const MUTANTS: readonly Mutant[] = ['unconditional', 'reader-clock', 'no-window', 'case-1'];

export interface SimulationOptions {
  readonly seed: number;
  readonly mutant?: Mutant | undefined;
  /** Keep a trace of every step (replays). */
  readonly trace?: boolean;
}

export interface SimulationResult {
  readonly seed: number;
  readonly steps: number;
  readonly violations: string[];
  readonly trace: string[];
  /** Collections the service created, sales the tills made, processes killed. */
  readonly stats: { collections: number; sales: number; crashes: number; processes: number; simulatedMs: number };
}

const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);
const MINUTE = 60_000;
const OFF_LOGGER = new LevelLogger(console, 'off');
/** The client's status words, as a client with no `statusWords` option has them. */
const STATUS_WORDS = new StatusWords();

// ---------------------------------------------------------------------------------------------------------------
// The scheduler

interface Proc {
  readonly id: number;
  readonly name: string;
  readonly offset: number;
  started: boolean;
  dead: boolean;
  done: boolean;
  /** May the scheduler kill it (the final recover may not). */
  readonly mortal: boolean;
}

interface Op {
  readonly proc: Proc | undefined;
  readonly label: string;
  readonly run: () => void;
}

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
}

/** A binary min-heap of timers by (at, seq): deterministic order for equal times. */
class TimerQueue {
  readonly #heap: Timer[] = [];
  get size(): number {
    return this.#heap.length;
  }
  push(timer: Timer): void {
    const heap = this.#heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Timer, heap[parent] as Timer)) break;
      [heap[i], heap[parent]] = [heap[parent] as Timer, heap[i] as Timer];
      i = parent;
    }
  }
  pop(): Timer | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l] as Timer, heap[m] as Timer)) m = l;
        if (r < heap.length && before(heap[r] as Timer, heap[m] as Timer)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m] as Timer, heap[i] as Timer];
        i = m;
      }
    }
    return top;
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Waits until every microtask queued so far (and those they queue) has run: the resumed process is blocked again. */
function drain(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

class Scheduler {
  now = T0;
  steps = 0;
  readonly random: () => number;
  readonly trace: string[] | undefined;
  readonly #runnable: Op[] = [];
  readonly #timers = new TimerQueue();
  #seq = 0;
  readonly procs: Proc[] = [];
  /** The process whose code runs now: `Date.now()` reads its clock. */
  current: Proc | undefined;
  crashProbability = 0;
  crashes = 0;
  onCrash: (proc: Proc) => void = () => {};
  failure: string | undefined;

  constructor(random: () => number, trace: boolean) {
    this.random = random;
    this.trace = trace ? [] : undefined;
  }

  log(message: string): void {
    this.trace?.push(`#${this.steps} t+${((this.now - T0) / 1000).toFixed(3)}s ${message}`);
  }

  /** Registers a step of `proc`: the promise settles when the scheduler picks it (never, once `proc` is dead). */
  step<T>(proc: Proc, label: string, effect: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.#enqueue(proc, label, effect, resolve, reject));
  }

  /** Runs `fire` at true time `at` (a service event, or a step made runnable then). */
  at(at: number, fire: () => void): void {
    this.#timers.push({ at: Math.max(at, this.now), seq: this.#seq++, fire });
  }

  /** A step of `proc` that becomes runnable at `at`. */
  stepAt<T>(proc: Proc, at: number, label: string, effect: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => this.at(at, () => this.#enqueue(proc, label, effect, resolve, reject)));
  }

  /** Makes a step runnable (unless its process is dead); running it settles the step's promise with `effect`'s outcome. */
  #enqueue<T>(
    proc: Proc,
    label: string,
    effect: () => T | Promise<T>,
    resolve: (value: T | Promise<T>) => void,
    reject: (error: unknown) => void,
  ): void {
    if (proc.dead) return;
    this.#runnable.push({
      proc,
      label,
      run: () => {
        try {
          resolve(effect());
        } catch (error) {
          reject(error);
        }
      },
    });
  }

  sleep(proc: Proc, ms: number, label = 'sleep'): Promise<void> {
    return this.stepAt(proc, this.now + ms, `${label} ${Math.round(ms)}ms done`, () => undefined);
  }

  spawn(name: string, offset: number, at: number, body: (proc: Proc) => Promise<void>, mortal = true): Proc {
    const proc: Proc = { id: this.procs.length, name, offset, started: false, dead: false, done: false, mortal };
    this.procs.push(proc);
    this.at(at, () => {
      this.#runnable.push({
        proc,
        label: 'start',
        run: () => {
          proc.started = true;
          body(proc).then(
            () => {
              proc.done = true;
              this.log(`${proc.name} finished`);
            },
            (error: unknown) => {
              proc.done = true;
              this.failure ??= `${proc.name} threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
              this.log(`${proc.name} THREW ${String(error)}`);
            },
          );
        },
      });
    });
    return proc;
  }

  /** Runs until nothing is runnable and no timer is left, or `maxSteps`. */
  async run(maxSteps: number): Promise<void> {
    while (this.steps < maxSteps) {
      if (this.#runnable.length === 0) {
        const timer = this.#timers.pop();
        if (timer === undefined) return;
        this.now = timer.at;
        this.current = undefined;
        timer.fire();
        continue;
      }
      this.steps++;
      // A crash may strike any live process at any step (it is blocked at an await point right now).
      if (this.crashProbability > 0 && this.random() < this.crashProbability) {
        const mortal = this.#live().filter((proc) => proc.mortal);
        if (mortal.length > 0) {
          const victim = mortal[Math.floor(this.random() * mortal.length)] as Proc;
          this.kill(victim);
          continue;
        }
      }
      const index = Math.floor(this.random() * this.#runnable.length);
      const op = this.#runnable[index] as Op;
      this.#runnable[index] = this.#runnable[this.#runnable.length - 1] as Op;
      this.#runnable.pop();
      if (op.proc?.dead) continue;
      this.current = op.proc;
      if (this.trace !== undefined) this.log(`${op.proc?.name ?? 'service'}: ${op.label}`);
      op.run();
      await drain();
      this.current = undefined;
    }
    this.failure ??= `did not finish within ${maxSteps} steps`;
  }

  kill(proc: Proc): void {
    proc.dead = true;
    this.crashes++;
    this.log(`CRASH ${proc.name}`);
    for (let i = this.#runnable.length - 1; i >= 0; i--) {
      if (this.#runnable[i]?.proc === proc) this.#runnable.splice(i, 1);
    }
    this.onCrash(proc);
  }

  #live(): Proc[] {
    return this.procs.filter((proc) => proc.started && !proc.dead && !proc.done);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The simulated Collections service (a small model, not the project's simulator)

interface Collection {
  readonly id: number;
  readonly referenceId: string;
  /** The `initiate` call whose push created it. */
  readonly call: string;
  readonly committedAt: number;
  readonly settlesAt: number;
  readonly outcome: 'successful' | 'failed';
}

interface ServiceFaults {
  /** Deduplicates by reference (409 for a second push); otherwise a second push creates a second collection. */
  dedupe: boolean;
  /** 503 before processing (nothing committed). */
  failBefore: number;
  /** Committed, then the answer is lost (the client times out). */
  dropAfterCommit: number;
  /** Committed, then answered 503. */
  failAfterCommit: number;
  statusFail: number;
  statusDrop: number;
  maxCommitMs: number;
  /** Some pushes take exactly this long (e.g. 15 s: longer than the 10 s grace). */
  slowCommitMs: number;
  slowCommit: number;
  maxLagMs: number;
  maxLatencyMs: number;
  maxSettleMs: number;
}

type Answer<T> = { ok: true; value: T } | { ok: false; error: Error };

class Service {
  readonly collections: Collection[] = [];
  readonly #byReference = new Map<string, Collection[]>();
  faults: ServiceFaults;
  healthy = false;
  readonly #sim: Scheduler;
  readonly #random: () => number;
  onCreate: (collection: Collection) => void = () => {};

  constructor(sim: Scheduler, random: () => number, faults: ServiceFaults) {
    this.#sim = sim;
    this.#random = random;
    this.faults = faults;
  }

  holding(referenceId: string): Collection[] {
    return this.#byReference.get(referenceId) ?? [];
  }

  #latency(): number {
    return this.healthy ? 0 : this.#random() * this.faults.maxLatencyMs;
  }

  /** A push arrives: `answer` is called when (and if) the answer reaches the client. */
  push(referenceId: string, call: string, answer: (result: Answer<InitiatedCollection>) => void): void {
    const f = this.faults;
    const random = this.#random;
    const sim = this.#sim;
    const arrival = sim.now + this.#latency();
    sim.at(arrival, () => {
      if (!this.healthy && random() < f.failBefore) {
        sim.log(`service: push ${short(referenceId)} → 503 before processing`);
        sim.at(sim.now + this.#latency(), () => answer({ ok: false, error: serverError() }));
        return;
      }
      const commitMs = this.healthy ? 0 : random() < f.slowCommit ? f.slowCommitMs : random() * f.maxCommitMs;
      sim.at(sim.now + commitMs, () => {
        const existing = this.holding(referenceId);
        let result: Answer<InitiatedCollection>;
        if (f.dedupe && existing.length > 0) {
          sim.log(`service: push ${short(referenceId)} → 409 (exists)`);
          result = { ok: false, error: conflict() };
        } else {
          const collection: Collection = {
            id: this.collections.length + 1,
            referenceId,
            call,
            committedAt: sim.now,
            settlesAt: sim.now + 1_000 + random() * f.maxSettleMs,
            outcome: random() < 0.7 ? 'successful' : 'failed',
          };
          this.collections.push(collection);
          this.#byReference.set(referenceId, [...existing, collection]);
          sim.log(`service: COMMIT collection #${collection.id} for ${short(referenceId)} (→ ${collection.outcome})`);
          this.onCreate(collection);
          result = { ok: true, value: { referenceId, status: 'pending' } };
        }
        if (!this.healthy) {
          const draw = random();
          if (draw < f.dropAfterCommit) {
            sim.log(`service: answer to push ${short(referenceId)} dropped`);
            return;
          }
          if (draw < f.dropAfterCommit + f.failAfterCommit) result = { ok: false, error: serverError() };
        }
        const reply = result;
        sim.at(sim.now + this.#latency(), () => answer(reply));
      });
    });
  }

  /** A status read arrives; it may not see a commit (or a settlement) younger than its lag. */
  status(referenceId: string, answer: (result: Answer<CollectionStatus>) => void): void {
    const f = this.faults;
    const random = this.#random;
    const sim = this.#sim;
    sim.at(sim.now + this.#latency(), () => {
      if (!this.healthy) {
        const draw = random();
        if (draw < f.statusDrop) return;
        if (draw < f.statusDrop + f.statusFail) {
          sim.at(sim.now + this.#latency(), () => answer({ ok: false, error: serverError() }));
          return;
        }
      }
      const seenAt = sim.now - (this.healthy ? 0 : random() * f.maxLagMs);
      const visible = this.holding(referenceId).find((collection) => collection.committedAt <= seenAt);
      const result: Answer<CollectionStatus> =
        visible === undefined
          ? { ok: false, error: notFound() }
          : {
              ok: true,
              value:
                visible.settlesAt <= seenAt
                  ? {
                      referenceId,
                      statusText: visible.outcome,
                      transactionCode: visible.outcome === 'successful' ? 'OK' : 'DECLINED',
                      reason: visible.outcome,
                    }
                  : { referenceId, statusText: 'pending' },
            };
      sim.at(sim.now + this.#latency(), () => answer(result));
    });
  }
}

function serverError(): Error {
  return new InternalServerError({
    status: 503,
    code: undefined,
    message: 'HTTP 503',
    requestId: undefined,
    body: undefined,
    service: 'collections',
  });
}
function conflict(): Error {
  return new ConflictError({
    status: 409,
    code: 'E_DUPLICATE',
    message: 'HTTP 409',
    requestId: undefined,
    body: undefined,
    service: 'collections',
  });
}
function notFound(): Error {
  return new NotFoundError({
    status: 404,
    code: undefined,
    message: 'HTTP 404',
    requestId: undefined,
    body: undefined,
    service: 'collections',
  });
}

function short(referenceId: string): string {
  return referenceId.slice(0, 8);
}

// ---------------------------------------------------------------------------------------------------------------
// The client side of one process: a tiny transport whose attempts are steps and whose time is simulated

interface ClientSettings {
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

class SimClient {
  readonly #sim: Scheduler;
  readonly #service: Service;
  readonly proc: Proc;
  readonly settings: ClientSettings;
  readonly #random: () => number;
  /** What `createOnce` needs of a `Transport`: the retry loop (backoff in simulated time) and a logger. */
  readonly transport: Transport;

  constructor(sim: Scheduler, service: Service, proc: Proc, settings: ClientSettings, random: () => number) {
    this.#sim = sim;
    this.#service = service;
    this.proc = proc;
    this.settings = settings;
    this.#random = random;
    this.transport = {
      withRetries: (s: CallSettings, attempt: (n: number) => Promise<unknown>) => this.withRetries(s, attempt),
      logger: OFF_LOGGER,
    } as unknown as Transport;
  }

  get callSettings(): CallSettings {
    return { signal: undefined, timeoutMs: this.settings.timeoutMs, maxRetries: this.settings.maxRetries, headers: undefined };
  }

  /** The retry policy of `src/core/retry.ts` (what is retried), with its backoff slept in simulated time. */
  async withRetries<T>(settings: CallSettings, attempt: (attemptNumber: number) => Promise<T>): Promise<T> {
    for (let attemptNumber = 1; ; attemptNumber++) {
      try {
        return await attempt(attemptNumber);
      } catch (error) {
        if (attemptNumber > settings.maxRetries || !isRetryable(error)) throw error;
        const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attemptNumber - 1));
        await this.#sim.sleep(this.proc, ceiling / 2 + this.#random() * (ceiling / 2), 'backoff');
      }
    }
  }

  /** One request: leaves at a step, answered (or timed out at `deadline`, this process's clock) at a later step. */
  #request<T>(label: string, deadline: number, send: (answer: (result: Answer<T>) => void) => void): Promise<T> {
    const sim = this.#sim;
    const proc = this.proc;
    return sim.step(proc, label, () => {
      const trueDeadline = deadline - proc.offset;
      // An attempt never leaves past its deadline (the transport's waits end there).
      if (sim.now >= trueDeadline) throw new TimeoutError(this.settings.timeoutMs);
      return new Promise<T>((resolve, reject) => {
        let settled = false;
        const finish = (result: Answer<T>, what: string) => {
          if (settled || proc.dead) return;
          settled = true;
          // The answer (or the timeout) is itself a step of this process.
          sim.step(proc, `${label} ← ${what}`, () => {
            if (result.ok) resolve(result.value);
            else reject(result.error);
          });
        };
        send((result) => finish(result, result.ok ? 'ok' : result.error.name));
        sim.at(trueDeadline, () => finish({ ok: false, error: new TimeoutError(this.settings.timeoutMs) }, 'timeout'));
      });
    });
  }

  push(referenceId: string, call: string, deadline: number): Promise<InitiatedCollection> {
    return this.#request(`push ${short(referenceId)} (${call})`, deadline, (answer) => this.#service.push(referenceId, call, answer));
  }

  statusOnce(referenceId: string, deadline = Date.now() + this.settings.timeoutMs): Promise<CollectionStatus> {
    return this.#request(`status ${short(referenceId)}`, deadline, (answer) => this.#service.status(referenceId, answer));
  }

  /** A status check with retries: the status, or `undefined` on 404 (the client's `#findStatus`). */
  async findStatus(referenceId: string): Promise<CollectionStatus | undefined> {
    try {
      return await this.withRetries(this.callSettings, () => this.statusOnce(referenceId));
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
  }

  /** How long an attempt of this client can still reach the service after its journal write (client.ts). */
  get sendWindowMs(): number {
    return (this.settings.maxRetries + 1) * this.settings.timeoutMs + this.settings.maxRetries * BACKOFF_MAX_MS;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The journal each process sees: every call a step; the mutants' broken stores

function stepJournal(sim: Scheduler, proc: Proc, journal: PaymentJournal): PaymentJournal {
  return {
    insert: (record) => sim.step(proc, `journal.insert ${short(record.referenceId)}`, () => journal.insert(record)),
    transition: (referenceId, version, change) =>
      sim.step(proc, `journal.transition ${short(referenceId)} v${version} → ${change.state}`, () =>
        journal.transition(referenceId, version, change),
      ),
    now: () => sim.step(proc, 'journal.now', () => journal.now()),
    get: (referenceId) => sim.step(proc, `journal.get ${short(referenceId)}`, () => journal.get(referenceId)),
    list: (filter) => sim.step(proc, 'journal.list', () => journal.list(filter)),
    history: (referenceId) => sim.step(proc, `journal.history ${short(referenceId)}`, () => journal.history(referenceId)),
    lease: (request) => sim.step(proc, 'journal.lease', () => journal.lease(request)),
    renew: (owner, ids, leaseMs) => sim.step(proc, 'journal.renew', () => journal.renew(owner, ids, leaseMs)),
    release: (owner, ids) => sim.step(proc, 'journal.release', () => journal.release(owner, ids)),
  };
}

/** Every method of the real store, bound to it (its fields are private: a prototype wrapper cannot reach them). */
function delegate(inner: MemoryJournal): PaymentJournal {
  return {
    insert: (record) => inner.insert(record),
    transition: (referenceId, version, change) => inner.transition(referenceId, version, change),
    now: () => inner.now(),
    get: (referenceId) => inner.get(referenceId),
    list: (filter) => inner.list(filter),
    history: (referenceId) => inner.history(referenceId),
    lease: (request) => inner.lease(request),
    renew: (owner, ids, leaseMs) => inner.renew(owner, ids, leaseMs),
    release: (owner, ids) => inner.release(owner, ids),
  };
}

/**
 * The old rules measured a record's age by the journal's clock alone: a mutant of them watches nothing itself (every
 * record counts as watched for ever), so the holes it describes are not covered by the process's own watch.
 */
class JournalClockOnly extends RecordWatch {
  override watched(): number {
    return Number.POSITIVE_INFINITY;
  }
}

/** The process's own watch of open records, as the mutant's rules have it. */
function watchOf(mutant: Mutant | undefined): RecordWatch {
  return mutant === undefined || mutant === 'case-1-new' || mutant === 'beyond-model' ? new RecordWatch() : new JournalClockOnly();
}

/** The store the mutant describes, around the real one. */
function mutantJournal(inner: MemoryJournal, mutant: Mutant | undefined): PaymentJournal {
  if (mutant === 'unconditional') {
    return {
      ...delegate(inner),
      // The old `update`: whatever the writer read, its write lands (final states still never change).
      transition: async (referenceId, _expected, change) => {
        const current = await inner.get(referenceId);
        return inner.transition(referenceId, current?.version ?? 0, change);
      },
    };
  }
  if (mutant === 'reader-clock') {
    // Date.now() is the calling process's clock while it runs.
    return { ...delegate(inner), now: async () => new Date(Date.now()).toISOString() };
  }
  if (mutant === 'no-window' || mutant === 'case-1') {
    // The old rule read a missing window as 0 (a record without one is now judged by the longest possible).
    const strip = (record: PaymentRecord | undefined): PaymentRecord | undefined => {
      if (record === undefined) return record;
      return withDecidableAt({ ...record, sendWindowMs: 0 });
    };
    return {
      insert: async (record) => strip(await inner.insert(record)),
      transition: async (referenceId, version, change) => {
        const { sendWindowMs: _window, ...rest } = change;
        const result = await inner.transition(referenceId, version, rest);
        return { ...result, record: strip(result.record) } as Awaited<ReturnType<PaymentJournal['transition']>>;
      },
      now: () => inner.now(),
      get: async (referenceId) => strip(await inner.get(referenceId)),
      list: async (filter) => (await inner.list(filter)).map((record) => strip(record) as PaymentRecord),
      history: (referenceId) => inner.history(referenceId),
      lease: async (request) => (await inner.lease(request)).map((record) => strip(record) as PaymentRecord),
      renew: (owner, ids, leaseMs) => inner.renew(owner, ids, leaseMs),
      release: (owner, ids) => inner.release(owner, ids),
    };
  }
  return inner;
}

// ---------------------------------------------------------------------------------------------------------------
// Deterministic Web Crypto: the fingerprint's HMAC, computed at once (the real one resolves on a thread pool,
// which would let a process run on while the scheduler thinks it blocked).

const syncSubtle = {
  importKey: (_format: string, key: Uint8Array) => Promise.resolve({ key: Buffer.from(key) }),
  sign: (_algorithm: unknown, key: { key: Buffer }, data: Uint8Array) =>
    Promise.resolve(new Uint8Array(createHmac('sha256', key.key).update(data).digest()).buffer),
};

// ---------------------------------------------------------------------------------------------------------------
// One run

interface Sale {
  readonly id: number;
  /** Every reference this sale was pushed under, oldest first (a new one only after `not-sent`/`rejected`). */
  readonly references: string[];
  readonly amount: number;
}

function uuid(random: () => number): string {
  const hex = (n: number) =>
    Array.from({ length: n }, () =>
      Math.floor(random() * 16)
        .toString(16)
        .toLowerCase(),
    ).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Runs one seed and checks the invariants. */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const { seed, mutant } = options;
  const random = seededRandom(seed);
  const sim = new Scheduler(seededRandom(seed ^ 0x5eed), options.trace === true);
  const serviceRandom = seededRandom(seed ^ 0x5e41ce);
  const case1 = mutant === 'case-1' || mutant === 'case-1-new';

  // Swarm testing: this seed's own world.
  const tillSettings: ClientSettings[] = [];
  const tills = case1 ? 1 : 1 + Math.floor(random() * 3);
  for (let i = 0; i < tills; i++) {
    tillSettings.push(
      case1
        ? { timeoutMs: 30_000, maxRetries: 2 }
        : { timeoutMs: pick(random, [30_000, 30_000, 20_000]), maxRetries: pick(random, [0, 1, 2, 2]) },
    );
  }
  const minTimeoutMs = Math.min(...tillSettings.map((s) => s.timeoutMs));
  const maxLagMs = random() < 0.5 ? 0 : random() * 3_000;
  const maxLatencyMs = random() * 1_000;
  // The model's physical bound: a push commits, and reads catch up, within the pushing client's per-attempt time
  // limit (longer than the 10 s grace); `beyond-model` lifts it.
  const commitRoom = minTimeoutMs - maxLagMs - 2 * maxLatencyMs;
  const faults: ServiceFaults = case1
    ? {
        dedupe: false,
        failBefore: 0,
        dropAfterCommit: 0,
        failAfterCommit: 0,
        statusFail: 0,
        statusDrop: 0,
        maxCommitMs: 15_000,
        slowCommitMs: 15_000,
        slowCommit: 1,
        maxLagMs: 0,
        maxLatencyMs: 0,
        maxSettleMs: 60_000,
      }
    : {
        dedupe: random() < 0.5,
        failBefore: random() * 0.2,
        dropAfterCommit: random() * 0.3,
        failAfterCommit: random() * 0.2,
        statusFail: random() * 0.2,
        statusDrop: random() * 0.2,
        maxCommitMs: mutant === 'beyond-model' ? 5 * MINUTE : random() * commitRoom,
        slowCommitMs: Math.min(15_000, commitRoom),
        slowCommit: random() * 0.5,
        maxLagMs,
        maxLatencyMs,
        maxSettleMs: random() * 5 * MINUTE,
      };
  const service = new Service(sim, serviceRandom, faults);
  sim.crashProbability = case1 ? 0 : random() < 0.2 ? 0 : random() * 0.03;
  const clockSpreadMs = 5 * MINUTE;
  const offset = () => Math.round((random() * 2 - 1) * clockSpreadMs);

  const store = new MemoryJournal({ now: () => sim.now });
  const journal = mutantJournal(store, mutant);
  const violations: string[] = [];

  // The tills' own memory of their sales (the sale → reference map a till keeps in its database).
  const sales: Sale[] = [];
  const saleOf = new Map<string, Sale>();
  const newReference = (sale: Sale) => {
    const reference = uuid(random);
    sale.references.push(reference);
    saleOf.set(reference, sale);
    sim.log(`sale ${sale.id} → reference ${short(reference)}`);
    return reference;
  };

  // Safety, checked as it happens: at most one collection per sale, whatever its references.
  service.onCreate = (collection) => {
    const sale = saleOf.get(collection.referenceId);
    if (sale === undefined) return;
    const held = sale.references.flatMap((reference) => service.holding(reference));
    if (held.length > 1) {
      const oneCall = held.every((c) => c.call === collection.call);
      violations.push(
        `DOUBLE${oneCall ? ' (one call)' : ''}: sale ${sale.id} has ${held.length} collections (${held.map((c) => `#${c.id} ${short(c.referenceId)}`).join(', ')}) at step ${sim.steps}`,
      );
    }
  };

  const binding = (proc: Proc) => new JournalBinding(stepJournal(sim, proc, journal), OFF_LOGGER, STATUS_WORDS, watchOf(mutant));
  const grace = () => (case1 ? undefined : pick(random, [undefined, undefined, 0, 30_000]));

  const payment = (sale: Sale, referenceId: string) => ({
    referenceId,
    productId: '6f1f1d3e-0000-4000-a000-000000000001',
    amount: sale.amount,
    currency: 'ZMW',
    phoneNumber: '260977123456',
    narration: `sale ${sale.id}`,
  });

  /** `initiate` with a journal, as the client wires it (client.ts): the real createOnce over this process's transport. */
  let calls = 0;
  const initiate = (client: SimClient, b: JournalBinding, sale: Sale, referenceId: string) => {
    const call = `${client.proc.name}#${++calls}`;
    return initiateWithJournal(b, {
      payment: payment(sale, referenceId),
      sendWindowMs: client.sendWindowMs,
      attemptTimeoutMs: client.settings.timeoutMs,
      signal: undefined,
      check: () => client.findStatus(referenceId),
      send: (beforeAttempt) =>
        createOnce<InitiatedCollection>(client.transport, client.callSettings, {
          referenceId,
          lookupBeforeResend: true,
          duplicateMeansExists: mutant !== '409-rejected',
          send: async () => {
            const deadline = await beforeAttempt();
            return client.push(referenceId, call, Math.min(deadline, Date.now() + client.settings.timeoutMs));
          },
          lookup: async () => {
            try {
              const status = await client.statusOnce(referenceId);
              return { kind: 'found', result: { referenceId, status: status.statusText } };
            } catch (error) {
              if (error instanceof NotFoundError) return { kind: 'absent' };
              throw error;
            }
          },
          isDuplicate: (error) => error instanceof ConflictError,
        }),
    });
  };

  /**
   * A till's work on one sale: initiate; on an unknown outcome try again later with the same payment; start the
   * sale over under a new reference only when the journal says `not-sent` or `rejected` (what the docs tell a till).
   */
  const sell = async (proc: Proc, client: SimClient, b: JournalBinding, sale: Sale, tries: number) => {
    for (let attempt = 0; attempt < tries; attempt++) {
      const reference = sale.references[sale.references.length - 1] ?? newReference(sale);
      let failed = false;
      let decidableAt: string | undefined;
      try {
        await initiate(client, b, sale, reference);
        sim.log(`${proc.name}: sale ${sale.id} ${short(reference)} accepted`);
      } catch (error) {
        failed = true;
        if (error instanceof UnknownOutcomeError) {
          decidableAt = error.decidableAt;
          // Sometimes a back-office job runs recover() right when the verdict becomes possible (a race to decide).
          if (decidableAt !== undefined && !case1 && random() < 0.3) {
            const at = Date.parse(decidableAt) + random() * 1_500;
            sim.spawn(`recover@${short(reference)}`, 0, at, async (p) => {
              const client = new SimClient(sim, service, p, { timeoutMs: 10_000, maxRetries: 0 }, random);
              await recoverOnce(client, binding(p), undefined);
            });
          }
        }
        sim.log(`${proc.name}: sale ${sale.id} ${short(reference)} initiate → ${error instanceof Error ? error.name : String(error)}`);
        if (!(error instanceof Error) || error.name === 'TypeError' || error.name === 'ReferenceError') throw error;
      }
      const record = await b.journal.get(reference);
      if (record !== undefined && (record.state === 'not-sent' || record.state === 'rejected')) {
        // Only the process that sees the latest reference closed starts the sale over (the till's database).
        if (sale.references[sale.references.length - 1] === reference) newReference(sale);
        continue;
      }
      if (!failed) {
        // The till polls a few times, recording what it sees (checkStatus / pollUntilSettled with a journal).
        for (let poll = 0; poll < 3; poll++) {
          await sim.sleep(proc, 5_000 + random() * 60_000, 'poll pause');
          await checkOnce(client, b, reference, 'poll');
        }
        return;
      }
      // What the docs tell a till: "checking, up to <decidableAt>", then try again (read by this till's own clock).
      const untilDecidable = decidableAt === undefined ? undefined : Date.parse(decidableAt) - Date.now();
      const pause =
        untilDecidable !== undefined && random() < 0.6 ? Math.max(0, untilDecidable) + random() * 1_500 : 5_000 + random() * 90_000;
      await sim.sleep(proc, pause, 'till waits');
    }
  };

  /** A status check with a journal: records a status, or a provable `not-sent` after a 404. */
  const checkOnce = async (client: SimClient, b: JournalBinding, reference: string, by: string) => {
    let status: CollectionStatus | undefined;
    try {
      status = await client.findStatus(reference);
    } catch {
      return;
    }
    if (status !== undefined) {
      await b.recordStatus(reference, status, by);
      return;
    }
    await b
      .settleNotFound(
        reference,
        NOT_FOUND_GRACE_MS,
        async () => {
          const again = await client.findStatus(reference);
          return again === undefined ? 'not-found' : STATUS_WORDS.observation(again);
        },
        by,
      )
      .catch(() => undefined);
  };

  const recoverOnce = async (client: SimClient, b: JournalBinding, notFoundGraceMs: number | undefined) => {
    try {
      await recoverPayments(b, (reference) => client.findStatus(reference), notFoundGraceMs === undefined ? {} : { notFoundGraceMs });
    } catch (error) {
      if (!(error instanceof Error) || error.name === 'TypeError') throw error;
    }
  };

  // Tills, each with its sales; a killed till may restart (same machine, same clock), recover, and carry on.
  const restarts = new Map<number, number>();
  const tillOf = new Map<Proc, { index: number; sales: Sale[]; offset: number }>();
  const startTill = (index: number, tillSales: Sale[], clockOffset: number, at: number, restarted: boolean) => {
    const settings = tillSettings[index] as ClientSettings;
    const proc = sim.spawn(`till${index}${restarted ? `.r${restarts.get(index)}` : ''}`, clockOffset, at, async (p) => {
      const client = new SimClient(sim, service, p, settings, random);
      const b = binding(p);
      if (restarted) await recoverOnce(client, b, grace());
      for (const sale of tillSales) await sell(p, client, b, sale, 4);
    });
    tillOf.set(proc, { index, sales: tillSales, offset: clockOffset });
    if (case1 && !restarted) {
      // The issue's case 1: killed 1 s into the push.
      sim.at(T0 + 1_000, () => sim.kill(proc));
    }
  };
  sim.onCrash = (proc) => {
    const till = tillOf.get(proc);
    if (till === undefined) return;
    const count = (restarts.get(till.index) ?? 0) + 1;
    if (count > 3 || (!case1 && random() < 0.15)) return;
    restarts.set(till.index, count);
    // Restarted at once, or later: case 1 restarts 10 s later, so recover() runs while the push still commits.
    startTill(till.index, till.sales, till.offset, sim.now + (case1 ? 10_000 : random() * 3 * MINUTE), true);
  };

  for (let i = 0; i < tills; i++) {
    const tillSales: Sale[] = [];
    const count = case1 ? 1 : 1 + Math.floor(random() * 2);
    for (let s = 0; s < count; s++) {
      const sale: Sale = { id: sales.length + 1, references: [], amount: 10 + sales.length };
      sales.push(sale);
      tillSales.push(sale);
    }
    startTill(i, tillSales, offset(), T0 + (case1 ? 0 : random() * MINUTE), false);
    // Sometimes a second client handles the same sales (another terminal, a retry job): case 2.
    if (!case1 && random() < 0.3) {
      // Another process of the same machine (same clock) or another machine.
      const twinOffset = random() < 0.5 ? (tillOf.get(sim.procs[sim.procs.length - 1] as Proc)?.offset ?? 0) : offset();
      const twin = sim.spawn(`twin${i}`, twinOffset, T0 + random() * 40_000, async (p) => {
        const client = new SimClient(sim, service, p, tillSettings[i] as ClientSettings, random);
        const b = binding(p);
        for (const sale of tillSales) await sell(p, client, b, sale, 3);
      });
      tillOf.set(twin, { index: i, sales: tillSales, offset: twin.offset });
    }
  }

  if (!case1) {
    // Settlement workers: lease, check, and move each record by the worker's rules (advance / settleNotFound).
    const workers = Math.floor(random() * 3);
    for (let w = 0; w < workers; w++) {
      const workerGrace = grace() ?? NOT_FOUND_GRACE_MS;
      sim.spawn(`worker${w}`, offset(), T0 + random() * MINUTE, async (p) => {
        const client = new SimClient(sim, service, p, { timeoutMs: 10_000, maxRetries: 0 }, random);
        const j = stepJournal(sim, p, journal);
        // This process's own watch of the records it leases (the second measure of their age).
        const watch = watchOf(mutant);
        const by = `worker:${w}`;
        for (let round = 0; round < 12; round++) {
          const leased = await j.lease({ owner: by, leaseMs: 60_000, limit: 8 });
          for (const record of leased) {
            try {
              const status = await client.statusOnce(record.referenceId);
              await advance(j, record.referenceId, STATUS_WORDS.observation(status), by);
            } catch (error) {
              if (error instanceof NotFoundError && (record.state === 'initiating' || record.state === 'unknown')) {
                await settleNotFound(
                  j,
                  watch,
                  record.referenceId,
                  workerGrace,
                  async () => {
                    try {
                      return STATUS_WORDS.observation(await client.statusOnce(record.referenceId));
                    } catch (again) {
                      if (again instanceof NotFoundError) return 'not-found';
                      throw again;
                    }
                  },
                  by,
                ).catch(() => undefined);
              }
            }
          }
          await j.release(
            by,
            leased.map((record) => record.referenceId),
          );
          await sim.sleep(p, 2_000 + random() * 30_000, 'worker pause');
        }
      });
    }
    // Checkers: status checks and polls of references the tills made (checkStatus / pollUntilSettled with a journal).
    const checkers = Math.floor(random() * 3);
    for (let c = 0; c < checkers; c++) {
      sim.spawn(`checker${c}`, offset(), T0 + random() * MINUTE, async (p) => {
        const client = new SimClient(sim, service, p, { timeoutMs: 10_000, maxRetries: 1 }, random);
        const b = binding(p);
        for (let round = 0; round < 10; round++) {
          await sim.sleep(p, 1_000 + random() * 40_000, 'checker pause');
          const known = [...saleOf.keys()];
          if (known.length > 0) await checkOnce(client, b, pick(random, known), 'checkStatus');
        }
      });
    }
    // recover() from other processes (a back-office job, another till starting up).
    const recovers = Math.floor(random() * 3);
    for (let r = 0; r < recovers; r++) {
      const recoverGrace = grace();
      sim.spawn(`recover${r}`, offset(), T0 + random() * 3 * MINUTE, async (p) => {
        const client = new SimClient(sim, service, p, { timeoutMs: 10_000, maxRetries: pick(random, [0, 2]) }, random);
        await recoverOnce(client, binding(p), recoverGrace);
      });
    }
  }

  const previousNow = Date.now;
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'crypto');
  Date.now = () => sim.now + (sim.current?.offset ?? 0);
  // The monotonic clock: simulated true time, no offset (no wall-clock step moves it).
  const previousPerformanceNow = Object.getOwnPropertyDescriptor(performance, 'now');
  Object.defineProperty(performance, 'now', { value: () => sim.now - T0, configurable: true, writable: true });
  Object.defineProperty(globalThis, 'crypto', {
    value: { subtle: syncSubtle, getRandomValues: (a: Uint8Array) => a },
    configurable: true,
    writable: true,
  });
  try {
    await sim.run(200_000);
    // The end: every process finished (or died). The service heals, time passes every window and settlement,
    // and one last recover() runs (default options) — then the journal must agree with the service.
    service.healthy = true;
    sim.crashProbability = 0;
    sim.log('--- the service heals; a final recover() runs past every window');
    const finalAt = sim.now + 20 * MINUTE;
    sim.spawn(
      'final-recover',
      0,
      finalAt,
      async (p) => {
        const client = new SimClient(sim, service, p, { timeoutMs: 30_000, maxRetries: 2 }, random);
        const b = binding(p);
        await recoverOnce(client, b, undefined);
        // A process that starts must itself watch an open record for its window and grace before a verdict: the
        // restart flow recovers again once that has passed.
        await sim.sleep(p, 20 * MINUTE, 'final recover waits out its own watch');
        await recoverOnce(client, b, undefined);
      },
      false,
    );
    await sim.run(sim.steps + 200_000);
    if (sim.failure !== undefined) violations.push(`PROCESS: ${sim.failure}`);

    const doubled = (referenceId: string) => {
      const held = service.holding(referenceId);
      return held.length > 1 && held.every((c) => c.call === held[0]?.call) ? ` ${AFTER_ONE_CALL_DOUBLE}` : '';
    };
    // Once all have finished: every collection has a record in agreement with it.
    for (const collection of service.collections) {
      const record = await store.get(collection.referenceId);
      if (record === undefined)
        violations.push(`LOST: collection #${collection.id} (${short(collection.referenceId)}) has no journal record`);
      else if (record.state !== collection.outcome)
        violations.push(
          `LOST: collection #${collection.id} (${short(collection.referenceId)}) is ${collection.outcome}; the journal says ${record.state}${doubled(collection.referenceId)}`,
        );
    }
    // No final state contradicts the service; nothing left open after the final recover.
    for (const record of await store.list()) {
      const held = service.holding(record.referenceId);
      if ((record.state === 'not-sent' || record.state === 'rejected') && held.length > 0) {
        violations.push(`CONTRADICTION: ${short(record.referenceId)} is ${record.state} but the service holds collection #${held[0]?.id}`);
      }
      if ((record.state === 'successful' || record.state === 'failed') && held[0]?.outcome !== record.state) {
        violations.push(
          `CONTRADICTION: ${short(record.referenceId)} is ${record.state}; the service says ${held[0]?.outcome ?? 'nothing'}${doubled(record.referenceId)}`,
        );
      }
      if (record.state === 'initiating' || record.state === 'pending' || record.state === 'unknown') {
        violations.push(`OPEN: ${short(record.referenceId)} still ${record.state} after the final recover()`);
      }
    }
  } finally {
    Date.now = previousNow;
    if (previousPerformanceNow === undefined) delete (performance as { now?: unknown }).now;
    else Object.defineProperty(performance, 'now', previousPerformanceNow);
    if (descriptor !== undefined) Object.defineProperty(globalThis, 'crypto', descriptor);
  }
  return {
    seed,
    steps: sim.steps,
    violations,
    trace: sim.trace ?? [],
    stats: {
      collections: service.collections.length,
      sales: sales.length,
      crashes: sim.crashes,
      processes: sim.procs.length,
      simulatedMs: sim.now - T0,
    },
  };
}

/** Marks the consequences of a double made by one `initiate` call (the class of bug seed 296 found), so a trace reads at once. */
const AFTER_ONE_CALL_DOUBLE = '(after a double of one call)';

/** The command that replays `seed` (with its trace). */
export function replayCommand(seed: number, mutant?: Mutant): string {
  return `SIM_SEED=${seed}${mutant === undefined ? '' : ` SIM_MUTANT=${mutant}`} npx vitest run test/simulation`;
}
