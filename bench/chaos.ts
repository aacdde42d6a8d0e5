/**
 * `npx node bench/chaos.ts [creates] [seed]`: the chaos soak over thousands of creates (default 2 000),
 * against the fault server of the test suite (a real `node:http` server on 127.0.0.1): seeded random
 * faults on every route, reads lagging behind creates by up to 600 ms, creates processed after the client
 * gave up, a server enforcing uniqueness. Prints the table of docs/internals/reliability-evidence.md; exits 1 unless the
 * three zeros hold (double records, resolved without a record, definite errors with a record stored).
 *
 * It runs the SDK's sources and the test suite's fault server under Node's type stripping; those import
 * each other as `.js` (the compiler's convention), so a resolve hook maps a missing `.js` to its `.ts`.
 */
import { fileURLToPath } from 'node:url';
import './source-imports.ts';
import type { ChaosOptions, ChaosReport } from '../test/faults/chaos.ts';

/** The defaults of the soak: 2 000 creates, the seed of the table in docs/internals/reliability-evidence.md. */
export const CHAOS_DEFAULTS = { creates: 2_000, seed: 20_261_123, concurrency: 64, maxLagMs: 600, timeoutMs: 1_000 } as const;

/** Runs the soak and returns its report and markdown table; `ok` when the three zeros hold. */
export async function runChaosBenchmark(options: Partial<ChaosOptions> = {}): Promise<{ report: ChaosReport; table: string; ok: boolean }> {
  const { runChaos, chaosTable } = await import('../test/faults/chaos.ts');
  const settings: ChaosOptions = { ...CHAOS_DEFAULTS, ...options };
  const report = await runChaos(settings);
  const ok =
    report.doubleRecords === 0 &&
    report.resolvedWithoutRecord === 0 &&
    report.definiteErrorsWithRecord === 0 &&
    report.wrongRecord === 0 &&
    report.untypedErrors === 0;
  return { report, table: chaosTable(report, settings), ok };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--memory-client') {
    await memoryClient(process.argv[3] as string, Number(process.argv[4]), Number(process.argv[5]));
    return;
  }
  if (process.argv[2] === '--memory') {
    const polls = Number(process.argv[3] ?? 5_000);
    console.log('| maxConcurrentRequests | pending polls | heap per poll | RSS per poll | connections held open |');
    console.log('|---|---|---|---|---|');
    for (const limit of [Number.POSITIVE_INFINITY, DEFAULT_LIMIT]) {
      const figure = await measurePendingPollMemory(polls, limit);
      const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
      console.log(`| ${limit} | ${figure.polls} | ${kb(figure.heapPerPoll)} | ${kb(figure.rssPerPoll)} | ${figure.openConnections} |`);
    }
    return;
  }
  const [creates, seed] = process.argv.slice(2).map(Number);
  const { table, ok } = await runChaosBenchmark({
    ...(Number.isInteger(creates) ? { creates } : {}),
    ...(Number.isInteger(seed) ? { seed } : {}),
  });
  console.log(table);
  console.log(ok ? 'PASS: the three zeros hold' : 'FAIL: a create was misreported');
  process.exitCode = ok ? 0 : 1;
}

/** The registry's entry (`npm run bench -- chaos`): the soak at its defaults, a FAIL line if a create was misreported. */
export async function run(): Promise<void> {
  const { table, ok } = await runChaosBenchmark();
  console.log(`\nChaos soak: ${CHAOS_DEFAULTS.creates} creates, seeded faults, reads lagging behind creates\n`);
  console.log(table);
  console.log(ok ? 'PASS: the three zeros hold' : 'FAIL: a create was misreported');
}

/** The `maxConcurrentRequests` default measured against unlimited. */
const DEFAULT_LIMIT = 64;

/** What one pending poll costs while it sleeps between checks, with real sockets. */
export interface PollMemoryFigure {
  readonly polls: number;
  readonly maxConcurrentRequests: number;
  /** Heap (after a full GC) per pending poll, in bytes, in the client's process. */
  readonly heapPerPoll: number;
  /** Resident memory per pending poll, in bytes (sockets and their buffers live partly outside the heap). */
  readonly rssPerPoll: number;
  /** Connections the server holds open while the polls sleep. */
  readonly openConnections: number;
}

const memoryReference = (index: number) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;

/**
 * `npx node bench/chaos.ts --memory [polls]`: a loopback server (this process) whose collections stay
 * pending, and a client in a child process that starts `polls` `pollUntilSettled` calls, lets every first
 * check finish, and measures its heap and RSS per poll while they sleep: once with `maxConcurrentRequests`
 * unlimited, once at the default.
 */
export async function measurePendingPollMemory(polls: number, maxConcurrentRequests: number): Promise<PollMemoryFigure> {
  const { spawn } = await import('node:child_process');
  const { COLLECTIONS_PRODUCT_ID, startFaultServer } = await import('../test/faults/fault-server.ts');
  const server = await startFaultServer();
  for (let index = 0; index < polls; index++) {
    // The service holds only collections for a product it knows.
    server.seedCollection({
      referenceId: memoryReference(index),
      productId: COLLECTIONS_PRODUCT_ID,
      phoneNumber: '260977123456',
      amount: 10,
    });
  }
  try {
    const child = spawn(
      process.execPath,
      [fileURLToPath(import.meta.url), '--memory-client', server.url, String(polls), String(maxConcurrentRequests)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    const measured = await new Promise<{ heap: number; rss: number }>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const line = output.split('\n').find((text) => text.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { heap: number; rss: number });
      });
      child.on('exit', (code) => reject(new Error(`the memory client exited (${code}) before measuring`)));
    });
    // The client sleeps with its polls pending until it is told to stop: count the connections now.
    const openConnections = server.openConnections();
    child.kill();
    return {
      polls,
      maxConcurrentRequests,
      heapPerPoll: Math.round(measured.heap / polls),
      rssPerPoll: Math.round(measured.rss / polls),
      openConnections,
    };
  } finally {
    await server.close();
  }
}

/** The client side of {@link measurePendingPollMemory}: prints the heap and RSS growth as one JSON line. */
async function memoryClient(baseUrl: string, polls: number, maxConcurrentRequests: number): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const { COLLECTIONS_KEY } = await import('../test/faults/fault-server.ts');
  const { CollectionsClient } = await import('../src/index.ts');
  const settle = async () => {
    for (let round = 0; round < 3; round++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      gc();
    }
  };
  const client = new CollectionsClient({ apiKey: COLLECTIONS_KEY, baseUrl, logLevel: 'off', maxConcurrentRequests });
  await client.health();
  await settle();
  const before = process.memoryUsage();
  let checked = 0;
  for (let index = 0; index < polls; index++) {
    // Every poll checks at once, then sleeps for a minute.
    void client.pollUntilSettled(memoryReference(index), { initialDelayMs: 60_000, maxWaitMs: 120_000, onUpdate: () => void checked++ });
  }
  while (checked < polls) await new Promise((resolve) => setTimeout(resolve, 50));
  await settle();
  const after = process.memoryUsage();
  console.log(JSON.stringify({ heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss }));
  await new Promise((resolve) => setTimeout(resolve, 60_000));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
