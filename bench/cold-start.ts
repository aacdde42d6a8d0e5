/**
 * (d) Cold start: the time a whole new Node process takes to load the main entry, against openai-node, stripe and
 * plain ky, over a `node -e 0` process of the same round. ESM (`import()`) and CommonJS (`require`) separately.
 * Target: the SDK at or below openai-node, per module system.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type BenchSdk, median, passFail, printTable } from './harness.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = 7;

interface Variant {
  readonly name: string;
  /** The `-e` program; `undefined` for the empty baseline. */
  readonly esm: string | undefined;
  readonly cjs: string | undefined;
}

/** What each process loads: the package by name, resolved from the repository (the SDK by self-reference). */
const VARIANTS: readonly Variant[] = [
  { name: 'node -e 0 (baseline)', esm: '0', cjs: '0' },
  { name: 'tap-collections-sdk', esm: "await import('tap-collections-sdk')", cjs: "require('tap-collections-sdk')" },
  { name: 'openai', esm: "await import('openai')", cjs: "require('openai')" },
  { name: 'stripe', esm: "await import('stripe')", cjs: "require('stripe')" },
  { name: 'ky alone', esm: "await import('ky')", cjs: "require('ky')" },
  { name: 'zod/mini alone', esm: "await import('zod/mini')", cjs: "require('zod/mini')" },
];

/** What one process reports at the end of its load, in ms since it started: wall time and CPU time (user + system). */
interface Reading {
  readonly wall: number;
  readonly cpu: number;
}

/**
 * One new process, timed by itself: `performance.now()` (from the process's start) and `process.cpuUsage()` at the
 * end of the load. Spawning and exiting are left out: on a shared machine they are mostly scheduling noise. CPU time is
 * the steadier figure there (another process's work does not count), wall time the one a user feels.
 */
function timeProcess(args: readonly string[]): Promise<Reading> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited ${code}`));
      const [wall, cpu] = output.split(' ').map(Number);
      resolve({ wall: wall ?? Number.NaN, cpu: cpu ?? Number.NaN });
    });
  });
}

const REPORT = ';const u=process.cpuUsage();process.stdout.write(performance.now()+" "+(u.user+u.system)/1000)';
const argsFor = (mode: Mode, program: string) => [mode === 'esm' ? '--input-type=module' : '--input-type=commonjs', '-e', program + REPORT];

type Mode = 'esm' | 'cjs';
type Clock = keyof Reading;

/** Runs (d) and prints its table. */
export async function run(_sdk: BenchSdk): Promise<void> {
  const modes: readonly Mode[] = ['esm', 'cjs'];
  const clocks: readonly Clock[] = ['cpu', 'wall'];
  // readings[mode][variant][round]
  const readings = new Map(modes.map((mode) => [mode, VARIANTS.map(() => [] as Reading[])]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of modes) {
      // Rotate the order each round: no variant always runs first, or right after the same neighbour.
      for (const offset of VARIANTS.keys()) {
        const index = (offset + round) % VARIANTS.length;
        const program = VARIANTS[index]?.[mode];
        if (program !== undefined) readings.get(mode)?.[index]?.push(await timeProcess(argsFor(mode, program)));
      }
    }
  }
  /** Per round, the variant's reading minus the baseline's of the same round and mode; the median over rounds. */
  const overBaseline = (mode: Mode, index: number, clock: Clock) => {
    const rows = readings.get(mode) ?? [];
    return median((rows[index] ?? []).map((reading, round) => reading[clock] - (rows[0]?.[round]?.[clock] ?? Number.NaN)));
  };
  const SDK = 1;
  const OPENAI = 2;
  const columns = modes.flatMap((mode) => clocks.map((clock) => ({ mode, clock })));
  const rows = VARIANTS.map((variant, index) => [
    variant.name,
    ...columns.map(({ mode, clock }) => {
      if (index === 0) return median((readings.get(mode)?.[0] ?? []).map((reading) => reading[clock])).toFixed(1);
      const mine = overBaseline(mode, index, clock);
      return `+${mine.toFixed(1)} (${(mine / overBaseline(mode, OPENAI, clock)).toFixed(2)}×)`;
    }),
  ]);
  printTable(
    '(d) Cold start: a new `node` process that loads the package, read by the process itself at the end of the load (CPU:\n' +
      '    process.cpuUsage, user + system; wall: performance.now(), from the process start; spawn and exit left out), minus a\n' +
      `    \`node -e 0\` process of the same round (the first row: its own median). ${ROUNDS} rounds, every variant once per round and\n` +
      '    module system, order rotated; medians over rounds; in brackets: the ratio to openai-node. ESM: `--input-type=module -e\n' +
      '    "await import(name)"`; CJS: `-e "require(name)"`. The SDK is loaded by its package name (the published entry points).\n' +
      '    Target: the SDK at or below openai-node. CPU is the steadier clock on a shared machine; both are printed.',
    ['package', ...columns.map(({ mode, clock }) => `${mode.toUpperCase()} ${clock} ms`)],
    rows,
  );
  const verdicts = columns.map(({ mode, clock }) => {
    const sdk = overBaseline(mode, SDK, clock);
    const openai = overBaseline(mode, OPENAI, clock);
    return `${mode.toUpperCase()} ${clock} +${sdk.toFixed(1)} vs +${openai.toFixed(1)} ms ${passFail(sdk <= openai)}`;
  });
  console.log(`\nCold start, SDK vs openai-node (target ≤): ${verdicts.join('; ')}`);
}
