/**
 * The crash test with a fleet (issue 18): real till processes, several on ONE journal (a SqliteJournal file, or one
 * PostgreSQL table), selling the SAME payment (one referenceId), killed with SIGKILL, some with a clock minutes off,
 * against a service that commits a push later than `recover()`'s grace.
 *
 * The service: the loopback simulator behind a front (`startSlowFront`) that holds every create for `commitMs` and then
 * commits it whatever became of the client (killed or not): a push "on its way" that lands after the till died.
 * The tills: test/journal/processes/fleet-till.ts (recover() at start, initiate, on an unknown outcome check again with
 * the same reference until a verdict, poll until settled); `timeoutMs` 1.5 s, no retries, so an attempt's window is
 * 1.5 s, the service commits 0.7 s after it receives, and recover()'s `notFoundGraceMs` is 0.3 s: the commit comes
 * later than the grace, inside the window.
 *
 * Each round is one sale, in one of three ways:
 * - `slow commit`: till A's create is held by the service, A is killed meanwhile; till B starts at once, recovers and
 *   retries the same payment. B's recover() must not close it `not-sent` (the push is still landing), and B must end
 *   with the sale settled.
 * - `together`: tills A and B sell the same payment at the same moment; one of them is killed at a random moment.
 * - `after a crash`: A sells and is killed at a random moment; then B sells the same payment.
 * In the lanes "clock ahead", one till of each round (B in `slow commit`, the one left alive otherwise, chosen at
 * random) runs with its `Date` 2 minutes ahead (a `--import` preload, test/journal/processes/clock-ahead.ts).
 * With PostgreSQL the journal's clock is the server's `now()`: the till's wrong clock must change nothing. With SQLite
 * the journal's clock is the machine's, which every process on the file shares: the till's `Date` is wrong but its
 * journal reads the machine's clock (kept by the preload), so what is tested is that nothing else the SDK times by
 * the process's own clock (attempt deadlines, poll schedules, recover) decides a verdict. (A SQLite journal read
 * with a wrong clock is a wrong journal clock, outside the journal's contract: see docs/guide/journal.md.)
 *
 * After each lane, a last recover() runs past every window (SQLite: its journal clock moved on; PostgreSQL: the test
 * waits the short windows out by the server's clock), then the invariants of test/journal/crash.test.ts are checked:
 * never two collections for one reference, never a second push of a sale (the service received one create per
 * reference at most, and no 409), no collection the journal does not know, every record at the service's state, or
 * `not-sent` exactly when the service holds nothing.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { CollectionsClient, type PaymentJournal, type PaymentRecord } from '../../src/index.js';
import { PostgresJournal } from '../../src/postgres/index.js';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { COLLECTIONS_API_KEYS, createSimulator, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { forward } from '../helpers/forward.js';
import { type LineProcess, startLineProcess } from '../helpers/line-process.js';
import { useProcessScript } from '../helpers/process-script.js';

const ROUNDS = Number(process.env.FLEET_ROUNDS ?? 6);
const TIMEOUT_MS = 1_500;
const COMMIT_MS = 700;
const GRACE_MS = 300;
const AHEAD_MS = 2 * 60_000;
const SCENARIOS = ['slow commit', 'together', 'after a crash'] as const;
type Scenario = (typeof SCENARIOS)[number];

const till = useProcessScript(new URL('./processes/fleet-till.ts', import.meta.url), 'fleet-till', ['pg-native'], { requireShim: true });
const clockAhead = useProcessScript(new URL('./processes/clock-ahead.ts', import.meta.url), 'clock-ahead');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The simulator behind a front that holds each create `commitMs`, then commits it even if the client is gone. */
interface SlowFront {
  readonly baseUrl: string;
  commitMs: number;
  /** Creates received per referenceId (pushes that left a till). */
  readonly creates: Map<string, number>;
  /** Resolves once every held create has been committed. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

async function startSlowFront(running: RunningSimulator): Promise<SlowFront> {
  const target = new URL(running.collectionsBaseUrl);
  const inFlight = new Set<Promise<void>>();
  const front: { -readonly [key in keyof SlowFront]: SlowFront[key] } = {
    baseUrl: '',
    commitMs: 0,
    creates: new Map(),
    settled: async () => {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const create = request.method === 'POST';
      if (create) {
        const referenceId = String((JSON.parse(body.toString('utf8')) as { referenceId?: unknown }).referenceId);
        front.creates.set(referenceId, (front.creates.get(referenceId) ?? 0) + 1);
      }
      const work = (async () => {
        // Held as a slow service holds it: the client's going away does not stop it.
        if (create && front.commitMs > 0) await sleep(front.commitMs);
        await forward(target.origin, request, body, response);
      })();
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  front.baseUrl = `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`;
  const close = front.close;
  front.close = async () => {
    server.closeAllConnections();
    await close();
  };
  return front;
}

interface Till extends LineProcess {
  readonly name: string;
}

interface Lane {
  readonly name: string;
  readonly journalEnv: Record<string, string>;
  readonly clockAhead: boolean;
  readonly running: RunningSimulator;
  readonly front: SlowFront;
  /** The test's own handle on the lane's journal (for the checks and the last recovery). */
  readonly journal: PaymentJournal & { close(): Promise<void> };
}

function startTill(lane: Lane, name: string, referenceId: string, ahead: boolean): Till {
  const args = [...(ahead ? ['--import', clockAhead.path] : []), till.path];
  const env = {
    ...process.env,
    ...lane.journalEnv,
    NODE_COMPILE_CACHE: join(till.dir, 'compile-cache'),
    CLOCK_AHEAD_MS: ahead ? String(AHEAD_MS) : '0',
    FLEET_BASE_URL: lane.front.baseUrl,
    FLEET_API_KEY: COLLECTIONS_API_KEYS.primary,
    FLEET_REFERENCE: referenceId,
    FLEET_GRACE_MS: String(GRACE_MS),
    FLEET_TIMEOUT_MS: String(TIMEOUT_MS),
    FLEET_MODE: 'sell',
  };
  return { name, ...startLineProcess(args, env, `till ${name}`) };
}

/** A till that must finish by itself: exits 0 having settled the sale or learnt it was never sent. */
async function finishes(tillProcess: Till): Promise<string> {
  const exit = await tillProcess.exited;
  if (exit.code !== 0)
    throw new Error(`till ${tillProcess.name} failed (${exit.code ?? exit.signal}):\n${tillProcess.lines.join('\n')}\n${exit.stderr}`);
  const verdict = tillProcess.lines.find((line) => line.startsWith('settled ') || line === 'not-sent');
  if (verdict === undefined) throw new Error(`till ${tillProcess.name} ended without a verdict:\n${tillProcess.lines.join('\n')}`);
  return verdict;
}

async function kill(tillProcess: Till): Promise<boolean> {
  const killed = tillProcess.child.kill('SIGKILL');
  const exit = await tillProcess.exited;
  return killed && exit.signal === 'SIGKILL';
}

interface RoundResult {
  readonly referenceId: string;
  readonly scenario: Scenario;
  readonly kills: number;
  readonly verdict: string;
}

async function round(lane: Lane, index: number): Promise<RoundResult> {
  const scenario = SCENARIOS[index % SCENARIOS.length] as Scenario;
  const referenceId = randomUUID();
  const aheadIsB = lane.clockAhead && (scenario === 'slow commit' || Math.random() < 0.5);
  const aheadIsA = lane.clockAhead && !aheadIsB;
  let kills = 0;
  switch (scenario) {
    case 'slow commit': {
      lane.front.commitMs = COMMIT_MS;
      const a = startTill(lane, 'A', referenceId, aheadIsA);
      while (!lane.front.creates.has(referenceId)) {
        if (a.child.exitCode !== null) throw new Error(`till A ended before its create:\n${a.lines.join('\n')}`);
        await sleep(2);
      }
      await sleep(Math.random() * 200);
      if (await kill(a)) kills++;
      const b = startTill(lane, 'B', referenceId, aheadIsB);
      const verdict = await finishes(b);
      // The push was received, so it lands: B's recover() must have left it open, and B must end with it settled.
      const recovered = JSON.parse(b.lines.find((line) => line.startsWith('recovered '))?.slice(10) ?? '[]') as [string, string][];
      expect(recovered.find(([reference]) => reference === referenceId)?.[1], `${lane.name}: B's recover()`).not.toBe('not-sent');
      expect(verdict, `${lane.name}: ${referenceId} after a slow commit`).toMatch(/^settled /);
      return { referenceId, scenario, kills, verdict };
    }
    case 'together': {
      lane.front.commitMs = Math.random() * COMMIT_MS;
      const a = startTill(lane, 'A', referenceId, aheadIsA);
      const b = startTill(lane, 'B', referenceId, aheadIsB);
      await Promise.all([a.waitFor(/^ready$/), b.waitFor(/^ready$/)]);
      await sleep(Math.random() * 600);
      // The one killed is the one whose clock is right: the survivor (the skewed one, in a clock lane) must finish.
      const [victim, survivor] = aheadIsB ? [a, b] : aheadIsA ? [b, a] : Math.random() < 0.5 ? [a, b] : [b, a];
      if (await kill(victim)) kills++;
      return { referenceId, scenario, kills, verdict: await finishes(survivor) };
    }
    case 'after a crash': {
      lane.front.commitMs = Math.random() * COMMIT_MS;
      const a = startTill(lane, 'A', referenceId, aheadIsA);
      await a.waitFor(/^ready$/);
      await sleep(Math.random() * 500);
      if (await kill(a)) kills++;
      const b = startTill(lane, 'B', referenceId, aheadIsB);
      return { referenceId, scenario, kills, verdict: await finishes(b) };
    }
  }
}

/** The last recovery, once every record's window and the grace have passed by the journal's clock. */
async function lastRecovery(lane: Lane, journal: PaymentJournal): Promise<void> {
  await lane.front.settled();
  const client = new CollectionsClient({
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: lane.running.collectionsBaseUrl,
    journal,
    logLevel: 'off',
  });
  let recovered = await client.recover({ notFoundGraceMs: GRACE_MS });
  // This process must itself watch an open record for its window and the grace before a verdict: recover again then.
  for (let round = 0; round < 5; round++) {
    const due = recovered
      .filter((record) => (record.state === 'initiating' || record.state === 'unknown') && record.decidableAt !== undefined)
      .map((record) => Date.parse(record.decidableAt as string));
    if (due.length === 0) break;
    await sleep(Math.max(0, Math.max(...due) - Date.parse(await journal.now())) + 50);
    recovered = await client.recover({ notFoundGraceMs: GRACE_MS });
  }
}

async function check(lane: Lane, results: RoundResult[]) {
  const all = await lane.journal.list();
  const byReference = new Map<string, PaymentRecord>(all.map((record) => [record.referenceId, record]));
  const simulator = lane.running.simulator;
  const collections = simulator.collections();
  const held = new Map<string, number>();
  for (const collection of collections) held.set(collection.referenceId, (held.get(collection.referenceId) ?? 0) + 1);
  const problems: string[] = [];
  const twoCollections = [...held.values()].filter((count) => count > 1).length;
  const secondPushes =
    [...lane.front.creates.values()].reduce((sum, count) => sum + count - 1, 0) +
    simulator.requests.filter((request) => request.method === 'POST' && request.outcome === 409).length;
  let unknownToJournal = 0;
  for (const collection of collections) {
    const record = byReference.get(collection.referenceId);
    if (record === undefined) {
      unknownToJournal++;
      problems.push(`${collection.referenceId} is at the service, not in the journal`);
    } else if (record.state !== collection.status) {
      problems.push(`${collection.referenceId} is ${record.state} in the journal, ${collection.status} at the service`);
    }
  }
  for (const record of all) {
    if (!held.has(record.referenceId) && record.state !== 'not-sent') {
      problems.push(`${record.referenceId} is ${record.state} in the journal, absent at the service`);
    }
  }
  const states = new Map<string, number>();
  for (const { referenceId } of results) {
    const state = byReference.get(referenceId)?.state ?? 'never written';
    states.set(state, (states.get(state) ?? 0) + 1);
  }
  return { problems, twoCollections, secondPushes, unknownToJournal, states };
}

async function runLanes(kind: 'sqlite' | 'postgres') {
  const started = Date.now();
  const lanes: Lane[] = [];
  try {
    for (const clock of [false, true]) {
      const name = `${kind}${clock ? ', clock ahead' : ''}`;
      const running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 2, pendingMs: 200 } }) });
      const front = await startSlowFront(running);
      let journalEnv: Record<string, string>;
      let journal: PaymentJournal & { close(): Promise<void> };
      if (kind === 'sqlite') {
        const file = join(till.dir, `fleet-${clock ? 'ahead' : 'plain'}.db`);
        journalEnv = { FLEET_JOURNAL: `sqlite:${file}` };
        journal = new SqliteJournal(file, { busyTimeoutMs: 10_000 });
      } else {
        const tableName = `fleet_${process.pid}_${clock ? 'ahead' : 'plain'}`;
        journalEnv = { FLEET_JOURNAL: 'postgres', DATABASE_URL: inject('postgresUrl'), JOURNAL_TABLE: tableName };
        journal = new PostgresJournal({ connectionString: inject('postgresUrl'), tableName });
        await (journal as PostgresJournal).migrate();
      }
      lanes.push({ name, journalEnv, clockAhead: clock, running, front, journal });
    }
    const runs = await Promise.all(
      lanes.map(async (lane) => {
        const results: RoundResult[] = [];
        for (let index = 0; index < ROUNDS; index++) results.push(await round(lane, index));
        if (kind === 'sqlite') {
          // "A while later": the journal's clock moved on past every window, rather than the test waiting.
          const later = new SqliteJournal((lane.journalEnv.FLEET_JOURNAL as string).slice('sqlite:'.length), {
            busyTimeoutMs: 10_000,
            now: () => Date.now() + 60_000,
          });
          await lastRecovery(lane, later);
          await later.close();
        } else {
          // The server's clock cannot be moved: wait the (short) windows out by it.
          for (;;) {
            const open = await lane.journal.list({ states: ['initiating', 'unknown'] });
            const now = Date.parse(await lane.journal.now());
            const due = Math.max(0, ...open.map((record) => Date.parse(record.updatedAt) + (record.sendWindowMs ?? 0) + GRACE_MS - now));
            if (due === 0) break;
            await sleep(due + 20);
          }
          await lastRecovery(lane, lane.journal);
        }
        return { lane, results, checked: await check(lane, results) };
      }),
    );
    const rows = runs.map(({ lane, results, checked }) => {
      const kills = results.reduce((sum, result) => sum + result.kills, 0);
      const states = [...checked.states].map(([state, count]) => `${state} ${count}`).join(', ');
      return `| ${lane.name} | ${results.length} | ${kills} | ${checked.twoCollections} | ${checked.secondPushes} | ${checked.unknownToJournal} | ${checked.problems.length} | ${states} |`;
    });
    console.log(
      [
        `\nFleet crash test (${kind}), ${((Date.now() - started) / 1000).toFixed(1)} s`,
        '| lane | sales | kills | two collections | second pushes | collections not in the journal | records not at the service | final states |',
        '|---|---:|---:|---:|---:|---:|---:|---|',
        ...rows,
        '',
      ].join('\n'),
    );
    for (const { lane, checked } of runs) {
      expect(checked.problems, lane.name).toEqual([]);
      expect(
        { twoCollections: checked.twoCollections, secondPushes: checked.secondPushes, unknownToJournal: checked.unknownToJournal },
        lane.name,
      ).toEqual({
        twoCollections: 0,
        secondPushes: 0,
        unknownToJournal: 0,
      });
    }
  } finally {
    for (const lane of lanes) {
      await lane.front.close();
      await lane.running.close();
      await lane.journal.close();
    }
  }
}

describe.concurrent('tills on one journal, selling one payment, killed, a clock 2 minutes ahead, a service slower than the grace', () => {
  it('SQLite: one journal file', { timeout: 60_000 }, () => runLanes('sqlite'));
  it('PostgreSQL: one table', { timeout: 60_000 }, () => runLanes('postgres'));
});
