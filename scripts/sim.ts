/**
 * `npm run sim -- --seed N [--journal sqlite|postgres]`: replays one seed; prints its plan (world.ts's `drawWorld`),
 * its trace and its violations. Exits 1 when it breaks an invariant.
 *
 * `npm run sim -- --seeds N [--from S] [--journal sqlite|postgres] [--probes]`: a long sweep of the deterministic simulation (test/simulation) on every
 * core, one worker thread per core, each running its share of the seeds. Prints seeds and steps per second, the
 * rare paths never reached, and for the first failing seed its world, a shrunk trace and the replay command.
 * Exits 1 when a seed breaks an invariant.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import '../bench/source-imports.ts';

interface Share {
  readonly from: number;
  readonly to: number;
}

const args = process.argv.slice(2);
if (isMainThread && args.includes('--seed')) {
  if (args.includes('--journal')) process.env.SIM_JOURNAL = args[args.indexOf('--journal') + 1];
  const seed = Number(args[args.indexOf('--seed') + 1]);
  if (!Number.isSafeInteger(seed)) throw new Error('--seed takes a whole number');
  const { runSimulation, replayCommand } = await import('../test/simulation/sim.ts');
  const result = await runSimulation({ seed, trace: true });
  console.log(result.trace.join('\n'));
  console.log(`plan of seed ${seed}: ${result.world}`);
  console.log(`stats: ${JSON.stringify(result.stats)}`);
  console.log(result.violations.length === 0 ? 'no violation' : `violations:\n  ${result.violations.join('\n  ')}`);
  console.log(
    `replay: npm run sim -- --seed ${seed}${result.store === 'memory' ? '' : ` --journal ${result.store}`} (or ${replayCommand(seed, result.store)})`,
  );
  if (result.violations.length > 0) process.exitCode = 1;
} else if (isMainThread) {
  const option = (name: string, fallback: number) => {
    const at = args.indexOf(name);
    return at === -1 ? fallback : Number(args[at + 1]);
  };
  const seeds = option('--seeds', 10_000);
  // A variant's store (sqlite, postgres): every worker thread (its environment is a copy of this one) runs the worlds on it.
  if (args.includes('--journal')) process.env.SIM_JOURNAL = args[args.indexOf('--journal') + 1];
  const first = option('--from', 1);
  const threads = Math.min(availableParallelism(), seeds);
  const started = performance.now();
  const shares: Share[] = Array.from({ length: threads }, (_, i) => ({
    from: first + Math.floor((seeds * i) / threads),
    to: first + Math.floor((seeds * (i + 1)) / threads) - 1,
  }));
  const results = await Promise.all(
    shares.map(
      (share) =>
        new Promise<{ steps: number; contendedSteps: number; failed: number[]; probes: [string, number][] }>((resolve, reject) => {
          const worker = new Worker(new URL(import.meta.url), { workerData: share });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  const steps = results.reduce((sum, r) => sum + r.steps, 0);
  const probes = new Map<string, number>();
  for (const r of results) for (const [name, count] of r.probes) probes.set(name, (probes.get(name) ?? 0) + count);
  const failed = results.flatMap((r) => r.failed).sort((a, b) => a - b);
  const { explain, missingProbes } = await import('../test/simulation/runner.ts');
  const { runSimulation } = await import('../test/simulation/sim.ts');
  console.log(
    `${seeds} seeds from ${first} on ${threads} threads in ${seconds.toFixed(1)} s: ${Math.round(seeds / seconds)} seeds/s, ${Math.round(steps / seconds)} steps/s`,
  );
  console.log(`rare paths never reached: ${missingProbes(probes).join(', ') || 'none'}`);
  // `--probes`: how often every counted path was reached (a directed generator's yield, a rare path's rarity).
  if (args.includes('--probes')) for (const [name, count] of [...probes].sort()) console.log(`  ${count}\t${name}`);
  if (failed.length > 0) {
    console.log(`${failed.length} seeds broke the invariants: ${failed.slice(0, 20).join(', ')}`);
    console.log(await explain(await runSimulation({ seed: failed[0] as number })));
    process.exitCode = 1;
  }
} else {
  const { sweep } = await import('../test/simulation/runner.ts');
  const { from, to } = workerData as Share;
  const result = await sweep(from, to, Number.POSITIVE_INFINITY);
  parentPort?.postMessage({
    steps: result.steps,
    contendedSteps: result.contendedSteps,
    failed: result.failures.map((failure) => failure.seed),
    probes: [...result.probes],
  });
}
