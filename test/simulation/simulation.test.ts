/**
 * The deterministic simulation of the payment journal (see `sim.ts` and docs/reliability.md, "The deterministic
 * simulation"): 10 000 seeds of tills, workers, status checks and `recover()` calls over one journal and one faulty
 * service, crashes at any step, clocks minutes apart; the contract's invariants checked after every run.
 *
 * Replay one seed with its trace: `SIM_SEED=<seed> [SIM_MUTANT=<mutant>] npx vitest run test/simulation`.
 * More seeds: `SIM_SEEDS=100000 npx vitest run test/simulation`.
 */
import { describe, expect, it } from 'vitest';
import { MUTANTS, type Mutant, replayCommand, runSimulation, type SimulationResult } from './sim.js';

const replaySeed = process.env.SIM_SEED === undefined ? undefined : Number(process.env.SIM_SEED);
const replayMutant = (process.env.SIM_MUTANT || undefined) as Mutant | undefined;
const SEEDS = Number(process.env.SIM_SEEDS ?? 10_000);
const BATCHES = 4;

/** Why a run failed, with the one command that replays it and the end of its trace (the run again, traced). */
async function explain(result: SimulationResult, mutant?: Mutant): Promise<string> {
  const traced = await runSimulation({ seed: result.seed, mutant, trace: true });
  return [
    `seed ${result.seed} broke the invariants:`,
    ...result.violations.map((violation) => `  ${violation}`),
    `replay: ${replayCommand(result.seed, mutant)}`,
    'last steps of the trace:',
    ...traced.trace.slice(-60).map((line) => `  ${line}`),
  ].join('\n');
}

// With SIM_SEED, the file replays that one seed with its whole trace instead of running the sweep.
if (replaySeed !== undefined) {
  describe('replay of one seed', () => {
    it(`seed ${replaySeed}${replayMutant ? ` (${replayMutant})` : ''}`, async () => {
      const result = await runSimulation({ seed: replaySeed, mutant: replayMutant, trace: true });
      console.log(result.trace.join('\n'));
      console.log(result.stats, result.violations);
      expect(result.violations).toEqual([]);
    });
  });
} else
  describe('the payment journal under deterministic simulation', () => {
    for (let batch = 0; batch < BATCHES; batch++) {
      const from = 1 + Math.floor((SEEDS * batch) / BATCHES);
      const to = Math.floor((SEEDS * (batch + 1)) / BATCHES);
      it(`seeds ${from}–${to}: at most one collection per sale, every collection recorded, no final state contradicts the service`, async () => {
        let steps = 0;
        for (let seed = from; seed <= to; seed++) {
          const result = await runSimulation({ seed });
          steps += result.steps;
          if (result.violations.length > 0) expect.fail(await explain(result));
        }
        expect(steps).toBeGreaterThan((to - from) * 20);
      }, 120_000);
    }

    it('replays a seed exactly (same steps, same trace)', async () => {
      const first = await runSimulation({ seed: 4242, trace: true });
      const second = await runSimulation({ seed: 4242, trace: true });
      expect(second.trace).toEqual(first.trace);
      expect(first.trace.length).toBeGreaterThan(20);
    });

    /**
     * A bug this simulation found in the first version of the state machine (seed 296, about 1 seed in 100): one till,
     * no crash, no clock skew. The push commits and the service answers 503; createOnce waited its backoff, looked the
     * reference up, the status read lagged behind the commit and answered 404, and the resend created a second
     * collection on a service that does not deduplicate by reference. Since then a lookup that does not see the
     * collection ends the call with `UnknownOutcomeError`; the journal's rules decide after the window.
     */
    it('regression, seed 296: no resend inside one initiate call after a lagging 404 (it doubled the collection)', async () => {
      const result = await runSimulation({ seed: 296 });
      expect(result.violations).toEqual([]);
      expect(result.stats).toBeDefined();
    });

    it("the issue's case 1 under the new rules: a till killed 1 s into a 15 s push, recover() with defaults, no double", async () => {
      for (let seed = 1; seed <= 200; seed++) {
        const result = await runSimulation({ seed, mutant: 'case-1-new' });
        if (result.violations.length > 0) expect.fail(await explain(result, 'case-1-new'));
      }
    });

    describe('finds the holes of the old rules (mutants)', () => {
      const limits: Record<string, number> = { unconditional: 5_000, 'reader-clock': 500, 'no-window': 500, 'case-1': 10 };
      for (const mutant of MUTANTS) {
        it(`${mutant}: a double or a lost payment within ${limits[mutant]} seeds`, async () => {
          let found: SimulationResult | undefined;
          for (let seed = 1; seed <= (limits[mutant] ?? 500) && found === undefined; seed++) {
            const result = await runSimulation({ seed, mutant });
            if (result.violations.length > 0) found = result;
          }
          console.log(`mutant ${mutant}: first violation at seed ${found?.seed ?? 'none'}: ${found?.violations[0] ?? ''}`);
          expect(found?.violations.some((violation) => /^(DOUBLE|LOST|CONTRADICTION)/.test(violation))).toBe(true);
        }, 60_000);
      }
    });
  });
