/**
 * `npm run bench -- simulation`: the deterministic simulation of the public surface (test/simulation/sim.ts: real
 * `CollectionsClient`s in virtual time) run over consecutive seeds until 200 000 scheduler steps, printing steps and
 * seeds per second against a baseline of the same run: one bare scheduler hand-over (a `setImmediate` round trip,
 * what every step waits for at least). `node bench/simulation.ts [steps] [firstSeed]` runs it alone.
 *
 * It runs the SDK's sources under Node's type stripping; those import each other as `.js`, so a resolve hook maps a
 * missing `.js` to its `.ts` (as bench/chaos.ts does).
 */
import './source-imports.ts';
import { passFail, printTable } from './harness.ts';

const DEFAULT_STEPS = 200_000;

/** Runs seeds from `firstSeed` until `steps` scheduler steps; resolves with the figures. */
export async function runSimulationBenchmark(steps = DEFAULT_STEPS, firstSeed = 1) {
  const { runSimulation } = await import('../test/simulation/sim.ts');
  let done = 0;
  let seeds = 0;
  let violating = 0;
  let simulatedMs = 0;
  const started = performance.now();
  for (let seed = firstSeed; done < steps; seed++) {
    const result = await runSimulation({ seed });
    done += result.steps;
    seeds++;
    simulatedMs += result.stats.simulatedMs;
    if (result.violations.length > 0) violating++;
  }
  const elapsedMs = performance.now() - started;
  // The baseline: the bare hand-over every step pays (the scheduler waits for the resumed process to block again).
  const handOvers = 200_000;
  const baseStarted = performance.now();
  for (let i = 0; i < handOvers; i++) await new Promise((resolve) => setImmediate(resolve));
  const handOverMs = (performance.now() - baseStarted) / handOvers;
  return { steps: done, seeds, violating, elapsedMs, simulatedMs, stepMs: elapsedMs / done, handOverMs };
}

/** The registry's entry (`npm run bench -- simulation`): 200 000 steps from seed 1 (the built package is not used). */
export async function run(): Promise<void> {
  await report(DEFAULT_STEPS, 1);
}

async function report(steps: number, firstSeed: number): Promise<void> {
  const figures = await runSimulationBenchmark(steps, firstSeed);
  const perSecond = (figures.steps / figures.elapsedMs) * 1000;
  printTable(
    `Deterministic simulation: ${figures.steps} steps over ${figures.seeds} seeds (${(figures.simulatedMs / 3_600_000).toFixed(0)} simulated hours)`,
    ['steps per second', 'seeds per second', 'µs per step', 'µs per bare hand-over (baseline)', 'step / hand-over', 'seeds violating'],
    [
      [
        Math.round(perSecond).toLocaleString('en'),
        Math.round((figures.seeds / figures.elapsedMs) * 1000).toLocaleString('en'),
        (figures.stepMs * 1000).toFixed(2),
        (figures.handOverMs * 1000).toFixed(2),
        `${(figures.stepMs / figures.handOverMs).toFixed(1)}×`,
        String(figures.violating),
      ],
    ],
  );
  console.log(`\nNo seed breaks the invariants: ${passFail(figures.violating === 0)}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [steps, seed] = process.argv.slice(2).map(Number);
  await report(Number.isInteger(steps) ? (steps as number) : DEFAULT_STEPS, Number.isInteger(seed) ? (seed as number) : 1);
}
