/**
 * The scale benchmark's runs: heap per poll while waiting between checks and with a request in flight, and the
 * event-loop stall and CPU of a realistic ramp. Each run gets its poll function from a {@link PollFactory}.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { seededRandom } from './harness.ts';
import { type Answering, activeTimers, FakeGateway, nextTurn, type PollFactory, PollTracker } from './scale-gateway.ts';

export const SCALE_COUNT = 10_000;
/** Polls started, and held responses released, per event-loop turn (heap runs). */
export const BATCH = 200;
/** Polls started per millisecond in the ramp of the stall run (10 000 over 1 s). */
export const RAMP_PER_MS = 10;
/** Heap runs per state and variant (alternating). */
export const HEAP_ROUNDS = 3;
/** Waiting between checks: a long first pause, so that once every first check is answered every poll is asleep. */
export const WAITING_SCHEDULE = { initialDelayMs: 3_000, intervalMs: 5, maxIntervalMs: 20 } as const;
/** Request in flight: the schedule is irrelevant to the reading; short, so the run ends quickly. */
export const IN_FLIGHT_SCHEDULE = { initialDelayMs: 1, intervalMs: 1, maxIntervalMs: 5 } as const;

/**
 * heapUsed after a settled GC. undici's fetch/Request registers request signals in a FinalizationRegistry;
 * what it holds is freed only after its finalizer has run, which takes an event-loop turn after a GC:
 * back-to-back GCs would count that garbage.
 */
async function settledHeapUsed(gc: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await delay(20);
  }
  gc();
  return process.memoryUsage().heapUsed;
}

/** `count` work items, `batch` per event-loop turn (as requests and responses arrive over time, not all in one tick). */
async function inBatches(count: number, batch: number, work: (index: number) => void): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    for (let index = start; index < Math.min(count, start + batch); index++) work(index);
    await nextTurn();
  }
}

/** A fake of `count` collections, each settling at a check drawn (seeded) from `settlesAt`, and a tracker of their polls. */
function setUp(
  makePoll: PollFactory,
  count: number,
  seed: number,
  settlesAt: readonly [first: number, last: number],
  answering: Answering,
): { fake: FakeGateway; tracker: PollTracker } {
  const random = seededRandom(seed);
  const ids = Array.from({ length: count }, () => randomUUID());
  const [first, last] = settlesAt;
  const fake = new FakeGateway(ids, () => first + Math.floor(random() * (last - first + 1)), answering);
  return { fake, tracker: new PollTracker(ids, makePoll(fake.fetch)) };
}

export interface HeapResult {
  readonly settled: number;
  readonly problems: readonly string[];
  readonly heapPerPollBytes: number;
  /** When the heap was read, in ms after the first poll started. */
  readonly readAfterMs: number;
}

/**
 * Waiting between checks: the fake answers every check at once, `pending` until check 2–5 (seeded). Once every
 * first check is answered, every poll sleeps out its long first pause: the heap is read then (it must find
 * exactly one timer per poll and no second check yet), and the polls run on to the end.
 */
export async function waitingRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<HeapResult> {
  const { fake, tracker } = setUp(makePoll, count, seed, [2, 5], 'at once');
  const heapBefore = await settledHeapUsed(gc);
  const started = performance.now();
  await inBatches(count, BATCH, (index) => tracker.start(index));
  while (fake.checks < count && performance.now() - started < WAITING_SCHEDULE.initialDelayMs) await nextTurn();
  const heapWaiting = await settledHeapUsed(gc);
  const readAfterMs = performance.now() - started;
  const checksAtReading = fake.checks;
  const timersAtReading = activeTimers();
  await tracker.allEnded();
  const { settled, problems } = await tracker.problems(fake);
  if (checksAtReading !== count || timersAtReading !== count) {
    problems.push(
      `not every poll asleep at the heap reading (${checksAtReading} checks, ${timersAtReading} timers, ${readAfterMs.toFixed(0)} ms in)`,
    );
  }
  return { settled, problems, heapPerPollBytes: (heapWaiting - heapBefore) / count, readAfterMs };
}

/**
 * Request in flight: every first check is held until all polls have started (each collection settles at
 * check 1–5, seeded); the heap is read then, and the held checks are released.
 */
export async function inFlightRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<HeapResult> {
  const { fake, tracker } = setUp(makePoll, count, seed, [1, 5], 'hold first');
  const heapBefore = await settledHeapUsed(gc);
  const started = performance.now();
  await inBatches(count, BATCH, (index) => tracker.start(index));
  await fake.allHeld;
  const heapInFlight = await settledHeapUsed(gc);
  const readAfterMs = performance.now() - started;
  const release = fake.held.splice(0);
  await inBatches(release.length, BATCH, (index) => release[index]?.());
  await tracker.allEnded();
  const { settled, problems } = await tracker.problems(fake);
  return { settled, problems, heapPerPollBytes: (heapInFlight - heapBefore) / count, readAfterMs };
}

export interface StallResult {
  readonly settled: number;
  readonly problems: readonly string[];
  readonly checks: number;
  readonly wallMs: number;
  readonly cpuPerCheckUs: number;
  readonly maxStallMs: number;
  readonly p99StallMs: number;
}

/**
 * A realistic run: polls started in a ramp (`RAMP_PER_MS` per ms, like tills starting independently), the
 * poll's default schedule, collections settling at check 1–3 (seeded), the fake answering in a setImmediate.
 */
export async function stallRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<StallResult> {
  const { fake, tracker } = setUp(makePoll, count, seed, [1, 3], 'next turn');
  await settledHeapUsed(gc); // Start clean: no garbage of earlier runs collected during this one.
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  const cpuBefore = process.cpuUsage();
  stalls.enable();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const due = Math.min(count, Math.floor((performance.now() - started) * RAMP_PER_MS));
      while (next < due) tracker.start(next++);
      if (next < count) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await tracker.allEnded();
  const wallMs = performance.now() - started;
  stalls.disable();
  const cpu = process.cpuUsage(cpuBefore);
  const { settled, problems } = await tracker.problems(fake);
  return {
    settled,
    problems,
    checks: fake.checks,
    wallMs,
    cpuPerCheckUs: (cpu.user + cpu.system) / fake.checks,
    // As recorded: the histogram holds the intervals between its 10 ms ticks, so a stall of S ms reads as S to S + 10 ms.
    maxStallMs: stalls.max / 1e6,
    p99StallMs: stalls.percentile(99) / 1e6,
  };
}
