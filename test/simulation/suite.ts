/**
 * The sweep as vitest tests: seeds `from`..`to` in batches (`SIM_BATCHES`, default 2), then the rare paths they must
 * have reached. Two test files share the default seeds so vitest runs them on two cores. The mutation set runs many
 * small batches: a batch stops at its first failing seed and Stryker at its first failing test, so a mutant caught
 * early costs one small batch, not half the sweep.
 */
import { expect, it } from 'vitest';
import { explain, missingProbes, sweep } from './runner.js';

export function defineSweep(from: number, to: number, batches = Number(process.env.SIM_BATCHES ?? 2)): void {
  const probes = new Map<string, number>();
  for (let batch = 0; batch < batches; batch++) {
    const first = from + Math.floor(((to - from + 1) * batch) / batches);
    const last = from + Math.floor(((to - from + 1) * (batch + 1)) / batches) - 1;
    it(`seeds ${first}–${last}: callers told the truth, one collection per sale, every payment final once faults stop`, async () => {
      const result = await sweep(first, last);
      for (const [name, count] of result.probes) probes.set(name, (probes.get(name) ?? 0) + count);
      const failure = result.failures[0];
      if (failure !== undefined) expect.fail(await explain(failure));
      // Processes run at the same time: several are runnable at many steps.
      expect(result.contendedSteps).toBeGreaterThan(result.steps / 20);
    }, 600_000);
  }
  // The mutation set's shorter sweep (vitest.mutation.config.ts) judges the invariants only: which seeds reach a rare
  // path moves with every change of the world's draws, and `npm test`'s 2 000 seeds hold that coverage.
  if (process.env.SIM_RARE_PATHS === 'off') return;
  it(`seeds ${from}–${to} reached every rare path at least once (coverage feedback)`, () => {
    expect(missingProbes(probes)).toEqual([]);
  });
}
