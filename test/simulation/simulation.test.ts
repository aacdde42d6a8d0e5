/**
 * The deterministic simulation of the public surface (see `sim.ts` and docs/internals/simulation.md, "How it
 * works"): real `CollectionsClient`s in virtual time over one journal and one faulty service; the invariants
 * checked on what callers were told, and liveness once the faults stop. This file runs the first half of the
 * seeds (simulation-more.test.ts the second, on the other core).
 *
 * Replay one seed with its trace: `SIM_SEED=<seed> npx vitest run test/simulation`.
 * Another count: `SIM_SEEDS=20000 npx vitest run test/simulation`; long sweeps on every core: `npm run sim -- --seeds N`.
 */
import { describe, expect, it } from 'vitest';
import { runSimulation } from './sim.js';
import { defineSweep } from './suite.js';

const replaySeed = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);
/** The seeds `npm test` runs, both files together (docs/internals/performance.md has their time). */
const SEEDS = Number(process.env.SIM_SEEDS ?? 2_000);

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
  describe('the public surface under deterministic simulation (first half of the seeds)', () => {
    defineSweep(1, Math.floor(SEEDS / 2));

    it('replays a seed exactly (same steps, same trace)', async () => {
      const first = await runSimulation({ seed: 4242, trace: true });
      const second = await runSimulation({ seed: 4242, trace: true });
      expect(second.trace).toEqual(first.trace);
      expect(first.trace.length).toBeGreaterThan(20);
    });
  });
