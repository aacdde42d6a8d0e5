/**
 * `npm run bench`: the benchmarks of the BUILT package (`dist/index.js`, what ships), every one in the order of
 * {@link BENCHMARKS}; `npm run bench -- <name> [<name>…]` runs only those named (e.g. `npm run bench -- polling`).
 *
 * The machine is shared and noisy: every figure is reported against a baseline measured in the same run, variants
 * alternate in rounds, and medians are taken. Targets print PASS/FAIL; the exit code stays 0 (1 only for an unknown name).
 *
 * ## What a benchmark module exports
 *
 * A benchmark is one file, `bench/<name>.ts`, that exports
 *
 * ```ts
 * export async function run(sdk: BenchSdk): Promise<void> // or a synchronous `void`
 * ```
 *
 * which measures, compares against a baseline of the same run, and prints its own report (`printTable`, `passFail`
 * and the statistics are in `harness.ts`; `spawnBenchChild` runs a part in a child process). `sdk` is the built
 * package, loaded once. To add one, add its line to {@link BENCHMARKS}: nothing else needs to change.
 */
import { type BenchSdk, loadSdk } from './harness.ts';

/** A benchmark module, as described above. */
export interface BenchmarkModule {
  /** Measures and prints the report. */
  run(sdk: BenchSdk): Promise<void> | void;
}

/** Every benchmark by name, in the order `npm run bench` runs them; each loaded only when run. */
const BENCHMARKS: Record<string, () => Promise<BenchmarkModule>> = {
  overhead: () => import('./overhead.ts'),
  polling: () => import('./polling.ts'),
  scale: () => import('./scale.ts'),
  worker: () => import('./worker.ts'),
  fleet: () => import('./fleet.ts'),
  'fleet-budget': () => import('./fleet-budget.ts'),
  'cold-start': () => import('./cold-start.ts'),
  calls: () => import('./calls.ts'),
  clients: () => import('./clients.ts'),
  bundle: () => import('./bundle.ts'),
  'in-flight': () => import('./in-flight.ts'),
  journal: () => import('./journal.ts'),
  contradictions: () => import('./contradictions.ts'),
  chaos: () => import('./chaos.ts'),
  'tap-history': () => import('./tap-history.ts'),
  simulation: () => import('./simulation.ts'),
  metrics: () => import('./metrics.ts'),
  cashier: () => import('./cashier.ts'),
};

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  const unknown = requested.filter((name) => !Object.hasOwn(BENCHMARKS, name));
  if (unknown.length > 0) {
    console.error(`Unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}.`);
    process.exitCode = 1;
    return;
  }
  const selected = requested.length > 0 ? requested : Object.keys(BENCHMARKS);

  const started = performance.now();
  const sdk = await loadSdk();
  console.log(`tap-collections-sdk ${sdk.SDK_VERSION} benchmarks (dist/index.js), ${new Date().toISOString()}, Node ${process.version}`);
  console.log('Shared, noisy machine: compare the ratios, not the absolute figures. Targets print PASS/FAIL; the exit code stays 0.');
  for (const name of selected) {
    const benchmark = await BENCHMARKS[name]?.();
    await benchmark?.run(sdk);
  }
  console.log(`\nTotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
