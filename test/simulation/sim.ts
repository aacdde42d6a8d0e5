/**
 * The deterministic simulation of the public surface (the way TigerBeetle's VOPR and FoundationDB test theirs):
 * one seed draws a world (tills, twins on the same sales, settlement workers, status checkers, `recover()` jobs;
 * each process its own real `CollectionsClient` with its own clock offset, drift and jumps; the service's and the
 * journal's faults; crashes and pauses), the scheduler runs it in virtual time, and the invariants (invariants.ts)
 * are checked on what callers were told. After the fault phase the faults stop and a settlement worker (restarted,
 * as operations would) must bring every payment to a final state within the liveness bound; no final `recover()`.
 * In a world with the key's shared budget, the budget probe (`probeBudget`) comes last.
 *
 * Replay: `SIM_SEED=<n> npx vitest run test/simulation`. No vitest import: the benchmark and the worker-thread
 * sweep (`npm run sim`) load it under Node's type stripping.
 */

import { settlementBoundMs } from '../../src/collections/settlement-worker-options.js';
import { DEFAULT_BUDGET_LEASE_MS, MIN_BUDGET_LEASE_MS } from '../../src/collections/shared-budget.js';
import { PaymentContradictionError } from '../../src/core/errors.js';
import { DEFAULT_NOT_FOUND_GRACE_MS, type PaymentRecord } from '../../src/journal/journal.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { drawClockWatch, watchClocks } from './clock-faults.js';
import { budgetWindowViolations, Ledger } from './invariants.js';
import { type JournalFaults, RELIABLE_JOURNAL, SimJournal, type SimStore } from './journal.js';
import {
  type ClientSettings,
  check,
  clientFor,
  newReference,
  PRODUCT_ID,
  pause,
  recoverOnce,
  type Sale,
  sell,
  settle,
  verifyOnce,
  type World,
  type WorldBudget,
  workerOptions,
} from './processes.js';
import { type Proc, Scheduler, T0 } from './scheduler.js';
import { HEALTHY, outcomeAt, Service, type ServiceFaults } from './service.js';
import { VirtualTime } from './virtual-time.js';

const MINUTE = 60_000;
/** How long the faults last (simulated). */
const FAULT_PHASE_MS = 30 * MINUTE;
const MAX_STEPS = 400_000;
/** The longest a push of this world's clients can still take effect after it left (3 × 30 s + 2 × 8 s). */
const LATEST_EFFECT_MS = 106_000;
/**
 * The longest a till's create may wait for a token while other processes hold the whole budget (healthy journal):
 * the holders give the till's fair share back at their next renewal (at most 2 s apart, a window apart while their
 * requests wait), it cools one window (1 020 ms), and the till's own renewal comes at most 250 ms after that; plus
 * a second of slack for the timers' order.
 */
const CREATE_WAIT_BOUND_MS = 2_000 + 1_020 + 250 + 1_000;
/** The budget probe measures the survivors' arrivals over this long, from a lease (and 2 s) after the others died. */
const PROBE_MEASURE_MS = 5_000;
/** The share of the key's limit the survivors must use then (they wait for tokens the whole time). */
const PROBE_MIN_USE = 0.75;

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
}

export interface SimulationOptions {
  readonly seed: number;
  /**
   * The real store under the simulated journal: `'sqlite'` runs the same world (the same draws) on `SqliteJournal`,
   * `'postgres'` on the model of `PostgresJournal` under READ COMMITTED (postgres-model.ts).
   * @defaultValue `SIM_JOURNAL` from the environment, else `'memory'`
   */
  readonly store?: SimStore;
  readonly trace?: boolean;
  readonly reduce?: Reductions;
}

export interface SimulationResult {
  readonly seed: number;
  /** The store the run's journal was. */
  readonly store: SimStore;
  readonly steps: number;
  readonly violations: string[];
  readonly trace: string[];
  readonly probes: Map<string, number>;
  readonly world: string;
  readonly stats: { collections: number; sales: number; crashes: number; processes: number; simulatedMs: number; contendedSteps: number };
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Runs one seed and checks the invariants. */
export async function runSimulation(options: SimulationOptions): Promise<SimulationResult> {
  const { seed } = options;
  const reduce = options.reduce ?? {};
  const random = seededRandom(seed);
  const sim = new Scheduler(seededRandom(seed ^ 0x5eed), options.trace === true);
  const time = new VirtualTime(sim, seededRandom(seed ^ 0x7a11));

  // Swarm testing: this seed's own world.
  // Readers of this world: the grace they give a 404 (`undefined`: the default, 10 s).
  const graces = pick(random, [[undefined], [undefined, 30_000], [undefined, 0, 30_000]]);
  // Reads lag behind commits by less than the shortest grace of the world's readers (the documented assumption:
  // a 404 within notFoundGraceMs may be "not visible yet"); a reader with grace 0 accepts no lag.
  const shortestGrace = Math.min(...graces.map((grace) => grace ?? 10_000));
  const maxLagMs = random() < 0.4 ? 0 : random() * Math.max(0, shortestGrace - 100);
  const faults: ServiceFaults = {
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
  };
  const service = new Service(sim, seededRandom(seed ^ 0x5e41ce), faults);
  service.refuses = (amount) => amount % 10 === 7;
  const journalFaults: JournalFaults = reduce.noJournalFaults
    ? { ...RELIABLE_JOURNAL }
    : {
        maxLatencyMs: Math.floor(random() * 300),
        failBefore: random() < 0.5 ? 0 : random() * 0.05,
        lostAck: random() < 0.5 ? 0 : random() * 0.05,
      };
  // Issue 29's vocabulary: the key's shared budget (its own stream of draws: worlds without one keep theirs).
  const budgetRandom = seededRandom(seed ^ 0xb0d6e7);
  const budget: WorldBudget | undefined =
    reduce.noBudget || budgetRandom() >= 0.3
      ? undefined
      : {
          limit: pick(budgetRandom, [2, 3, 5, 10]),
          leases: pick(budgetRandom, [[undefined], [MIN_BUDGET_LEASE_MS], [undefined, MIN_BUDGET_LEASE_MS]]),
          // A third of them `'adaptive'` (their own stream of draws: every budget world keeps its other draws).
          adaptive: seededRandom(seed ^ 0xada97)() < 0.35,
          random: budgetRandom,
        };
  // The limit an adaptive fleet must learn: the service keeps it without saying, and answers 429 past it.
  if (budget?.adaptive === true) service.hiddenLimit = budget.limit;
  /** Every limit the journal granted under (true time): an adaptive key's windows are judged against what it had learnt. */
  const grantedLimits: { at: number; limit: number }[] = [];
  if (budget !== undefined && !reduce.noJournalFaults) {
    // The journal slow or failing at `takeBudget` sometimes: shares lapse locally, requests wait, never more.
    journalFaults.budgetFail = budgetRandom() < 0.5 ? 0 : budgetRandom() * 0.2;
    journalFaults.maxBudgetStallMs = budgetRandom() < 0.5 ? 0 : budgetRandom() * 8_000;
  }
  const journal = new SimJournal(sim, seededRandom(seed ^ 0x10a4), journalFaults, options.store ?? simStoreFromEnvironment());
  service.sendingWrite = (proc, referenceId) => journal.sendingWrites.get(`${proc.id}:${referenceId}`);
  service.sendingIssue = (proc, referenceId) => journal.sendingIssues.get(`${proc.id}:${referenceId}`);
  const shareCountsUntil = new Map<Proc, number>();
  /** Holders whose renewal failed, or was still on its way, since their last grant (the budget's documented limit). */
  const renewalTroubled = new Set<Proc>();
  const renewalSentAt = new Map<Proc, number>();
  journal.onRenewalSent = (proc) => {
    if (!renewalSentAt.has(proc)) renewalSentAt.set(proc, sim.now);
  };
  journal.onRenewalFailed = (proc) => {
    renewalTroubled.add(proc);
    renewalSentAt.delete(proc);
  };
  journal.onGrant = (proc, request, grant) => {
    // Applied after the holder's share had already run out here: the renewal was on its way too long.
    if (
      (renewalSentAt.get(proc) ?? Number.POSITIVE_INFINITY) <= (shareCountsUntil.get(proc) ?? 0) &&
      sim.now > (shareCountsUntil.get(proc) ?? 0)
    )
      renewalTroubled.add(proc);
    else renewalTroubled.delete(proc);
    renewalSentAt.delete(proc);
    const learnt = grantedLimits.at(-1)?.limit;
    if (budget?.adaptive === true && learnt !== undefined && grant.limit !== learnt)
      ledger.probe(grant.limit < learnt ? 'adaptive rate cut' : 'adaptive rate raised');
    grantedLimits.push({ at: sim.now, limit: grant.limit });
    // A grant of nothing counts nothing for the holder from now (a paused holder's renewal after its lease ran out).
    shareCountsUntil.set(proc, grant.share > 0 ? sim.now + request.leaseMs : sim.now);
    sim.log(
      `budget: ${proc.name} keeps ${request.keep}, wants ${request.want} → share ${grant.share}, target ${grant.target}, ${grant.holders} holders`,
    );
  };
  service.pastLease = (proc) => sim.now >= (shareCountsUntil.get(proc) ?? Number.POSITIVE_INFINITY);
  // A request arriving after its holder's share ran out in the journal, while the holder's renewals failed or took
  // longer than the lease: the documented limit of the budget (docs/assumptions.md; seeds 36 of one variant, 3721,
  // 8275). Its token was taken in time; the journal could not hear that the holder still spends.
  service.renewalTroubled = (proc) =>
    renewalTroubled.has(proc) || (renewalSentAt.get(proc) ?? Number.POSITIVE_INFINITY) <= (shareCountsUntil.get(proc) ?? 0);
  service.lastWrite = (referenceId) => journal.lastWrite.get(referenceId);
  journal.lastStatusOf = (proc, referenceId) => service.lastStatus.get(`${proc.id}:${referenceId.toLowerCase()}`);
  const wrongPrefix = new Set<Proc>();
  journal.wrongPrefix = (proc) => wrongPrefix.has(proc);
  // Issue 26's vocabulary: some processes' baseUrl has a wrong prefix; some tills write as the previous release.
  const misconfigured = random() < 0.3 ? random() * 0.5 : 0;
  const previousRelease = random() < 0.3 ? random() * 0.5 : 0;
  let healed = false;
  const setup = () => ({ wrongPrefix: !healed && random() < misconfigured });
  // The back office: an operator who closes records by hand (an identity for the journal's last-write bookkeeping).
  const operator = sim.spawn('operator', T0, async () => {}, { mortal: false });
  service.closeByHand = (referenceId) => void journal.closeByHand(referenceId, operator);
  sim.knobs = {
    advanceWhileRunnable: random() * 0.3,
    crash: reduce.noCrashes || random() < 0.3 ? 0 : random() * 0.004,
    pause: reduce.noPauses || random() < 0.5 ? 0 : random() * 0.01,
    maxPauseMs: random() * 20_000,
  };
  const saleOf = new Map<string, Sale>();
  const ledger = new Ledger(service, saleOf, () => sim.steps);
  const offset = () => Math.round((random() * 2 - 1) * 5 * MINUTE);
  const drift = () => (random() * 2 - 1) * 1e-4;
  const settings = (): ClientSettings => ({ timeoutMs: pick(random, [30_000, 20_000, 5_000]), maxRetries: pick(random, [0, 1, 2, 2]) });
  let deciders = 0;
  const decideAround = (decidableAt: string) => {
    if (reduce.noRecovers || random() >= 0.3) return;
    // The journal's time, as true time, give or take 1.5 s: deciders right at updatedAt + window + grace.
    const at = Date.parse(decidableAt) - journal.offset + (random() * 2 - 1) * 1_500;
    sim.spawn(`decider${deciders++}`, at, (p) => recoverOnce(world, clientFor(world, p, settings(), setup())), {
      offset: offset(),
      drift: drift(),
    });
  };
  // Directed deciders: a process that reads a record right after the write that let a push leave (its own watch
  // starts then), and decides again right at that write + window + grace (or + window alone) ± a small lag: a
  // verdict a second early, or one that ignores the grace, lands inside the window of a push still in flight.
  const watchers = reduce.noRecovers || random() < 0.5 ? 0 : random() * 0.3;
  // Edge watchers (their own stream of draws): a process with the world's shortest grace that reads a record right
  // after the write that let a push leave, then runs `recover()` on a ladder of times 200 ms apart from 2.5 s
  // before that write + window + grace to just past it. Sometimes the writer dies as its write lands (the push never
  // leaves: the record is old enough exactly then, not a second before). A verdict a second early lands on the
  // ladder's first rungs (invariant 7); a verdict on its first 404 without the re-check, asked just before a commit at
  // the window's edge, closes a record the service then holds (invariant 3, the end's contradictions).
  const directed = seededRandom(seed ^ 0xed9e);
  const edgeWatchers = reduce.noRecovers || directed() < 0.5 ? 0 : 0.1 + directed() * 0.3;
  const orphans = directed() < 0.4 ? 0 : directed() * 0.8;
  // Stalled deciders (their own stream of draws: worlds without them keep every draw): an edge watcher that, once
  // its watch has started, asks the service while a push is still on its way and stops right after the 404 (a
  // stop-the-world pause, a suspended VM: up to 30 s) until about the verdict's bound, so the journal read that
  // follows finds the record old enough by both clocks; sometimes the record's writer dies once its push has left
  // (nothing else writes the record). Only the verdict's second check, asked after the bound, can see the commit
  // that landed during the pause: a verdict on the first 404 closes a payment the service holds.
  // Start-up checks (their own stream of draws): half the tills and workers call `verify()` first, as the docs advise;
  // one that is refused (a wrong base URL) logs it and goes on, as a careless deployment would.
  const verifying = seededRandom(seed ^ 0x7e21f7);
  const stalling = seededRandom(seed ^ 0x5ca1ed);
  const stalledDeciders = reduce.noRecovers || stalling() < 0.5 ? 0 : 0.3 + stalling() * 0.7;
  const dieAfterPush = new Set<string>();
  const pauseAfterNotFound = new Map<string, number>();
  service.onPushLeft = (proc, referenceId) => {
    if (!dieAfterPush.delete(`${proc.id}:${referenceId}`) || healed || proc.dead) return;
    ledger.probe('writer died after its push left');
    sim.kill(proc);
  };
  service.pauseAfterNotFound = (proc, referenceId) => {
    const key = `${proc.id}:${referenceId}`;
    const pauseMs = pauseAfterNotFound.get(key);
    if (pauseMs === undefined || healed) return 0;
    pauseAfterNotFound.delete(key);
    ledger.probe('decider paused after a 404');
    return pauseMs;
  };
  // The contradiction world (its own stream of draws): in some worlds the service reverses some settled collections
  // (up to 3 min after they settle, it answers the other outcome). A record already final keeps its outcome, marked
  // as contradicted by the first reader that sees the reversal, which is told `PaymentContradictionError`.
  const reversing = seededRandom(seed ^ 0x7e5e75e);
  const reversal = reduce.noReversals || reversing() < 0.7 ? 0 : 0.1 + reversing() * 0.4;
  service.reversalAt = (settlesAt) => (reversal > 0 && reversing() < reversal ? settlesAt + reversing() * 3 * MINUTE : undefined);
  let edges = 0;
  const watchEdge = (writer: Proc, record: PaymentRecord) => {
    const window = record.sendWindowMs;
    if (healed || window === undefined || !Number.isFinite(window) || directed() >= edgeWatchers) return;
    const writtenAt = sim.now;
    let writerDies = false;
    if (writer.mortal && /^(till|twin)/.test(writer.name) && directed() < orphans) {
      ledger.probe('writer died as its write landed');
      sim.kill(writer);
      writerDies = true;
    }
    const stalled = stalling() < stalledDeciders;
    if (stalled) ledger.probe('stalled decider');
    if (stalled && !writerDies && writer.mortal && /^(till|twin)/.test(writer.name) && stalling() < 0.7) {
      dieAfterPush.add(`${writer.id}:${record.referenceId}`);
    }
    const grace = journal.minGraceMs;
    sim.spawn(`edge${edges++}`, sim.now + directed() * 50, async (p) => {
      const client = clientFor(world, p, { timeoutMs: 30_000, maxRetries: 0 }, { plainKey: true });
      await recoverOnce(world, client, grace);
      const target = writtenAt + window + grace;
      if (stalled) {
        const pauseMs = stalling() * 30_000;
        const at = target - pauseMs + stalling() * 300;
        if (at > sim.now) await pause(at - sim.now);
        pauseAfterNotFound.set(`${p.id}:${record.referenceId}`, pauseMs);
        await recoverOnce(world, client, grace);
        pauseAfterNotFound.delete(`${p.id}:${record.referenceId}`);
      }
      // From 2.5 s before (a recover() takes two status round trips and its journal calls before it decides).
      for (let rung = 0; rung < 14; rung++) {
        const at = target - 2_500 + rung * 200 + directed() * 150;
        if (at > sim.now) await pause(at - sim.now);
        await recoverOnce(world, client, grace);
      }
    });
  };
  // Directed clock faults (their own stream of draws: worlds without them keep every draw): clock watchers
  // (clock-faults.ts) under which the journal's clock, or it and the watcher's own, steps just before a record
  // becomes old enough.
  const clocking = seededRandom(seed ^ 0xc10c57e9);
  const clockWatchers = reduce.noClockJumps || reduce.noRecovers || clocking() < 0.65 ? 0 : 0.2 + clocking() * 0.5;
  let clockWatches = 0;
  journal.onSendingWrite = (writer, record) => {
    if (edgeWatchers > 0) watchEdge(writer, record);
    if (clockWatchers > 0 && !healed && clocking() < clockWatchers)
      watchClocks(world, record, drawClockWatch(clocking), `clock${clockWatches++}`, () => healed);
    if (watchers === 0 || random() >= watchers) return;
    const window = record.sendWindowMs;
    if (window === undefined || !Number.isFinite(window)) return;
    const grace = pick(random, world.graces);
    const settings0 = settings();
    sim.spawn(
      `watcher${deciders++}`,
      sim.now + random() * 300,
      async (p) => {
        const client = clientFor(world, p, settings0);
        const start = sim.now;
        await recoverOnce(world, client, grace);
        const target = start + window + (random() < 0.7 ? (grace ?? 10_000) : 0) + (random() * 2 - 1) * 1_500;
        for (let round = 0; round < 3; round++) {
          await pause(target - sim.now + round * random() * 1_000);
          await recoverOnce(world, client, grace);
        }
      },
      { offset: offset(), drift: drift() },
    );
  };
  const world: World = {
    sim,
    service,
    journal,
    random,
    ledger,
    saleOf,
    graces: pick(random, [[undefined], [undefined, 0, 30_000]]),
    decideAround,
    wrongPrefix,
    budget,
    budgeted: new Set(),
    windowless: new Set(),
  };
  // The shortest grace of any decider: the world's readers, and `checkStatus`/`pollUntilSettled`'s default.
  journal.minGraceMs = Math.min(DEFAULT_NOT_FOUND_GRACE_MS, ...world.graces.map((grace) => grace ?? DEFAULT_NOT_FOUND_GRACE_MS));
  // Reads lag less than the shortest grace of the readers that decide (the documented assumption). The lag was bounded
  // by a draw of graces of its own, not the readers' (`world.graces`): a world could lag 8.5 s against an edge
  // watcher with grace 0, outside the model (seed 2341 once budgets measured time, a double with no slip).
  faults.maxLagMs = Math.min(faults.maxLagMs, Math.max(0, journal.minGraceMs - 100));

  const tills = Math.min(1 + Math.floor(random() * 3), reduce.maxTills ?? 3);
  const sales: Sale[] = [];
  const restarts = new Map<string, number>();
  const startTill = (
    name: string,
    tillSales: Sale[],
    clientSettings: ClientSettings,
    clock: { offset: number; drift: number },
    at: number,
    restarted: boolean,
  ) => {
    sim.spawn(
      name,
      at,
      async (p) => {
        // A till of the previous release writes records without a window (a restart may come after the upgrade).
        const client = clientFor(world, p, clientSettings, { previousRelease: random() < previousRelease });
        if (verifying() < 0.5) await verifyOnce(world, client);
        if (restarted) await recoverOnce(world, client);
        for (const sale of tillSales) await sell(world, p, client, sale, 5);
      },
      clock,
    );
  };
  const tillOf = new Map<string, { sales: Sale[]; settings: ClientSettings; clock: { offset: number; drift: number } }>();
  for (let i = 0; i < tills; i++) {
    const tillSales: Sale[] = [];
    for (let s = 0, count = 1 + Math.floor(random() * 2); s < count; s++) {
      const sale: Sale = { id: sales.length + 1, references: [], amount: 10 + Math.floor(random() * 90), phoneNumber: '260977123456' };
      sales.push(sale);
      tillSales.push(sale);
    }
    const till = { sales: tillSales, settings: settings(), clock: { offset: offset(), drift: drift() } };
    tillOf.set(`till${i}`, till);
    startTill(`till${i}`, tillSales, till.settings, till.clock, T0 + random() * MINUTE, false);
    // Another terminal (or a retry job) selling the same sales.
    if (!reduce.noTwins && random() < 0.3) {
      const twin = { sales: tillSales, settings: settings(), clock: random() < 0.5 ? till.clock : { offset: offset(), drift: drift() } };
      tillOf.set(`twin${i}`, twin);
      startTill(`twin${i}`, tillSales, twin.settings, twin.clock, T0 + random() * 40_000, false);
    }
  }
  sim.onCrash = (proc) => {
    const base = proc.name.split('.')[0] as string;
    const till = tillOf.get(base);
    const count = (restarts.get(base) ?? 0) + 1;
    if (count > 3 || random() < 0.15) return;
    restarts.set(base, count);
    const at = sim.now + random() * 3 * MINUTE;
    if (till !== undefined) startTill(`${base}.r${count}`, till.sales, till.settings, till.clock, at, true);
    else if (base.startsWith('worker')) startWorker(`${base}.r${count}`, at);
  };
  const startWorker = (name: string, at: number, mortal = true, options = workerOptions(world)) =>
    // The fleet worker (started once the faults stop) has a key function that answers at once: a vault that takes up
    // to 15 s against a 5 s time limit is a fault, and the liveness bound holds only without faults (seed 2055).
    sim.spawn(
      name,
      at,
      async (p) => {
        const client = clientFor(world, p, settings(), mortal ? setup() : { plainKey: true });
        if (verifying() < 0.5) await verifyOnce(world, client);
        await settle(client, options);
      },
      {
        offset: offset(),
        drift: drift(),
        mortal,
      },
    );
  for (let w = 0, workers = Math.floor(random() * 3); w < workers; w++) startWorker(`worker${w}`, T0 + random() * MINUTE);
  if (!reduce.noCheckers)
    for (let c = 0, checkers = Math.floor(random() * 3); c < checkers; c++) {
      sim.spawn(`checker${c}`, T0 + random() * MINUTE, (p) => check(world, clientFor(world, p, settings(), setup()), 8), {
        offset: offset(),
        drift: drift(),
      });
    }
  if (!reduce.noRecovers)
    for (let r = 0, recovers = Math.floor(random() * 3); r < recovers; r++) {
      sim.spawn(`recover${r}`, T0 + random() * 5 * MINUTE, (p) => recoverOnce(world, clientFor(world, p, settings(), setup())), {
        offset: offset(),
        drift: drift(),
      });
    }
  // Clock jumps of processes and of the journal (forward and back) while faults last: a forward step of the journal's
  // clock makes its measure of a record's age early by the step; the deciding process's own monotonic watch
  // (performance.now, which never steps) is what keeps the verdict bound (journal.ts).
  if (!reduce.noClockJumps) {
    for (let j = 0, jumps = Math.floor(random() * 4); j < jumps; j++) {
      const at = T0 + random() * FAULT_PHASE_MS;
      const size = Math.round((random() * 2 - 1) * 2 * MINUTE);
      const onJournal = random() < 0.3;
      sim.at(at, undefined, 'clock jump', () => {
        // Only while the faults last (the liveness bound and the budget probe hold with no clock steps).
        if (healed) return;
        if (onJournal) {
          const step = size;
          journal.offset += step;
          ledger.probe(step < 0 ? 'journal clock stepped back' : 'journal clock stepped forward');
          sim.log(`JOURNAL CLOCK ${step > 0 ? '+' : ''}${step} ms`);
          return;
        }
        const live = sim.live();
        if (live.length === 0) return;
        const proc = live[Math.floor(random() * live.length)] as Proc;
        proc.offset += size;
        ledger.probe(size < 0 ? 'process clock stepped back' : 'process clock stepped forward');
        sim.log(`CLOCK ${proc.name} ${size > 0 ? '+' : ''}${size} ms`);
      });
    }
  }
  const worldText = JSON.stringify({
    tills: [...tillOf].map(([name, t]) => ({ name, sales: t.sales.map((s) => s.id), ...t.settings, offset: t.clock.offset })),
    service: Object.fromEntries(Object.entries(faults).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 1000) / 1000 : v])),
    journal: journalFaults,
    store: journal.kind,
    knobs: sim.knobs,
    graces: world.graces,
    ...(budget === undefined ? {} : { budget: { limit: budget.limit, leases: budget.leases, adaptive: budget.adaptive } }),
  });
  void newReference;

  time.install();
  let finished = false;
  let livenessBoundMs = 0;
  const budgetProbe = { violations: [] as string[] };
  try {
    const tillsDone = () => sim.procs.every((p) => !/^(till|twin)/.test(p.name) || p.done || p.dead);
    finished = await sim.run(T0 + FAULT_PHASE_MS, MAX_STEPS, tillsDone);
    // The faults stop: the service and the journal heal, nothing crashes or pauses any more, and a settlement worker
    // runs (restarted by operations). Every payment must now reach a final state within the bound.
    service.faults = { ...HEALTHY, dedupe: faults.dedupe, maxSettleMs: faults.maxSettleMs };
    journal.faults = RELIABLE_JOURNAL;
    // No event loop stalls either: the scheduler no longer lets time run past a process's due work (a stall of
    // 433 s past the fleet worker's start broke the bound: seed 2706).
    sim.knobs = { ...sim.knobs, crash: 0, pause: 0, advanceWhileRunnable: 0 };
    for (const proc of sim.procs) proc.pausedUntil = 0;
    // Operations fix a wrong baseUrl (the worker reported it: configurationProblem): those processes stop, and the
    // leases they held run out.
    healed = true;
    for (const proc of wrongPrefix) sim.kill(proc);
    sim.log('--- the faults stop');
    const fleet = workerOptions(world);
    startWorker('fleet-worker', sim.now, false, fleet);
    const healedAt = sim.now;
    // The documented bound (settlementBoundMs) for the fleet worker's options, with the longest window and grace of
    // the world and the longest lease a dead worker may still hold; plus what the service itself takes: a push may
    // still take effect up to a window after the faults stop, and then settle up to maxSettleMs later.
    livenessBoundMs =
      settlementBoundMs({
        ...fleet,
        // Under the key's shared budget the worker's turn comes at its share of the key (half, or one a second).
        ...(budget === undefined
          ? {}
          : // An adaptive key may have learnt as little as one a second (its floor) when the faults stop.
            {
              requestsPerSecond: budget.adaptive ? 1 : Math.max(1, Math.min(fleet.requestsPerSecond ?? 10, Math.floor(budget.limit / 2))),
            }),
        leaseMs: 90_000,
        notFoundGraceMs: Math.max(...world.graces.map((grace) => grace ?? 10_000)),
        sendWindowMs: LATEST_EFFECT_MS,
        openPayments: journal.open.size,
      }) +
      LATEST_EFFECT_MS +
      1_000 +
      faults.maxSettleMs;
    // Past the longest window a push of the world can still take effect in, with every record final: nothing can change.
    const settled = () => sim.now >= healedAt + LATEST_EFFECT_MS && journal.open.size === 0;
    finished = (await sim.run(healedAt + livenessBoundMs, MAX_STEPS * 2, settled)) && finished;
    // What callers were told against the service, before the probe adds a payment of its own.
    ledger.finish(await journal.store.list(), livenessBoundMs);
    // The probe in 40 % of them (it costs about as many steps as the rest of the world).
    // (Not under an adaptive key: what the survivors may use is what it has learnt, which the windows check.)
    if (budget !== undefined && finished && budget.random() < 0.4 && !budget.adaptive)
      finished = await probeBudget(world, budget, budgetProbe);
    if (finished) finished = await auditReversals(world, settings());
  } finally {
    time.restore();
    await journal.store.close();
  }
  if (budget !== undefined) {
    // A request that left a stalled process (its due work waiting) after its share's lease ran out in the journal is
    // counted as a rare path, not failed: no lease can reach a process that does not run (as invariant 8's late push).
    if (service.arrivals.some((arrival) => arrival.stalled)) ledger.probe('request left a stalled process past its share lease');
    const counted = service.arrivals.filter((arrival) => world.budgeted.has(arrival.proc) && !arrival.stalled);
    // Every window is judged, journal clock steps included: leases and cooling run on time the holders measured
    // (before, a forward step of the journal's clock ended live holders' leases early: seeds 728 and 840).
    ledger.violations.push(
      ...budgetWindowViolations(
        counted.map((arrival) => ({ at: arrival.at, by: arrival.proc.name })),
        budget.adaptive
          ? learntLimit(grantedLimits, Math.max(...budget.leases.map((leaseMs) => leaseMs ?? DEFAULT_BUDGET_LEASE_MS)))
          : budget.limit,
      ),
      ...budgetProbe.violations,
    );
  }
  if (!finished) ledger.violations.push(`BUDGET: more than ${MAX_STEPS} steps`);
  if (sim.failure !== undefined) ledger.violations.push(`PROCESS: ${sim.failure}`);
  ledger.violations.push(...journal.violations, ...service.violations);
  for (const escaped of time.escapes) ledger.violations.push(`ESCAPE: ${escaped}`);
  for (const [name, count] of service.hits) ledger.probes.set(name, count);
  for (const [name, count] of journal.hits) ledger.probes.set(name, count);
  return {
    seed,
    store: journal.kind,
    steps: sim.steps,
    violations: ledger.violations,
    trace: sim.trace ?? [],
    probes: ledger.probes,
    world: worldText,
    stats: {
      collections: service.collections.length,
      sales: sales.length,
      crashes: sim.crashes,
      processes: sim.procs.length,
      simulatedMs: sim.now - T0,
      contendedSteps: sim.contendedSteps,
    },
  };
}

/**
 * The limit an adaptive key's window starting at `at` is judged against: the highest the journal granted from a
 * lease (and 2 s) before it to its end, since a holder may spend a share granted under a higher rate until its lease
 * ends; before the first grant, nothing may arrive.
 */
function learntLimit(grants: readonly { at: number; limit: number }[], leaseMs: number): (at: number) => number {
  return (at) => {
    let limit = 0;
    let before: number | undefined;
    for (const grant of grants) {
      if (grant.at > at + 1_000) break;
      if (grant.at < at - leaseMs - 2_000) before = grant.limit;
      else limit = Math.max(limit, grant.limit);
    }
    return Math.max(limit, before ?? 0);
  };
}

/**
 * The audit of reversals, once every payment is final: a reader asking about a collection the service reversed after
 * its record became final must be told `PaymentContradictionError` (never the new outcome as if nothing happened), and
 * the record must keep its state with the contradiction's mark (CONTRACT: contradictions are loud).
 */
async function auditReversals(world: World, clientSettings: ClientSettings): Promise<boolean> {
  const { sim, service, journal, ledger } = world;
  const reversed = service.collections.filter((collection) => collection.reversedAt !== undefined);
  if (reversed.length === 0) return true;
  // The world stops (restarts too): what callers were told is judged already, and the audit must not be raced.
  sim.onCrash = () => {};
  for (const proc of sim.procs) if (!proc.dead) sim.kill(proc);
  const from = Math.max(sim.now, ...reversed.map((collection) => (collection.reversedAt as number) + 1));
  let audited = false;
  sim.spawn(
    'auditor',
    from,
    async (p) => {
      const client = clientFor(world, p, clientSettings, { plainKey: true });
      for (const collection of reversed) {
        const before = await journal.store.get(collection.referenceId);
        const now = outcomeAt(collection, sim.now);
        if (before === undefined || before.state === now || (before.state !== 'successful' && before.state !== 'failed')) continue;
        const short = collection.referenceId.slice(0, 8);
        try {
          const status = await client.checkStatus(collection.referenceId);
          ledger.violations.push(
            `QUIET-CONTRADICTION: checkStatus for ${short} (journal: ${before.state}) resolved with ${JSON.stringify(status.statusText)}`,
          );
        } catch (error) {
          if (!(error instanceof PaymentContradictionError)) {
            ledger.violations.push(`QUIET-CONTRADICTION: checkStatus for ${short} (journal: ${before.state}) failed with ${String(error)}`);
            continue;
          }
          ledger.probe('contradiction reported');
        }
        const after = await journal.store.get(collection.referenceId);
        if (after?.state !== before.state) ledger.violations.push(`FINAL-CHANGED: ${short} was ${before.state}, now ${after?.state}`);
        if (after?.contradiction === undefined)
          ledger.violations.push(`UNMARKED-CONTRADICTION: ${short} is ${before.state}; the service says ${now}`);
      }
      audited = true;
    },
    { mortal: false },
  );
  return (await sim.run(from + 10 * MINUTE, MAX_STEPS, () => audited)) && audited;
}

/**
 * The budget probe, at the end of a world with a shared budget (the journal healthy): every process dies at once
 * but one or two survivors that keep requests waiting for tokens; a lease (and 2 s) later the survivors must use
 * most of the key's limit (the dead processes' shares came back, and renewals do not lose what they hold), and a
 * till's create arriving then must leave within {@link CREATE_WAIT_BOUND_MS} of its journal write (its fair share
 * comes back from the survivors; it is not starved behind their checks).
 */
async function probeBudget(world: World, budget: WorldBudget, out: { violations: string[] }): Promise<boolean> {
  const { sim, service, journal } = world;
  sim.onCrash = () => {};
  // Only the survivors and the probe's till hold shares: no watcher is spawned by the till's write (seed 1544: one
  // took a fourth share of a key of 2 and held the till's create to the bound's last millisecond; seed 1800 of the
  // PostgreSQL variant: past it, 5.0 s).
  journal.onSendingWrite = () => {};
  // Finished processes too: their clients still renew a share for a lease after their last request.
  for (const proc of sim.procs) if (!proc.dead) sim.kill(proc);
  const diedAt = sim.now;
  const lease = Math.max(...budget.leases.map((leaseMs) => leaseMs ?? DEFAULT_BUDGET_LEASE_MS));
  const from = diedAt + lease + 2_000;
  const to = from + PROBE_MEASURE_MS;
  sim.log(`--- budget probe: everyone died; survivors measured from t+${((from - T0) / 1_000).toFixed(3)}s`);
  const survivors = 1 + Math.floor(budget.random() * 2);
  const known = [...world.saleOf.keys()];
  const survivorProcs: Proc[] = [];
  for (let s = 0; s < survivors; s++) {
    const proc = sim.spawn(
      `survivor${s}`,
      diedAt,
      async (p) => {
        const client = clientFor(world, p, { timeoutMs: 5_000, maxRetries: 0 }, { plainKey: true });
        const reference = known[0] ?? newReference(world, { id: 0, references: [], amount: 10, phoneNumber: '260977123456' });
        // One check now (it holds a share, and renews it while the dead shares run out), then more checks than
        // the limit from half a lease on: they wait for tokens the whole measure.
        try {
          await client.checkStatus(reference);
        } catch {
          // Only arrivals count here.
        }
        await pause(diedAt + lease / 2 - sim.now);
        await Promise.all(
          Array.from({ length: budget.limit + 2 }, async () => {
            while (sim.now < to + 6_000) {
              const before = sim.now;
              try {
                await client.checkStatus(reference);
              } catch {
                // Only arrivals count here.
              }
              if (sim.now === before) await pause(10);
            }
          }),
        );
      },
      { mortal: false },
    );
    survivorProcs.push(proc);
  }
  // After the measure (a till keeps headroom for its next creates: the survivors' fair shares are smaller then).
  const tillAt = to + budget.random() * 1_500;
  let created: string | undefined;
  let tillProc: Proc | undefined;
  tillProc = sim.spawn(
    'probe-till',
    tillAt,
    async (p) => {
      const client = clientFor(world, p, { timeoutMs: 20_000, maxRetries: 0 }, { plainKey: true });
      const sale: Sale = { id: 0, references: [], amount: 10, phoneNumber: '260977123456' };
      const reference = newReference(world, sale);
      try {
        await client.initiate({ referenceId: reference, productId: PRODUCT_ID, phoneNumber: sale.phoneNumber, amount: 10 });
        created = reference;
      } catch (error) {
        out.violations.push(
          `BUDGET-CREATE: the probe's create failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
        );
      }
    },
    { mortal: false },
  );
  const done = await sim.run(to + 7_000, sim.steps + MAX_STEPS);
  const used = service.arrivals.filter((arrival) => arrival.at >= from && arrival.at < to && world.budgeted.has(arrival.proc)).length;
  const needed = Math.floor(PROBE_MIN_USE * budget.limit * (PROBE_MEASURE_MS / 1_000));
  if (used < needed)
    out.violations.push(
      `BUDGET-USE: ${used} arrivals in the ${PROBE_MEASURE_MS / 1_000} s from a lease after the others died (limit ${budget.limit}/s: at least ${needed} expected; ${survivorProcs.length} survivors waiting for tokens)`,
    );
  if (created !== undefined && tillProc !== undefined) {
    const key = `${tillProc.id}:${created}`;
    const acked = journal.sendingAcks.get(key);
    const left = service.departures.get(key)?.[0];
    if (acked !== undefined && left !== undefined && left - acked > CREATE_WAIT_BOUND_MS)
      out.violations.push(
        `BUDGET-CREATE: the probe's create left ${Math.round(left - acked)} ms after its journal write (bound ${CREATE_WAIT_BOUND_MS} ms; survivors waiting with checks)`,
      );
    sim.log(
      `budget probe: create waited ${acked === undefined || left === undefined ? '?' : Math.round(left - acked)} ms; ${used} arrivals`,
    );
  }
  return done || sim.now >= to + 6_000;
}

/** The command that replays `seed` (with its trace). */
export function replayCommand(seed: number, store: SimStore = simStoreFromEnvironment()): string {
  return `${store === 'memory' ? '' : `SIM_JOURNAL=${store} `}SIM_SEED=${seed} npx vitest run test/simulation`;
}

/**
 * The store a run uses unless told: `SIM_JOURNAL=sqlite` selects the SQLite variant for every run of the process,
 * `SIM_JOURNAL=postgres` the PostgreSQL one.
 */
export function simStoreFromEnvironment(): SimStore {
  const store = process.env.SIM_JOURNAL;
  return store === 'sqlite' || store === 'postgres' ? store : 'memory';
}
