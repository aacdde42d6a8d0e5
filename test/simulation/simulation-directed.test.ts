/**
 * Directed worlds: plans given explicitly (world.ts's `quietPlan`, then what the world has), which keep their meaning
 * when the draws of `drawWorld` change, unlike a quoted seed.
 *
 * Clock faults under a watch: one till whose pushes never take effect while faults last (503 before anything is
 * committed), so its record ends in a 404 and a `not-sent` verdict; a clock watcher on each of its sending writes; just
 * before the record is old enough a clock steps under the watcher (clock-faults.ts). Each measure of the record's age
 * is judged alone (journal.ts, `WATCH-MEASURE`, `JOURNAL-MEASURE`), and the verdict bound in true time.
 */
import { describe, expect, it } from 'vitest';
import type { ClockFault } from './clock-faults.js';
import { T0 } from './scheduler.js';
import { HEALTHY } from './service.js';
import { runSimulation } from './sim.js';
import { quietPlan, type WorldPlan } from './world.js';

function clockWorld(seed: number, fault: ClockFault): WorldPlan {
  const quiet = quietPlan(seed);
  return {
    ...quiet,
    faults: { ...HEALTHY, failBefore: 1 },
    tills: [
      {
        name: 'till0',
        sales: [{ id: 1, amount: 10 }],
        settings: { timeoutMs: 5_000, maxRetries: 0 },
        clock: { offset: 60_000, drift: 0 },
        at: T0,
      },
    ],
    directed: { ...quiet.directed, clockWatchers: 1, clockFault: fault },
  };
}

describe('directed clock faults', () => {
  it.each<ClockFault>(['journal ahead', 'both ahead', 'journal behind'])(
    'a step of the clocks (%s) under a decider holding its watch never brings a not-sent verdict early',
    async (fault) => {
      for (const seed of [1, 2, 3]) {
        const result = await runSimulation({ seed, plan: clockWorld(seed, fault) });
        expect(result.violations, `seed ${seed}`).toEqual([]);
        expect(result.probes.get(`clock stepped under a watch (${fault})`) ?? 0, `seed ${seed}`).toBeGreaterThan(0);
        expect(result.probes.get(`clock watcher (${fault}) climbed its ladder`) ?? 0, `seed ${seed}`).toBeGreaterThan(0);
      }
    },
    120_000,
  );

  it('prints the plan it ran, not the seed’s draws', async () => {
    const result = await runSimulation({ seed: 1, plan: clockWorld(1, 'journal ahead') });
    expect(JSON.parse(result.world)).toMatchObject({
      tills: [{ name: 'till0', settings: { timeoutMs: 5_000, maxRetries: 0 } }],
      workers: [],
    });
  });
});

/**
 * `duplicateReferences: 'refused'` is safe only for a service that refuses a second create of a reference: one till
 * whose pushes are committed and then answered 503 (the outcome unknown), so its client sends the same create again
 * at once. Where the service refuses duplicates, the resend's duplicate answer settles it; where the service stores
 * them, the same world charges the sale twice (the docs' precondition, shown).
 */
function resendWorld(seed: number, serviceRefuses: boolean): WorldPlan {
  const quiet = quietPlan(seed);
  return {
    ...quiet,
    faults: { ...HEALTHY, dedupe: serviceRefuses, failAfterCommit: 1 },
    duplicatesRefused: true,
    // A key that answers at once: every attempt leaves.
    slowKeys: false,
    tills: [
      {
        name: 'till0',
        sales: [{ id: 1, amount: 10 }],
        settings: { timeoutMs: 5_000, maxRetries: 1 },
        clock: { offset: 0, drift: 0 },
        at: T0,
      },
    ],
  };
}

describe("the duplicate-refusing mode's precondition", () => {
  it('a service that refuses duplicates: the resend is answered, one collection, every invariant holds', async () => {
    for (const seed of [1, 2, 3]) {
      const result = await runSimulation({ seed, plan: resendWorld(seed, true) });
      expect(result.violations, `seed ${seed}`).toEqual([]);
      expect(result.probes.get('duplicate refused') ?? 0, `seed ${seed}`).toBeGreaterThan(0);
      expect(result.stats.collections, `seed ${seed}`).toBe(1);
    }
  });

  it("an integrator claiming 'refused' for a service that stores duplicates: the world fails 'never two collections'", async () => {
    for (const seed of [1, 2, 3]) {
      const result = await runSimulation({ seed, plan: resendWorld(seed, false) });
      expect(
        result.violations.some((violation) => violation.startsWith('DOUBLE: sale 1 has 2 collections')),
        `seed ${seed}`,
      ).toBe(true);
    }
  });
});
