/**
 * What `journal list --contradictions` costs at 10 000 and at 1 000 000 records, on the BUILT CLI
 * (`dist/cli/bin.js`) run as a process on an SQLite journal of each size, as an operator runs it: its peak memory
 * (the process's own `maxRSS`, read at its exit) and its wall time. Each journal holds 20 contradicted records among
 * final ones nobody contradicted; the records are written by one `INSERT … SELECT` over a recursive count, as this
 * release writes them (the counting and locking triggers run).
 *
 * Baseline of the same run: the way the command read before the store filtered (every final record read through the
 * SDK, then filtered in the process), in a child process of its own, at 10 000 and 100 000 records (at 1 000 000 it
 * needs gigabytes). Target: the filtered command's peak memory at 1 000 000 records within 10 % (or 10 MB) of its peak
 * at 10 000.
 *
 * Run alone: `npm run bench -- contradictions`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { passFail, printTable } from './harness.ts';

const CONTRADICTED = 20;
const SIZES = [10_000, 100_000, 1_000_000] as const;
/** The baseline reads every final record: not at 1 000 000. */
const BASELINE_SIZES = new Set<number>([10_000, 100_000]);
const ROUNDS = 3;

const CLI = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const SQLITE_ENTRY = new URL('../dist/sqlite/index.js', import.meta.url).href;
/** Prints the process's peak memory as it exits (a preload: the command itself is unchanged). */
const PEAK = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss '+process.resourceUsage().maxRSS+'\\n'))`;

/** A journal of `size` records, `CONTRADICTED` of them contradicted, spread evenly by creation time. */
async function journalOf(directory: string, size: number): Promise<string> {
  const file = join(directory, `journal-${size}.db`);
  const { SqliteJournal } = (await import(SQLITE_ENTRY)) as typeof import('../src/sqlite/index.js');
  const journal = new SqliteJournal(file);
  await journal.list({ limit: 0 }); // creates the schema
  await journal.close();
  const db = new DatabaseSync(file);
  const every = Math.floor(size / CONTRADICTED);
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${size})
    INSERT INTO tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, narration, fingerprint,
      created_at, updated_at, status_text, version, send_window_ms, contradiction, writes)
    SELECT printf('%08x-0000-4000-8000-%012d', i, i), 'failed', '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', 25, 'ZMW', '260*******56',
      'Till 3, lunch', hex(randomblob(16)), strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i / 1000) || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (i / 1000) || ' seconds'), 'failed', 2, 106000,
      CASE WHEN i % ${every} = 0 THEN '{"at":"2026-01-02T00:00:00.000Z","statusText":"successful","by":"worker:w1"}' END, 1
    FROM n`);
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return file;
}

/** Peak memory (MB) and wall time (s) of one `node <args>` process; its stdout's line count. */
function measure(args: readonly string[]): { mb: number; seconds: number; lines: number } {
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', PEAK, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const seconds = (performance.now() - started) / 1000;
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  const peak = /maxrss (\d+)/.exec(run.stderr)?.[1];
  if (peak === undefined) throw new Error(`no peak memory printed: ${run.stderr}`);
  return { mb: Number(peak) / 1024, seconds, lines: run.stdout.split('\n').length };
}

/** The command before the store filtered: every final record read, then the contradicted ones kept. */
const BASELINE = `
const { SqliteJournal } = await import(process.argv[1]);
const journal = new SqliteJournal(process.argv[2]);
const records = await journal.list({ states: ['rejected', 'not-sent', 'successful', 'failed'] });
const kept = records.filter((record) => record.contradiction !== undefined);
console.log(kept.length);
await journal.close();
`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export async function run(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'tap-bench-contradictions-'));
  try {
    const rows: string[][] = [];
    const filtered = new Map<number, number>();
    for (const size of SIZES) {
      const filling = performance.now();
      const file = await journalOf(directory, size);
      const fillSeconds = (performance.now() - filling) / 1000;
      const cli: { mb: number; seconds: number; lines: number }[] = [];
      const baseline: { mb: number; seconds: number }[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const measured = measure([CLI, 'journal', 'list', '--contradictions', '--journal', `sqlite:${file}`]);
        // The header, one line per payment, the count, and the final newline's empty piece.
        if (measured.lines !== CONTRADICTED + 3)
          throw new Error(`expected ${CONTRADICTED} payments listed, got ${measured.lines - 3} lines`);
        cli.push(measured);
        if (BASELINE_SIZES.has(size)) baseline.push(measure(['--input-type=module', '-e', BASELINE, SQLITE_ENTRY, file]));
      }
      filtered.set(size, median(cli.map((item) => item.mb)));
      rows.push([
        size.toLocaleString('en'),
        fillSeconds.toFixed(1),
        median(cli.map((item) => item.mb)).toFixed(1),
        median(cli.map((item) => item.seconds)).toFixed(2),
        baseline.length === 0 ? '—' : median(baseline.map((item) => item.mb)).toFixed(1),
        baseline.length === 0 ? '—' : median(baseline.map((item) => item.seconds)).toFixed(2),
      ]);
    }
    printTable(
      `journal list --contradictions on SQLite (${CONTRADICTED} contradicted records; medians of ${ROUNDS} runs, each a process)`,
      ['records', 'fill (s)', 'peak RSS (MB)', 'wall (s)', 'every final record read: peak RSS (MB)', 'wall (s)'],
      rows,
    );
    const small = filtered.get(10_000) as number;
    const large = filtered.get(1_000_000) as number;
    const flat = large - small <= Math.max(10, small * 0.1);
    console.log(
      `Peak memory at 1 000 000 records ${large.toFixed(1)} MB vs ${small.toFixed(1)} MB at 10 000 (target: within 10 % or 10 MB): ${passFail(flat)}`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
