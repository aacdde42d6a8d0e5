/**
 * `npm run sim:slips [-- --only <name>[,<name>…]] [--seeds N] [--journal sqlite|postgres] [--threads T] [--explain]`: makes
 * each slip of the simulation's slip table (test/simulation/slips.ts) in a copy of the project and sweeps the
 * deterministic simulation's seeds from 1 until one breaks an invariant; prints each slip's first failing seed and
 * its first violation. The working tree is never modified: each slip lives only in its copy (the system's temporary
 * directory: src, test, bench, scripts, package.json and the tsconfigs, node_modules linked), removed afterwards.
 *
 * Each slip is swept first up to `max(2 × the seed the table records, 300)`, then, only when nothing failed, on to
 * `--seeds` (default 10 000). Seeds are handed out one at a time to worker threads (default: one per core), and the
 * sweep stops once a seed has failed and every seed below it has passed, so the seed printed is the first. `--explain`
 * also prints the first failing seed's world and shrunk trace. Exits 1 when a slip is not caught within its seeds, or
 * no longer applies (its text is not in its file exactly once: the code moved).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import '../bench/source-imports.ts';

/** A worker's answer for one seed: its first violation, or none. */
interface SeedResult {
  readonly seed: number;
  readonly violation: string | undefined;
}

/** What the main thread asks a worker: run a seed, or explain one (world and shrunk trace). */
type Request = { readonly seed: number } | { readonly explain: number };

/** What is copied for a slip: everything the simulation imports, and the tools that can replay a seed there. */
const COPIED = ['src', 'test', 'bench', 'scripts', 'package.json'];
/** And every `tsconfig*.json` at the project's root. */
const TSCONFIG = /^tsconfig.*\.json$/;

/** A slip's first pass reaches past the seed the table records, and at least this far. */
const FIRST_PASS_MIN_SEEDS = 300;

async function main(): Promise<void> {
  const { SLIPS, applySlip } = await import('../test/simulation/slips.ts');
  const args = process.argv.slice(2);
  const value = (name: string): string | undefined => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args[at + 1];
  };
  const seeds = Number(value('--seeds') ?? 10_000);
  const threads = Number(value('--threads') ?? availableParallelism());
  const journal = value('--journal') ?? 'memory';
  const only = value('--only')?.split(',');
  const explain = args.includes('--explain');
  if (!(Number.isInteger(seeds) && seeds > 0) || !(Number.isInteger(threads) && threads > 0)) {
    throw new Error('--seeds and --threads take a positive whole number');
  }
  if (journal !== 'memory' && journal !== 'sqlite' && journal !== 'postgres')
    throw new Error(`--journal is memory, sqlite or postgres, not ${journal}`);
  const unknown = only?.filter((name) => !SLIPS.some((slip) => slip.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`no slip named ${unknown.join(', ')} (${SLIPS.map((slip) => slip.name).join(', ')})`);
  const chosen = only === undefined ? SLIPS : SLIPS.filter((slip) => only.includes(slip.name));

  const root = fileURLToPath(new URL('../', import.meta.url));
  const rows: string[][] = [];
  let failed = false;
  const started = performance.now();
  for (const slip of chosen) {
    const slipStarted = performance.now();
    const copy = mkdtempSync(join(tmpdir(), `sim-slip-${slip.name}-`));
    const removeCopy = () => rmSync(copy, { recursive: true, force: true });
    const onInterrupt = () => {
      removeCopy();
      process.exit(130);
    };
    process.once('SIGINT', onInterrupt);
    try {
      const tsconfigs = readdirSync(root).filter((entry) => TSCONFIG.test(entry));
      for (const entry of [...COPIED, ...tsconfigs]) cpSync(join(root, entry), join(copy, entry), { recursive: true });
      symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
      let slipped: string;
      try {
        slipped = applySlip(readFileSync(join(copy, slip.file), 'utf8'), slip);
      } catch (error) {
        console.error(`${slip.name}: ${(error as Error).message}`);
        rows.push([slip.name, 'does not apply', '', 'the slip no longer applies: the code moved']);
        failed = true;
        continue;
      }
      writeFileSync(join(copy, slip.file), slipped);
      const firstPass = Math.min(seeds, Math.max(2 * slip.seed, FIRST_PASS_MIN_SEEDS));
      const pool = new Pool(pathToFileURL(join(copy, 'scripts', 'slips.ts')), threads, journal);
      try {
        let caught = await pool.firstFailing(1, firstPass);
        if (caught === undefined && firstPass < seeds) caught = await pool.firstFailing(firstPass + 1, seeds);
        const seconds = ((performance.now() - slipStarted) / 1000).toFixed(0);
        if (caught === undefined) {
          failed = true;
          rows.push([slip.name, `none in ${seeds}`, seconds, 'nothing failed']);
        } else {
          rows.push([slip.name, String(caught.seed), seconds, caught.violation ?? '']);
          if (explain) console.log(await pool.explain(caught.seed));
        }
        console.log(rows.at(-1)?.join(' | '));
      } finally {
        await pool.close();
      }
    } finally {
      process.off('SIGINT', onInterrupt);
      removeCopy();
    }
  }
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  console.log(
    `\n${chosen.length} slips on ${journal === 'sqlite' ? 'SqliteJournal' : 'the memory store'}, ${threads} threads, ${minutes} min`,
  );
  console.log('| slip | first failing seed | seconds | first violation |\n|---|---:|---:|---|');
  for (const row of rows) console.log(`| ${row.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`);
  if (failed) {
    console.log('a slip was not caught, or no longer applies');
    process.exitCode = 1;
  }
}

/** Worker threads running the copy's simulation, one seed at a time. */
class Pool {
  readonly #workers: Worker[];

  constructor(script: URL, threads: number, journal: string) {
    // Each thread runs the copy's own scripts/slips.ts, so every import resolves inside the copy (the slipped source).
    this.#workers = Array.from({ length: threads }, () => new Worker(script, { env: { ...process.env, SIM_JOURNAL: journal } }));
  }

  #ask<Answer>(worker: Worker, request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const onError = (error: unknown) => {
        worker.off('message', onMessage);
        reject(error);
      };
      const onMessage = (answer: Answer) => {
        worker.off('error', onError);
        resolve(answer);
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage(request);
    });
  }

  /** The lowest seed of `from`..`to` that breaks an invariant: no seed above a failure is started, every one below it runs. */
  async firstFailing(from: number, to: number): Promise<SeedResult | undefined> {
    let next = from;
    let first: SeedResult | undefined;
    const run = async (worker: Worker): Promise<void> => {
      while (next <= to && (first === undefined || next < first.seed)) {
        const seed = next++;
        const result = await this.#ask<SeedResult>(worker, { seed });
        if (result.violation !== undefined && (first === undefined || seed < first.seed)) first = result;
      }
    };
    await Promise.all(this.#workers.map(run));
    return first;
  }

  explain(seed: number): Promise<string> {
    return this.#ask<string>(this.#workers[0] as Worker, { explain: seed });
  }

  async close(): Promise<void> {
    await Promise.all(this.#workers.map((worker) => worker.terminate()));
  }
}

/** A worker thread: runs the seeds it is asked for in this copy's simulation. */
async function serve(): Promise<void> {
  const { explain, sweep } = await import('../test/simulation/runner.ts');
  const { runSimulation } = await import('../test/simulation/sim.ts');
  parentPort?.on('message', async (request: Request) => {
    if ('explain' in request) {
      parentPort?.postMessage(await explain(await runSimulation({ seed: request.explain })));
      return;
    }
    const { failures } = await sweep(request.seed, request.seed);
    parentPort?.postMessage({ seed: request.seed, violation: failures[0]?.violations[0] } satisfies SeedResult);
  });
}

if (isMainThread) await main();
else await serve();
