/**
 * A seed's world, drawn in one place before anything runs (STYLE.md, the VOPR section): `drawWorld(seed)` returns a
 * plain plan (the service's and the journal's fault probabilities, the key's budget, the scheduler's knobs, the
 * directed processes' rates, every till, worker, checker and `recover()` job with its clock, the clock jumps), and
 * sim.ts wires and runs it. A directed test gives a plan of its own (`runSimulation({ plan })`), which keeps its
 * meaning when the draws change; a seed keeps its meaning only as long as the draws below do.
 *
 * Each group of draws has its own stream, so that a world without that group keeps every other draw. The streams'
 * continuations (`streams`) are what the run draws from while it runs (a till's previous release, a decider's time, a
 * crash's restart): those draws are the run's, not the plan's.
 *
 * No vitest import (see scheduler.ts).
 */
import { MIN_BUDGET_LEASE_MS } from '../../src/collections/shared-budget.js';
import { seededRandom } from '../helpers/seeded-random.js';
import type { ClockFault } from './clock-faults.js';
import type { JournalFaults } from './journal.js';
import { DEFAULT_GRACE_MS } from './oracle.js';
import { type ClientSettings, type DrawnWorkerOptions, drawWorkerOptions } from './processes.js';
import { T0 } from './scheduler.js';
import { HEALTHY, type ServiceFaults } from './service.js';

const MINUTE = 60_000;
/** How long the faults last (simulated). */
export const FAULT_PHASE_MS = 30 * MINUTE;

/** What may be taken out of a seed's world while shrinking a failure (each keeps the rest of the seed's draws). */
export interface Reductions {
  readonly maxTills?: number;
  readonly noTwins?: boolean;
  readonly noCheckers?: boolean;
  readonly noRecovers?: boolean;
  readonly noCrashes?: boolean;
  readonly noPauses?: boolean;
  readonly noClockJumps?: boolean;
  readonly noJournalFaults?: boolean;
  readonly noBudget?: boolean;
  readonly noReversals?: boolean;
  readonly noElsewhere?: boolean;
}

/** A process's clock: its offset from true time and its drift. */
export interface ClockPlan {
  readonly offset: number;
  readonly drift: number;
}

/** A process the plan starts: when, and on which clock. */
export interface ProcessPlan {
  readonly name: string;
  readonly at: number;
  readonly clock: ClockPlan;
}

/** A settlement worker: its drawn options too. */
export interface WorkerPlan extends ProcessPlan {
  readonly options: DrawnWorkerOptions;
}

/** A till (or its twin, selling the same sales): its sales, its client's settings. */
export interface TillPlan extends ProcessPlan {
  readonly sales: readonly { readonly id: number; readonly amount: number }[];
  readonly settings: ClientSettings;
}

/**
 * A process configured for a second deployment of the service (a copied `.env`: another base URL, the same journal):
 * a settlement worker or a `recover()` job. That deployment answers like the service, with statuses of its own.
 */
export interface ElsewherePlan extends ProcessPlan {
  readonly kind: 'worker' | 'recover';
}

/** A clock jump while faults last: of the journal's clock, or of a live process's (picked when it comes). */
export interface JumpPlan {
  readonly at: number;
  readonly size: number;
  readonly onJournal: boolean;
}

/** The key's shared budget. */
export interface BudgetPlan {
  readonly limit: number;
  readonly leases: readonly (number | undefined)[];
  readonly adaptive: boolean;
}

/** Rates of the directed processes (0: none in this world). */
export interface DirectedPlan {
  /** Per sending write: a watcher that decides around its window's end. */
  readonly watchers: number;
  /** Per sending write: an edge watcher (sim.ts), and the chance its writer dies as its write lands. */
  readonly edgeWatchers: number;
  readonly orphans: number;
  /** Per edge watcher: a stalled decider. */
  readonly stalledDeciders: number;
  /** Per settled collection: a reversal by the service. */
  readonly reversal: number;
  /** Per sending write: a clock watcher (clock-faults.ts). */
  readonly clockWatchers: number;
  /** The clock watchers' fault, when a directed test names one. @defaultValue drawn per watcher */
  readonly clockFault?: ClockFault;
}

/** The run's streams of draws, continued while it runs. */
export interface Streams {
  readonly random: () => number;
  readonly budget: () => number;
  readonly directed: () => number;
  readonly stalling: () => number;
  readonly verifying: () => number;
  readonly reversing: () => number;
  readonly clocking: () => number;
  readonly scheduler: () => number;
  readonly time: () => number;
  readonly service: () => number;
  readonly journal: () => number;
  /** The second deployment's own answers (its latency, the collections it holds). */
  readonly elsewhere: () => number;
}

/** Everything a run is, before it runs. */
export interface WorldPlan {
  readonly seed: number;
  readonly faults: ServiceFaults;
  readonly journalFaults: JournalFaults;
  readonly budget: BudgetPlan | undefined;
  /** The chance a worker, checker or `recover()` job has a wrong base URL; that a till writes as the previous release. */
  readonly misconfigured: number;
  readonly previousRelease: number;
  readonly knobs: { advanceWhileRunnable: number; crash: number; pause: number; maxPauseMs: number };
  readonly directed: DirectedPlan;
  /** The graces the world's readers give a 404 (`undefined`: the default). */
  readonly graces: readonly (number | undefined)[];
  /**
   * Every client says the service refuses duplicate references (`duplicateReferences: 'refused'`): drawn in two
   * thirds of the worlds whose service does (a third of all worlds), so resends decide at once. A directed test may
   * set it for a service that stores duplicates (`faults.dedupe` false): the claim is then false, and the world fails.
   */
  readonly duplicatesRefused: boolean;
  /** Processes configured for a second deployment (their own stream of draws: other worlds keep theirs). */
  readonly elsewhere: readonly ElsewherePlan[];
  /**
   * Some clients' keys come from a key function that takes its time (a vault), in every drawn world: a till's create
   * whose key cannot be read writes its record without a deployment, and the attempt (or a later takeover) must write
   * one before its push leaves, or any deployment's answer would move the record.
   */
  readonly slowKeys: boolean;
  readonly tills: readonly TillPlan[];
  readonly workers: readonly WorkerPlan[];
  readonly checkers: readonly ProcessPlan[];
  readonly recovers: readonly ProcessPlan[];
  readonly jumps: readonly JumpPlan[];
  readonly reduce: Reductions;
  readonly streams: Streams;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Draws the world of `seed`, less what `reduce` takes out. */
export function drawWorld(seed: number, reduce: Reductions = {}): WorldPlan {
  const streams = streamsOf(seed);
  const random = streams.random;
  return drawPlan(seed, reduce, streams, random);
}

/** The run's streams of draws: one per group, each from the seed. */
function streamsOf(seed: number): Streams {
  return {
    random: seededRandom(seed),
    budget: seededRandom(seed ^ 0xb0d6e7),
    directed: seededRandom(seed ^ 0xed9e),
    stalling: seededRandom(seed ^ 0x5ca1ed),
    verifying: seededRandom(seed ^ 0x7e21f7),
    reversing: seededRandom(seed ^ 0x7e5e75e),
    clocking: seededRandom(seed ^ 0xc10c57e9),
    scheduler: seededRandom(seed ^ 0x5eed),
    time: seededRandom(seed ^ 0x7a11),
    service: seededRandom(seed ^ 0x5e41ce),
    journal: seededRandom(seed ^ 0x10a4),
    elsewhere: seededRandom(seed ^ 0xe15e3e),
  };
}

function drawPlan(seed: number, reduce: Reductions, streams: Streams, random: () => number): WorldPlan {
  // The graces a lag is bounded by (a draw of its own, kept for the seeds' sake; the readers' graces bound it below).
  const lagGraces = pick(random, [[undefined], [undefined, 30_000], [undefined, 0, 30_000]]);
  const shortestLagGrace = Math.min(...lagGraces.map((grace) => grace ?? 10_000));
  const maxLagMs = random() < 0.4 ? 0 : random() * Math.max(0, shortestLagGrace - 100);
  const faults = drawServiceFaults(random, maxLagMs);
  // Its own stream of draws: every other draw of the seed keeps its meaning. No operator there closes a record by hand
  // on a 429: a resend of another process may be on its way meanwhile (docs/guide/cashier-mode.md tells operators so).
  const duplicatesRefused = faults.dedupe && seededRandom(seed ^ 0xd0b1e)() < 2 / 3;
  if (duplicatesRefused) {
    faults.handClose = 0;
    drawRefusedFaults(seededRandom(seed ^ 0x409b), faults);
  }
  const journalFaults: JournalFaults = reduce.noJournalFaults
    ? { maxLatencyMs: 0, failBefore: 0, lostAck: 0 }
    : {
        maxLatencyMs: Math.floor(random() * 300),
        failBefore: random() < 0.5 ? 0 : random() * 0.05,
        lostAck: random() < 0.5 ? 0 : random() * 0.05,
      };
  const budget = drawBudget(seed, streams.budget, reduce, journalFaults);
  const misconfigured = random() < 0.3 ? random() * 0.5 : 0;
  const previousRelease = random() < 0.3 ? random() * 0.5 : 0;
  const knobs = {
    advanceWhileRunnable: random() * 0.3,
    crash: reduce.noCrashes || random() < 0.3 ? 0 : random() * 0.004,
    pause: reduce.noPauses || random() < 0.5 ? 0 : random() * 0.01,
    maxPauseMs: random() * 20_000,
  };
  const watchers = reduce.noRecovers || random() < 0.5 ? 0 : random() * 0.3;
  const { directed, stalling, reversing, clocking } = streams;
  const edgeWatchers = reduce.noRecovers || directed() < 0.5 ? 0 : 0.1 + directed() * 0.3;
  const orphans = directed() < 0.4 ? 0 : directed() * 0.8;
  const stalledDeciders = reduce.noRecovers || stalling() < 0.5 ? 0 : 0.3 + stalling() * 0.7;
  const reversal = reduce.noReversals || reversing() < 0.7 ? 0 : 0.1 + reversing() * 0.4;
  const clockWatchers = reduce.noClockJumps || reduce.noRecovers || clocking() < 0.65 ? 0 : 0.2 + clocking() * 0.5;
  const graces = pick(random, [[undefined], [undefined, 0, 30_000]]);
  // Reads lag less than the shortest grace of the readers that decide (the documented assumption). The lag was bounded
  // by a draw of graces of its own, not the readers': a world could lag 8.5 s against an edge watcher with grace 0,
  // outside the model (seed 2341 once budgets measured time, a double with no slip).
  const minGraceMs = Math.min(DEFAULT_GRACE_MS, ...graces.map((grace) => grace ?? DEFAULT_GRACE_MS));
  faults.maxLagMs = Math.min(faults.maxLagMs, Math.max(0, minGraceMs - 100));
  return {
    seed,
    faults,
    journalFaults,
    budget,
    misconfigured,
    previousRelease,
    knobs,
    directed: { watchers, edgeWatchers, orphans, stalledDeciders, reversal, clockWatchers },
    graces,
    duplicatesRefused,
    ...drawElsewhereWorld(streams.elsewhere, reduce),
    ...withoutJournalSteps(drawProcesses(random, reduce, graces), faults.memoryMs !== undefined),
    reduce,
    streams,
  };
}

/**
 * The faults of the worlds whose clients say the service refuses duplicates (their own stream): a proxy's bare 409 on
 * some pushes (no envelope: no evidence), and in two worlds of five a service that remembers a reference only 3–8
 * minutes after its commit. The clients' `duplicateMemoryMs` is 2 minutes shorter: a push written at the edge of the
 * clients' memory may still commit a window (106 s at most) later, and the earlier collection must still be
 * remembered then (seed 1957). The journal's clock does not step in those worlds, since the SDK measures a record's
 * age on it (see `drawPlan`).
 */
function drawRefusedFaults(random: () => number, faults: ServiceFaults): void {
  faults.bare409 = random() < 0.5 ? 0 : random() * 0.15;
  if (random() < 0.4) faults.memoryMs = Math.round((3 + random() * 5) * MINUTE);
}

/** What the clients of a world set `duplicateMemoryMs` to, when its service forgets (see `drawRefusedFaults`). */
export function clientDuplicateMemoryMs(faults: ServiceFaults): number | undefined {
  return faults.memoryMs === undefined ? undefined : faults.memoryMs - 2 * MINUTE;
}

/**
 * A world with nothing in it: no faults, no budget, no processes, no directed deciders. A directed test starts here
 * and says what its world has (`{ ...quietPlan(seed), tills: [...], ... }`): its meaning does not change when the
 * draws of `drawWorld` do. `seed` seeds only the streams the run draws from while it runs.
 */
export function quietPlan(seed: number): WorldPlan {
  const plan = drawWorld(seed);
  return {
    ...plan,
    streams: streamsOf(seed),
    faults: { ...HEALTHY, dedupe: true },
    journalFaults: { maxLatencyMs: 0, failBefore: 0, lostAck: 0 },
    budget: undefined,
    misconfigured: 0,
    previousRelease: 0,
    knobs: { advanceWhileRunnable: 0, crash: 0, pause: 0, maxPauseMs: 0 },
    directed: { watchers: 0, edgeWatchers: 0, orphans: 0, stalledDeciders: 0, reversal: 0, clockWatchers: 0 },
    graces: [undefined],
    duplicatesRefused: false,
    elsewhere: [],
    slowKeys: true,
    tills: [],
    workers: [],
    checkers: [],
    recovers: [],
    jumps: [],
    reduce: {},
  };
}

function drawServiceFaults(random: () => number, maxLagMs: number): ServiceFaults {
  return {
    dedupe: random() < 0.5,
    duplicateAs422: random() < 0.3,
    refuse: random() * 0.1,
    failBefore: random() * 0.15,
    rateLimit: random() * 0.1,
    dropAfterCommit: random() * 0.25,
    failAfterCommit: random() * 0.15,
    garbleAfterCommit: random() < 0.3 ? random() * 0.1 : 0,
    duplicate: random() * 0.2,
    stall: random() < 0.5 ? 0 : random() * 0.1,
    maxStallMs: random() * 40_000,
    lateCommit: random() < 0.4 ? random() * 0.5 : 0,
    maxCommitMs: random() * 20_000,
    statusFail: random() * 0.15,
    statusDrop: random() * 0.15,
    statusRateLimit: random() * 0.1,
    maxLagMs,
    maxLatencyMs: random() * 1_500,
    maxSettleMs: random() * 5 * MINUTE,
    oddWords: random() < 0.5,
    unknownPendingWords: random() < 0.3,
    handClose: random() < 0.4 ? 0 : 0.3 + random() * 0.7,
    bare404: random() < 0.7 ? 0 : random() * 0.2,
    bare409: 0,
  };
}

/** The key's shared budget in three worlds of ten (its own streams: worlds without one keep their draws). */
function drawBudget(seed: number, random: () => number, reduce: Reductions, journalFaults: JournalFaults): BudgetPlan | undefined {
  if (reduce.noBudget || random() >= 0.3) return undefined;
  const budget: BudgetPlan = {
    limit: pick(random, [2, 3, 5, 10]),
    leases: pick(random, [[undefined], [MIN_BUDGET_LEASE_MS], [undefined, MIN_BUDGET_LEASE_MS]]),
    // A third of them `'adaptive'` (their own stream of draws: every budget world keeps its other draws).
    adaptive: seededRandom(seed ^ 0xada97)() < 0.35,
  };
  if (!reduce.noJournalFaults) {
    // The journal slow or failing at `takeBudget` sometimes: shares lapse locally, requests wait, never more.
    journalFaults.budgetFail = random() < 0.5 ? 0 : random() * 0.2;
    journalFaults.maxBudgetStallMs = random() < 0.5 ? 0 : random() * 8_000;
  }
  return budget;
}

/**
 * In one world of five, one or two processes configured for a second deployment, started while the faults last (its
 * own stream of draws, continued by the run for that deployment's answers: every other draw keeps its meaning).
 */
function drawElsewhereWorld(random: () => number, reduce: Reductions): Pick<WorldPlan, 'elsewhere' | 'slowKeys'> {
  return { elsewhere: drawElsewhere(random, reduce), slowKeys: true };
}

function drawElsewhere(random: () => number, reduce: Reductions): ElsewherePlan[] {
  if (reduce.noElsewhere || random() >= 0.2) return [];
  const plans: ElsewherePlan[] = [];
  for (let n = 0, count = 1 + Math.floor(random() * 2); n < count; n++) {
    const clock = { offset: Math.round((random() * 2 - 1) * 5 * MINUTE), drift: (random() * 2 - 1) * 1e-4 };
    const kind = random() < 0.5 ? 'worker' : 'recover';
    plans.push({ name: `elsewhere-${kind}${n}`, kind, at: T0 + random() * 10 * MINUTE, clock });
  }
  return plans;
}

/** The tills (and their twins), workers, checkers, `recover()` jobs and clock jumps, in the order they are drawn. */
function drawProcesses(
  random: () => number,
  reduce: Reductions,
  graces: readonly (number | undefined)[],
): Pick<WorldPlan, 'tills' | 'workers' | 'checkers' | 'recovers' | 'jumps'> {
  const offset = () => Math.round((random() * 2 - 1) * 5 * MINUTE);
  const drift = () => (random() * 2 - 1) * 1e-4;
  const settings = (): ClientSettings => ({ timeoutMs: pick(random, [30_000, 20_000, 5_000]), maxRetries: pick(random, [0, 1, 2, 2]) });
  const tills: TillPlan[] = [];
  let saleId = 0;
  for (let i = 0, count = Math.min(1 + Math.floor(random() * 3), reduce.maxTills ?? 3); i < count; i++) {
    const sales: { id: number; amount: number }[] = [];
    for (let s = 0, n = 1 + Math.floor(random() * 2); s < n; s++) sales.push({ id: ++saleId, amount: 10 + Math.floor(random() * 90) });
    const tillSettings = settings();
    const clock = { offset: offset(), drift: drift() };
    tills.push({ name: `till${i}`, sales, settings: tillSettings, clock, at: T0 + random() * MINUTE });
    // Another terminal (or a retry job) selling the same sales.
    if (!reduce.noTwins && random() < 0.3) {
      const twinSettings = settings();
      const twinClock = random() < 0.5 ? clock : { offset: offset(), drift: drift() };
      tills.push({ name: `twin${i}`, sales, settings: twinSettings, clock: twinClock, at: T0 + random() * 40_000 });
    }
  }
  const group = (prefix: string, within: number, skip = false): ProcessPlan[] => {
    if (skip) return [];
    const plans: ProcessPlan[] = [];
    for (let n = 0, count = Math.floor(random() * 3); n < count; n++) {
      const at = T0 + random() * within;
      plans.push({ name: `${prefix}${n}`, at, clock: { offset: offset(), drift: drift() } });
    }
    return plans;
  };
  const workers: WorkerPlan[] = [];
  for (let n = 0, count = Math.floor(random() * 3); n < count; n++) {
    const at = T0 + random() * MINUTE;
    const options = drawWorkerOptions(random, graces);
    workers.push({ name: `worker${n}`, at, options, clock: { offset: offset(), drift: drift() } });
  }
  const checkers = group('checker', MINUTE, reduce.noCheckers);
  const recovers = group('recover', 5 * MINUTE, reduce.noRecovers);
  const jumps: JumpPlan[] = [];
  if (!reduce.noClockJumps)
    for (let j = 0, count = Math.floor(random() * 4); j < count; j++) {
      const at = T0 + random() * FAULT_PHASE_MS;
      const size = Math.round((random() * 2 - 1) * 2 * MINUTE);
      jumps.push({ at, size, onJournal: random() < 0.3 });
    }
  return { tills, workers, checkers, recovers, jumps };
}

/**
 * A world whose service forgets references keeps the journal's clock steady (every draw is still made): a step back
 * makes a record look younger than it is, and the clients' `duplicateMemoryMs` keeps no margin for it.
 */
function withoutJournalSteps<T extends { jumps: readonly JumpPlan[] }>(processes: T, steady: boolean): T {
  return steady ? { ...processes, jumps: processes.jumps.filter((jump) => !jump.onJournal) } : processes;
}

/** The plan as it is printed (`npm run sim -- --seed N`) and compared across stores: no streams. */
export function describePlan(plan: WorldPlan): string {
  const { streams: _streams, reduce: _reduce, ...plain } = plan;
  return JSON.stringify(plain, (_key, value: unknown) =>
    typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value,
  );
}
