/**
 * Directed clock faults: a verdict needs two measures of a record's age (the journal's clock, and the deciding
 * process's monotonic watch), and a slip in one alone hides behind the other unless a world makes them disagree while
 * a decider holds the record. A clock watcher is a process that reads a record right after the write that lets a push
 * leave (its watch starts), follows the record's newest version, and a few seconds before that version is old enough
 * has a clock stepped under it:
 * - `journal ahead`: the journal's clock steps forward (the journal says "old" at once; only the watch, restarted by
 *   every newer version and never on a wall clock, holds the verdict back);
 * - `both ahead`: the journal's clock and the watcher's own wall clock step forward (a watch on `Date.now()` says
 *   "old" too);
 * - `journal behind`: the journal's clock steps back (only the journal's measure, from the newest version's
 *   `updatedAt` on the journal's own clock, holds the verdict back: one from `createdAt` or from the process's clock
 *   would not).
 * It then runs `recover()` on a ladder of times 0.5–1.5 s apart until the step has passed. The invariants of each
 * measure (journal.ts, `WATCH-MEASURE` and `JOURNAL-MEASURE`) and the verdict bound judge what it concludes.
 *
 * No vitest import (see scheduler.ts).
 */
import type { PaymentRecord } from '../../src/journal/journal.js';
import { clientFor, pause, recoverOnce, type World } from './processes.js';

/** Which clocks step under a clock watcher. */
export type ClockFault = 'journal ahead' | 'both ahead' | 'journal behind';

/** One clock watcher's plan (drawn before it starts). */
export interface ClockWatch {
  readonly fault: ClockFault;
  /** How long before the newest version is old enough the clock steps (ms). */
  readonly leadMs: number;
  /** The size of the step (ms, positive: its direction is the fault's). */
  readonly stepMs: number;
  /** The watcher's own clock offset (ms). */
  readonly offset: number;
  /** Draws for the ladder's spacing. */
  readonly random: () => number;
}

/** The most rungs a watcher climbs (a record rewritten again and again is left to the other deciders). */
const MAX_RUNGS = 40;

/** Draws a clock watcher's plan from `random` (its fault too, unless a directed test names it). */
export function drawClockWatch(random: () => number, named?: ClockFault): ClockWatch {
  const faults: readonly ClockFault[] = ['journal ahead', 'both ahead', 'journal behind'];
  const fault = named ?? (faults[Math.floor(random() * faults.length)] as ClockFault);
  const leadMs = 2_000 + random() * 4_000;
  const stepMs = fault === 'journal behind' ? 2_000 + random() * 30_000 : leadMs + random() * 60_000;
  return { fault, leadMs, stepMs, offset: Math.round((random() * 2 - 1) * 5 * 60_000), random };
}

/** Spawns a clock watcher of `record` (just written with `initiating`); `healed()` is true once the faults stop. */
export function watchClocks(world: World, record: PaymentRecord, plan: ClockWatch, name: string, healed: () => boolean): void {
  const { sim, journal, ledger } = world;
  const referenceId = record.referenceId;
  const grace = journal.minGraceMs;
  sim.spawn(
    name,
    sim.now + plan.random() * 50,
    async (p) => {
      const client = clientFor(world, p, { timeoutMs: 30_000, maxRetries: 0 }, { plainKey: true });
      await recoverOnce(world, client, grace);
      let stepped = false;
      let until = Number.POSITIVE_INFINITY;
      for (let rung = 0; rung < MAX_RUNGS && journal.open.has(referenceId) && sim.now < until; rung++) {
        const last = journal.lastWrite.get(referenceId);
        const window = last === undefined ? undefined : journal.windowOf(referenceId);
        if (last === undefined || window === undefined || !Number.isFinite(window)) return;
        const oldEnoughAt = last.at + window + grace;
        if (!stepped) {
          await pause(oldEnoughAt - plan.leadMs - sim.now);
          if (healed()) return;
          step(world, p, plan);
          stepped = true;
          until = oldEnoughAt + (plan.fault === 'journal behind' ? plan.stepMs : 0) + 3_000;
        } else await pause(500 + plan.random() * 1_000);
        await recoverOnce(world, client, grace);
      }
      ledger.probe(`clock watcher (${plan.fault}) climbed its ladder`);
    },
    { offset: plan.offset },
  );
}

function step(world: World, proc: Parameters<typeof clientFor>[1], plan: ClockWatch): void {
  const { sim, journal, ledger } = world;
  const size = plan.fault === 'journal behind' ? -plan.stepMs : plan.stepMs;
  journal.offset += size;
  sim.log(`JOURNAL CLOCK ${size > 0 ? '+' : ''}${Math.round(size)} ms under ${proc.name}'s watch`);
  if (plan.fault === 'both ahead') {
    proc.offset += plan.stepMs;
    sim.log(`CLOCK ${proc.name} +${Math.round(plan.stepMs)} ms`);
  }
  ledger.probe(`clock stepped under a watch (${plan.fault})`);
}
