/**
 * The simulation's scheduler: processes, their runnable operations, and simulated time.
 *
 * Everything that happens in a run is an operation: a process's start, a virtual timer firing, a journal call
 * answering, a response reaching a client. Due operations wait in the runnable set; at each step the scheduler
 * picks one (seeded), runs it with its process as the current one (the clock `Date.now()` reads), and waits until
 * every microtask it caused has run (one real `setImmediate`: the process is blocked again). Several processes are
 * runnable at once whenever their operations fall due together; the scheduler may also let time move on while
 * operations are runnable (the process is busy with local work, or paused), so an answer can overtake a step that
 * was due earlier.
 *
 * No vitest import: the runner, the benchmark and the worker threads load this under Node's type stripping.
 */

import { DueQueue } from '../../src/core/due-queue.js';

/** Captured before any run replaces the global (virtual-time.ts traps everyone else's). */
const realSetImmediate = globalThis.setImmediate;

export const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);

/** A simulated process: a till, a worker, a back-office job. Its clock may be offset, drift, and jump. */
export interface Proc {
  readonly id: number;
  readonly name: string;
  /** Its clock's offset from true time (ms); changed by clock jumps. */
  offset: number;
  /** Its clock's rate error (e.g. 1e-4: 0.1 ms fast per second). */
  readonly drift: number;
  started: boolean;
  dead: boolean;
  done: boolean;
  /** Paused (a stop-the-world pause, a suspended VM) until this true time. */
  pausedUntil: number;
  /** May the scheduler kill it. */
  readonly mortal: boolean;
}

interface Op {
  readonly proc: Proc | undefined;
  readonly label: string;
  readonly run: () => void;
  /** True time it became runnable: it runs late when its process was paused or busy meanwhile. */
  readonly since: number;
}

/** An operation that waited at least this long to run marks its process as not running meanwhile (`ranLate`). */
const LATE_MS = 1_000;

/** A virtual timer: at true time `at`, `fire` becomes a runnable operation of `proc`. */
export interface Timer {
  /** True time it fires at. */
  readonly dueAt: number;
  readonly seq: number;
  readonly proc: Proc | undefined;
  readonly label: string;
  readonly fire: () => void;
  cancelled: boolean;
}

/** Waits until every microtask queued so far (and those they queue) has run: the resumed process is blocked again. */
function drain(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

export interface SchedulerKnobs {
  /** Chance per step that time moves to the next timer although operations are runnable (they are delayed). */
  advanceWhileRunnable: number;
  /** Chance per step that a live mortal process is killed. */
  crash: number;
  /** Chance per step that a live process is paused (for up to `maxPauseMs`). */
  pause: number;
  maxPauseMs: number;
}

export class Scheduler {
  now = T0;
  steps = 0;
  /** Steps at which two or more processes had an operation runnable (true interleaving). */
  contendedSteps = 0;
  readonly random: () => number;
  readonly trace: string[] | undefined;
  readonly #runnable: Op[] = [];
  readonly #timers = new DueQueue<Timer>();
  #seq = 0;
  readonly procs: Proc[] = [];
  /** The process whose code runs now: `Date.now()` reads its clock. */
  current: Proc | undefined;
  /** True while an operation (and the microtasks it caused) runs. */
  inStep = false;
  knobs: SchedulerKnobs = { advanceWhileRunnable: 0, crash: 0, pause: 0, maxPauseMs: 0 };
  crashes = 0;
  onCrash: (proc: Proc) => void = () => {};
  failure: string | undefined;
  /** Per process, each wait of an operation of at least `LATE_MS` (paused, or busy with other work): true times. */
  readonly #lateRuns = new Map<Proc, { from: number; to: number }[]>();

  constructor(random: () => number, trace: boolean) {
    this.random = random;
    this.trace = trace ? [] : undefined;
  }

  log(message: string): void {
    this.trace?.push(`#${this.steps} t+${((this.now - T0) / 1000).toFixed(3)}s ${message}`);
  }

  /** The clock of `proc` (true time for the system). */
  clockOf(proc: Proc | undefined): number {
    if (proc === undefined) return this.now;
    return Math.round(this.now + proc.offset + proc.drift * (this.now - T0));
  }

  /** Runs `fire` as an operation of `proc` once true time reaches `at` (never, if `proc` dies first). */
  at(at: number, proc: Proc | undefined, label: string, fire: () => void): Timer {
    const timer: Timer = { dueAt: Math.max(at, this.now), seq: this.#seq++, proc, label, fire, cancelled: false };
    this.#timers.push(timer);
    return timer;
  }

  /** True when `proc` has operations runnable now besides the one running (it is busy: a due timer may wait behind). */
  busy(proc: Proc): boolean {
    return this.#runnable.some((op) => op.proc === proc);
  }

  /** An operation of `proc`, runnable now. */
  enqueue(proc: Proc | undefined, label: string, run: () => void): void {
    if (proc?.dead) return;
    this.#runnable.push({ proc, label, run, since: this.now });
  }

  /**
   * True when an operation of `proc` waited `LATE_MS` or more to run at some moment between `from` and `to` (true
   * time): the process was paused, or its event loop stalled, so a timer of its (a renewal) may have run late. A wait
   * still going on counts too (a paused worker's renewal timer that has not run yet when its lease runs out), and so
   * does a pause of `LATE_MS` or more from its start.
   */
  ranLate(proc: Proc, from: number, to: number): boolean {
    if ((this.#lateRuns.get(proc) ?? []).some((wait) => wait.to >= from && wait.from <= to)) return true;
    return this.#runnable.some((op) => op.proc === proc && op.since <= to && to - op.since >= LATE_MS);
  }

  /** Holds every operation of `proc` back until `until` (true time): late from now, when that is `LATE_MS` or more. */
  pause(proc: Proc, until: number, why = ''): void {
    proc.pausedUntil = until;
    if (until - this.now >= LATE_MS) this.#lateRun(proc, this.now, until);
    this.log(`PAUSE ${proc.name}${why} until t+${((until - T0) / 1000).toFixed(3)}s`);
  }

  spawn(
    name: string,
    at: number,
    body: (proc: Proc) => Promise<void>,
    options: { offset?: number; drift?: number; mortal?: boolean } = {},
  ): Proc {
    const proc: Proc = {
      id: this.procs.length,
      name,
      offset: options.offset ?? 0,
      drift: options.drift ?? 0,
      started: false,
      dead: false,
      done: false,
      pausedUntil: 0,
      mortal: options.mortal ?? true,
    };
    this.procs.push(proc);
    this.at(at, proc, 'start', () => {
      proc.started = true;
      body(proc).then(
        () => {
          proc.done = true;
          this.log(`${proc.name} finished`);
        },
        (error: unknown) => {
          proc.done = true;
          const stack = error instanceof Error ? (error.stack ?? '').split('\n').slice(0, 6).join(' | ') : String(error);
          this.failure ??= `${proc.name} threw ${stack}`;
          this.log(`${proc.name} THREW ${String(error)}`);
        },
      );
    });
    return proc;
  }

  /** Runs until true time passes `until`, nothing is left to run, `stop()`, or `maxSteps`; false when the step budget ran out. */
  async run(until: number, maxSteps: number, stop: () => boolean = () => false): Promise<boolean> {
    const knobs = this.knobs;
    while (this.steps < maxSteps) {
      if (this.steps % 32 === 0 && stop()) return true;
      const next = this.#timers.peek();
      const eligible = this.#eligible();
      const mayAdvance = next !== undefined && next.dueAt <= until;
      // Only processes are busy: the service's and the world's own operations are never delayed.
      const delayable = mayAdvance && knobs.advanceWhileRunnable > 0 && !eligible.some((i) => this.#runnable[i]?.proc === undefined);
      if (eligible.length === 0 || (delayable && this.random() < knobs.advanceWhileRunnable)) {
        if (!mayAdvance) {
          // Only paused processes have work: time moves to the first one's wake-up.
          const wake = this.#firstWake();
          if (wake === undefined || wake > until) return true;
          this.now = Math.max(this.now, wake);
          continue;
        }
        const timer = this.#timers.pop() as Timer;
        if (timer.cancelled || timer.proc?.dead) continue;
        this.now = Math.max(this.now, timer.dueAt);
        this.enqueue(timer.proc, timer.label, () => {
          if (!timer.cancelled) timer.fire();
        });
        continue;
      }
      this.steps++;
      if (knobs.crash > 0 && this.random() < knobs.crash) {
        const mortal = this.#live().filter((proc) => proc.mortal);
        if (mortal.length > 0) {
          this.kill(mortal[Math.floor(this.random() * mortal.length)] as Proc);
          continue;
        }
      }
      if (knobs.pause > 0 && this.random() < knobs.pause) {
        const live = this.#live();
        if (live.length > 0) {
          const victim = live[Math.floor(this.random() * live.length)] as Proc;
          this.pause(victim, this.now + this.random() * knobs.maxPauseMs);
          continue;
        }
      }
      if (new Set(eligible.map((index) => this.#runnable[index]?.proc)).size > 1) this.contendedSteps++;
      const index = eligible[Math.floor(this.random() * eligible.length)] as number;
      const op = this.#runnable[index] as Op;
      this.#runnable[index] = this.#runnable[this.#runnable.length - 1] as Op;
      this.#runnable.pop();
      if (op.proc?.dead) continue;
      if (op.proc !== undefined && this.now - op.since >= LATE_MS) this.#lateRun(op.proc, op.since, this.now);
      this.current = op.proc;
      if (this.trace !== undefined) this.log(`${op.proc?.name ?? 'service'}: ${op.label}`);
      this.inStep = true;
      op.run();
      await drain();
      this.inStep = false;
      this.current = undefined;
    }
    return false;
  }

  #lateRun(proc: Proc, from: number, to: number): void {
    const waits = this.#lateRuns.get(proc) ?? [];
    waits.push({ from, to });
    this.#lateRuns.set(proc, waits);
  }

  /** Indexes of runnable operations whose process is not paused. */
  #eligible(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.#runnable.length; i++) {
      const proc = this.#runnable[i]?.proc;
      if (proc === undefined || proc.pausedUntil <= this.now) out.push(i);
    }
    return out;
  }

  #firstWake(): number | undefined {
    let first: number | undefined;
    for (const op of this.#runnable) {
      const at = op.proc?.pausedUntil;
      if (at !== undefined && at > this.now && (first === undefined || at < first)) first = at;
    }
    return first;
  }

  kill(proc: Proc): void {
    if (proc.dead) return;
    proc.dead = true;
    this.crashes++;
    this.log(`CRASH ${proc.name}`);
    for (let i = this.#runnable.length - 1; i >= 0; i--) {
      if (this.#runnable[i]?.proc === proc) this.#runnable.splice(i, 1);
    }
    this.onCrash(proc);
  }

  /** Processes started and neither dead nor finished. */
  live(): Proc[] {
    return this.#live();
  }

  #live(): Proc[] {
    return this.procs.filter((proc) => proc.started && !proc.dead && !proc.done);
  }
}
