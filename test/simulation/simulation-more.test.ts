/**
 * The second half of the simulation's seeds (see simulation.test.ts), a file of its own so vitest runs it on the
 * other core. When a seed is replayed (`SIM_SEED`), it checks instead that the seed replays exactly.
 */
import { describe, expect, it } from 'vitest';
import { runSimulation } from './sim.js';
import { defineSweep } from './suite.js';

const SEEDS = Number(process.env.SIM_SEEDS ?? 2_000);
const replaySeed = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);

if (replaySeed === undefined)
  describe('the public surface under deterministic simulation (second half of the seeds)', () => {
    defineSweep(Math.floor(SEEDS / 2) + 1, SEEDS);
  });
else
  it(`seed ${replaySeed} replays exactly (same trace twice)`, async () => {
    const first = await runSimulation({ seed: replaySeed, trace: true });
    const second = await runSimulation({ seed: replaySeed, trace: true });
    expect(second.trace).toEqual(first.trace);
  });
