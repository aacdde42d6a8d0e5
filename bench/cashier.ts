/**
 * (ca) The cashier's wait: what a till tells the cashier after each failure it meets, and how many seconds until a
 * definite answer (the push reached the service, `pending` or settled; or it did not, `not-sent`: start the sale
 * over), from real processes: a till process running the BUILT package with a `SqliteJournal`
 * (bench/cashier-till.ts), the simulator's loopback server (tap-collections-sdk/testing, which refuses a second
 * create of a `referenceId` with 409) with one fault injected per case, and SIGKILL where the case needs it. Each
 * case has its own simulator, so the cases run side by side.
 *
 * Cases: the connection dropped before the push reached the service; dropped after the service stored it; one 503
 * on the push; a push slower than `timeoutMs` (2000); a refused connection (nothing listens; the cashier's new sale
 * goes to the service once it answers); the till SIGKILLed while its push was at the service and restarted (seconds
 * from `recover()` starting). The till runs `timeoutMs: 2000`, `maxRetries: 2` (a till profile): its attempt window is
 * 3 × 2 s + 2 × 8 s of backoff = 22 s, and `not-sent` is provable 10 s (`notFoundGraceMs`) after that.
 *
 * At the end of each case it counts the collections the service holds for the sale: a double is a second one (the
 * cashier started over while the first push had arrived), a lost one is a sale the till never answered definitely, or
 * told `pending` while the service holds nothing.
 *
 * Both values of `duplicateReferences` (`'unknown'`, the default, and `'refused'`) are run; a build without the option
 * says so in the table. `BENCH_CASHIER_MODES=unknown` runs one; `BENCH_CASHIER_CASES=drop-before,503` some cases.
 * `npm run bench -- cashier`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Testing from '../src/testing/index.js';
import { type BenchSdk, printTable } from './harness.ts';

type TestingEntry = typeof Testing;
type RunningSimulator = Testing.RunningSimulator;

const TILL = fileURLToPath(new URL('./cashier-till.ts', import.meta.url));
const CREATE_ROUTE = 'POST /v1/collections/mobile-money';
const TIMEOUT_MS = 2_000;

/** One failure a till meets. */
interface Case {
  readonly name: string;
  readonly label: string;
  /** The fault on the push, if the simulator injects one. */
  readonly fault?: Testing.FaultSpec;
  /** Nothing listens at the till's base URL (a refused connection). */
  readonly refused?: boolean;
  /** SIGKILL the till once the service stored its push, then restart it (`recover()`). */
  readonly kill?: boolean;
  /** The service stores the push at once but its answer comes this much later (a slow network or gateway). */
  readonly answerAfterMs?: number;
}

const CASES: readonly Case[] = [
  {
    name: 'drop-before',
    label: 'connection dropped before the push reached the service',
    fault: { route: CREATE_ROUTE, drop: 'before', times: 1 },
  },
  {
    name: 'drop-after',
    label: 'connection dropped after the service stored the push',
    fault: { route: CREATE_ROUTE, drop: 'after', times: 1 },
  },
  { name: '503', label: 'one 503 on the push', fault: { route: CREATE_ROUTE, status: 503, times: 1 } },
  { name: 'slow', label: `push stored, answered after 3 s (timeoutMs ${TIMEOUT_MS})`, answerAfterMs: 3_000 },
  { name: 'refused', label: 'connection refused (nothing listens)', refused: true },
  { name: 'killed', label: 'till SIGKILLed mid-push (stored), restarted: s from recover()', answerAfterMs: 5_000, kill: true },
  {
    name: 'killed-unstored',
    label: 'till SIGKILLed mid-push (not stored), restarted: s from recover()',
    // The simulator holds the push a second before it stores it, and stores nothing once its client is gone.
    fault: { route: CREATE_ROUTE, latencyMs: 1_000, times: 1 },
    kill: true,
  },
];

/** What one till process printed. */
interface TillLines {
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  readonly child: ChildProcess;
  /** Resolves with the first line of `event`. */
  next(event: string): Promise<Record<string, unknown>>;
}

function startTill(env: Record<string, string>): TillLines {
  const child = spawn(process.execPath, [TILL], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const lines: Record<string, unknown>[] = [];
  const waiting: { event: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) {
      if (part.trim() === '') continue;
      const line = JSON.parse(part) as Record<string, unknown>;
      lines.push(line);
      for (const waiter of waiting.filter((entry) => entry.event === line.event)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return {
    lines,
    exited,
    child,
    next: (event) => {
      const seen = lines.find((line) => line.event === event);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiting.push({ event, resolve }));
    },
  };
}

/** A loopback port nothing listens on (taken, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A loopback front of the simulator whose first push is stored at once and answered `delayMs` later (or never, when
 * the till is gone by then): the simulator itself delays before it stores, and stores nothing for a client that left.
 */
async function slowAnswers(simulatorUrl: string, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  let delayed = false;
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'x-api-key', 'content-type', 'accept', 'x-request-id']) {
        const value = request.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      try {
        const upstream = await fetch(`${simulatorUrl}${request.url ?? '/'}`, {
          method: request.method ?? 'GET',
          headers,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        const body = Buffer.from(await upstream.arrayBuffer());
        const wait = request.method === 'POST' && !delayed ? delayMs : 0;
        if (request.method === 'POST') delayed = true;
        setTimeout(() => {
          if (response.destroyed) return;
          const out: Record<string, string> = {};
          for (const name of ['content-type', 'x-request-id', 'retry-after']) {
            const value = upstream.headers.get(name);
            if (value !== null) out[name] = value;
          }
          response.writeHead(upstream.status, out).end(body);
        }, wait);
      } catch {
        response.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One row of the table. */
interface Row {
  readonly told: string;
  readonly toldFull: string;
  readonly toldS: string;
  readonly definite: string;
  readonly definiteS: string;
  readonly held: number;
  readonly doubles: number;
  readonly lost: number;
}

const seconds = (ms: unknown) => (typeof ms === 'number' ? (ms / 1_000).toFixed(1) : '-');
const short = (text: string) => (text.length > 70 ? `${text.slice(0, 67)}...` : text);

async function runCase(testing: TestingEntry, dir: string, entry: Case, mode: string, amount: number): Promise<Row> {
  const running: RunningSimulator = await testing.startSimulator();
  const front = entry.answerAfterMs === undefined ? undefined : await slowAnswers(running.url, entry.answerAfterMs);
  try {
    if (entry.fault !== undefined) running.simulator.injectFault(entry.fault);
    const baseUrl =
      entry.refused === true
        ? `http://127.0.0.1:${await closedPort()}/collections`
        : front === undefined
          ? running.collectionsBaseUrl
          : `${front.url}/collections`;
    const env = {
      CASHIER_BASE_URL: baseUrl,
      CASHIER_RETRY_BASE_URL: running.collectionsBaseUrl,
      CASHIER_JOURNAL: join(dir, `${entry.name}-${mode}.db`),
      CASHIER_AMOUNT: String(amount),
      CASHIER_MODE: mode,
      CASHIER_TIMEOUT_MS: String(TIMEOUT_MS),
    };
    let till = startTill({ ...env, CASHIER_PHASE: 'sale' });
    if (entry.kill === true) {
      await till.next('sending');
      // SIGKILL once the push is at the service (stored, its answer on its way; or held before it is stored): no
      // clean-up runs.
      const atService = () =>
        entry.answerAfterMs === undefined
          ? running.simulator.requests.some((request) => request.method === 'POST')
          : running.simulator.collections().length > 0;
      while (!atService()) await new Promise((resolve) => setTimeout(resolve, 10));
      till.child.kill('SIGKILL');
      await till.exited;
      till = startTill({ ...env, CASHIER_PHASE: 'recover' });
    }
    const ended = await till.exited;
    const told = till.lines.find((line) => line.event === 'told');
    const definite = till.lines.find((line) => line.event === 'definite');
    if (definite === undefined) {
      const failure = `till failed: ${ended.stderr.split('\n').find((line) => line.trim() !== '') ?? `exit ${ended.code}`}`;
      return {
        toldFull: failure,
        told: short(`till failed: ${ended.stderr.split('\n').find((line) => line.trim() !== '') ?? `exit ${ended.code}`}`),
        toldS: '-',
        definite: '-',
        definiteS: '-',
        held: running.simulator.collections().length,
        doubles: 0,
        lost: 1,
      };
    }
    const state = String(definite.state);
    const held = running.simulator.collections().length;
    // One sale: the service should hold exactly one collection for it once the cashier acted on the answer.
    const doubles = Math.max(0, held - 1);
    // Lost: no definite answer, or the till says the push is at the service while the service holds nothing.
    const lost = state === 'none' || state === 'no-record' || (held === 0 && state !== 'not-sent' && state !== 'rejected') ? 1 : 0;
    return {
      told: short(String(told?.what ?? '-').replace(/^(\w+): The outcome of the request with referenceId \S+ /, '$1: ')),
      toldFull: String(told?.what ?? '-'),
      toldS: seconds(told?.ms),
      definite: state,
      definiteS: seconds(definite.ms),
      held,
      doubles,
      lost,
    };
  } finally {
    await front?.close();
    await running.close();
  }
}

export async function run(_sdk: BenchSdk): Promise<void> {
  const testing = (await import(new URL('../dist/testing/index.js', import.meta.url).href)) as TestingEntry;
  const modes = (process.env.BENCH_CASHIER_MODES ?? 'unknown,refused').split(',');
  // A build without the option ignores it: its 'refused' rows are the default mode's, and say so.
  const knowsRefused = (await readFile(new URL('../dist/index.js', import.meta.url), 'utf8')).includes('duplicateReferences');
  const modeLabel = (mode: string) => (mode === 'refused' && !knowsRefused ? 'refused (not in this build: ran as unknown)' : mode);
  const only = process.env.BENCH_CASHIER_CASES?.split(',');
  const cases = CASES.filter((entry) => only === undefined || only.includes(entry.name));
  const dir = await mkdtemp(join(tmpdir(), 'tap-collections-cashier-'));
  try {
    const runs = modes.flatMap((mode, modeIndex) => cases.map((entry, index) => ({ mode, entry, amount: 10 + modeIndex * 10 + index })));
    const rows = await Promise.all(runs.map(({ mode, entry, amount }) => runCase(testing, dir, entry, mode, amount)));
    printTable(
      `(ca) what the cashier sees, per failure: a till process (built SDK, SqliteJournal, timeoutMs ${TIMEOUT_MS}, maxRetries 2), the simulator on loopback`,
      ['failure', 'duplicateReferences', 'told first', 's', 'definite answer', 's until definite', 'held at service', 'doubles', 'lost'],
      runs.map(({ mode, entry }, index) => {
        const row = rows[index] as Row;
        return [
          entry.label,
          modeLabel(mode),
          row.told,
          row.toldS,
          row.definite,
          row.definiteS,
          String(row.held),
          String(row.doubles),
          String(row.lost),
        ];
      }),
    );
    console.log('\nWhat the till was told first, in full:');
    for (const [index, { mode, entry }] of runs.entries()) console.log(`  ${entry.name} (${mode}): ${(rows[index] as Row).toldFull}`);
    const doubles = rows.reduce((sum, row) => sum + row.doubles, 0);
    const lost = rows.reduce((sum, row) => sum + row.lost, 0);
    console.log(`\nAll cases: ${doubles} doubles, ${lost} lost (goal 0 and 0).`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
