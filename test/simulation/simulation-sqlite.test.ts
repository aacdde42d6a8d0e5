/**
 * The SQLite variant of the simulation: the same worlds (the same draws) with the journal a real `SqliteJournal` on a
 * private in-memory database instead of `MemoryJournal`. Its seeds hold the same invariants, and for the first of
 * them the whole trace is the one the memory store gives: the two stores decide every write, lease and budget alike
 * under the same faults, crashes and clock steps (a store that differed anywhere would change the trace).
 *
 * More seeds: `SIM_SQLITE_SEEDS=2000 npx vitest run test/simulation/simulation-sqlite.test.ts`; a long sweep on every
 * core: `npm run sim -- --seeds N --journal sqlite`; one seed: `SIM_JOURNAL=sqlite SIM_SEED=<seed> npx vitest run
 * test/simulation`.
 */
import { describe, expect, it } from 'vitest';
import { explain, sweep } from './runner.js';
import { runSimulation } from './sim.js';

const SEEDS = Number(process.env.SIM_SQLITE_SEEDS ?? 200);
const SAME_TRACE_SEEDS = 15;

if (process.env.SIM_SEED === undefined)
  describe('the simulation on the SQLite store', () => {
    it(`seeds 1–${SEEDS} on SqliteJournal: callers told the truth, one collection per sale, every payment final once faults stop`, async () => {
      const result = await sweep(1, SEEDS, 1, 'sqlite');
      const failure = result.failures[0];
      if (failure !== undefined) expect.fail(await explain(failure));
      expect(result.seeds).toBe(SEEDS);
      // The shared budget, leases and lost acknowledgements ran on it too.
      expect(result.probes.get('takeBudget failed') ?? 0).toBeGreaterThan(0);
      expect(result.probes.get('compare-and-set lost') ?? 0).toBeGreaterThan(0);
    }, 600_000);

    it(`seeds 1–${SAME_TRACE_SEEDS}: the same trace on SqliteJournal as on MemoryJournal`, async () => {
      for (let seed = 1; seed <= SAME_TRACE_SEEDS; seed++) {
        const memory = await runSimulation({ seed, store: 'memory', trace: true });
        const sqlite = await runSimulation({ seed, store: 'sqlite', trace: true });
        expect(sqlite.store).toBe('sqlite');
        expect(sqlite.world).toBe(memory.world.replace('"store":"memory"', '"store":"sqlite"'));
        expect(sqlite.trace, `seed ${seed}`).toEqual(memory.trace);
        expect(memory.trace.length).toBeGreaterThan(20);
      }
    }, 600_000);
  });
