/**
 * The deterministic simulation of the public surface (see `sim.ts` and docs/reliability.md, "The deterministic
 * simulation"): real `CollectionsClient`s in virtual time over one journal and one faulty service; the invariants
 * checked on what callers were told, and liveness once the faults stop.
 *
 * Replay one seed with its trace: `SIM_SEED=<seed> npx vitest run test/simulation`.
 * Another count: `SIM_SEEDS=20000 npx vitest run test/simulation`; long sweeps on every core: `npm run sim -- --seeds N`.
 */
import { describe, expect, it } from 'vitest';
import { explain, missingProbes, sweep } from './runner.js';
import { runSimulation } from './sim.js';

const replaySeed = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);
/** The seeds `npm test` runs (about a minute on two cores; docs/performance.md). */
const SEEDS = Number(process.env.SIM_SEEDS ?? 2_000);
const BATCHES = 4;

if (replaySeed !== undefined) {
  describe('replay of one seed', () => {
    it(`seed ${replaySeed}`, async () => {
      const result = await runSimulation({ seed: replaySeed, trace: true });
      console.log(result.trace.join('\n'));
      console.log(result.world, result.stats, result.violations);
      expect(result.violations).toEqual([]);
    });
  });
} else
  describe('the public surface under deterministic simulation', () => {
    const probes = new Map<string, number>();
    for (let batch = 0; batch < BATCHES; batch++) {
      const from = 1 + Math.floor((SEEDS * batch) / BATCHES);
      const to = Math.floor((SEEDS * (batch + 1)) / BATCHES);
      it(`seeds ${from}–${to}: callers told the truth, one collection per sale, every payment final once faults stop`, async () => {
        const result = await sweep(from, to);
        for (const [name, count] of result.probes) probes.set(name, (probes.get(name) ?? 0) + count);
        const failure = result.failures[0];
        if (failure !== undefined) expect.fail(await explain(failure));
        // Processes run at the same time: several are runnable at many steps.
        expect(result.contendedSteps).toBeGreaterThan(result.steps / 20);
      }, 300_000);
    }

    it('reaches every rare path at least once over the sweep (coverage feedback)', () => {
      expect(missingProbes(probes)).toEqual([]);
    });

    it('replays a seed exactly (same steps, same trace)', async () => {
      const first = await runSimulation({ seed: 4242, trace: true });
      const second = await runSimulation({ seed: 4242, trace: true });
      expect(second.trace).toEqual(first.trace);
      expect(first.trace.length).toBeGreaterThan(20);
    });
  });
