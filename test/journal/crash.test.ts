/**
 * The crash test, with real processes: a till process sells (initiate → poll) on a SqliteJournal against the simulator
 * over loopback and is killed with SIGKILL at chosen and random moments; the next till process starts with recover().
 * After every lane's last kill, a last process recovers. Then every sale is held against the server's truth: never two
 * collections for one reference, never a second push, no collection the journal does not know, and every record at the
 * server's state, or `not-sent` exactly when the server holds no collection.
 *
 * Six lanes (a journal file and a simulator each) run side by side: spawning dominates the run time, and the processes
 * share a V8 compile cache.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { PaymentRecord } from '../../src/index.js';
import { SqliteJournal } from '../../src/sqlite/index.js';
import {
  COLLECTIONS_API_KEYS,
  createSimulator,
  type ReceivedRequest,
  type RunningSimulator,
  type Simulator,
  startSimulator,
} from '../../src/testing/index.js';
import { type LineProcess, startLineProcess } from '../helpers/line-process.js';
import { useProcessScript } from '../helpers/process-script.js';

const MOMENTS = [
  'before the request',
  'at the server, before it stores',
  'at the server, after it stored',
  'after the 202',
  'while polling',
  'at random',
] as const;
type Moment = (typeof MOMENTS)[number];
// 6 × 34 = 204 kills; CRASH_LANES / CRASH_KILLS change it for a quick run while working on the journal.
const LANES = Number(process.env.CRASH_LANES ?? 6);
const KILLS_PER_LANE = Number(process.env.CRASH_KILLS ?? 34);
const GRACE_MS = 400;
/**
 * How much later than now the last restart reads the journal: past every till's window (22 s) and the grace by the
 * journal's clock. The process itself must still watch each open record that long before a verdict (its `recover()`
 * runs again at `decidableAt`).
 */
const LAST_RESTART_LATER_MS = 30_000;

const script = useProcessScript(new URL('./processes/till.ts', import.meta.url), 'till');

type Till = LineProcess;

function startTill(file: string, baseUrl: string, mode?: string, journalClockOffsetMs = 0): Till {
  const args = [script.path, file, baseUrl, COLLECTIONS_API_KEYS.primary, String(GRACE_MS), ...(mode ? [mode] : [])];
  const env = {
    ...process.env,
    NODE_COMPILE_CACHE: join(script.dir, 'compile-cache'),
    TILL_JOURNAL_CLOCK_OFFSET_MS: String(journalClockOffsetMs),
  };
  return startLineProcess(args, env, 'till');
}

interface Sale {
  readonly lane: number;
  readonly referenceId: string;
  readonly moment: Moment;
}

interface Lane {
  readonly index: number;
  readonly file: string;
  readonly simulator: Simulator;
  readonly running: RunningSimulator;
  onRequest: ((request: ReceivedRequest) => void) | undefined;
}

async function startLane(index: number): Promise<Lane> {
  const lane: { -readonly [key in keyof Lane]: Lane[key] } = {
    index,
    file: join(script.dir, `till-${index}.db`),
    onRequest: undefined,
  } as Lane;
  lane.simulator = createSimulator({ settlement: { pendingPolls: 2, pendingMs: 300 }, onRequest: (request) => lane.onRequest?.(request) });
  lane.running = await startSimulator({ simulator: lane.simulator });
  return lane;
}

const POST = 'POST';

/** One till process, killed at `moment`: resolves with the sale it interrupted (the last one it started), if any. */
async function killOnce(lane: Lane, moment: Moment): Promise<{ interrupted?: string; completed: number }> {
  const baseUrl = lane.running.collectionsBaseUrl;
  let tillProcess: Till;
  const kill = () => tillProcess.child.kill('SIGKILL');
  switch (moment) {
    case 'before the request':
      tillProcess = startTill(lane.file, baseUrl, 'pause-after-insert');
      await tillProcess.waitFor(/^inserted /);
      kill();
      break;
    case 'at the server, before it stores': {
      const fault = lane.simulator.injectFault({ route: 'POST /v1/collections/mobile-money', latencyMs: 2_000, times: 1 });
      tillProcess = startTill(lane.file, baseUrl);
      await tillProcess.waitFor(/^start /);
      while (!lane.simulator.requests.some((request) => request.method === POST && request.outcome === undefined)) {
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      kill();
      fault.remove();
      break;
    }
    case 'at the server, after it stored':
      tillProcess = startTill(lane.file, baseUrl);
      await new Promise<void>((resolve) => {
        lane.onRequest = (request) => {
          if (request.method === POST && request.outcome === 202) {
            kill();
            lane.onRequest = undefined;
            resolve();
          }
        };
      });
      break;
    case 'after the 202':
      tillProcess = startTill(lane.file, baseUrl);
      await tillProcess.waitFor(/^accepted /);
      kill();
      break;
    case 'while polling':
      tillProcess = startTill(lane.file, baseUrl);
      await tillProcess.waitFor(/^polled .* pending$/);
      kill();
      break;
    case 'at random':
      tillProcess = startTill(lane.file, baseUrl);
      // From the sale's start: 'ready' comes a write earlier, and a kill between the two interrupted no sale.
      await tillProcess.waitFor(/^start /);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 120));
      kill();
      break;
  }
  const exit = await tillProcess.exited;
  if (exit.signal !== 'SIGKILL')
    throw new Error(`the till ended by itself (${exit.code}):\n${tillProcess.lines.join('\n')}\n${exit.stderr}`);
  lane.simulator.clearFaults();
  const started = tillProcess.lines.filter((line) => line.startsWith('start ')).map((line) => line.slice(6));
  const settled = new Set(tillProcess.lines.filter((line) => line.startsWith('settled ')).map((line) => line.split(' ')[1]));
  const last = started.at(-1);
  return { interrupted: last !== undefined && !settled.has(last) ? last : undefined, completed: settled.size };
}

/** A lane's run: the kills as observed (a till that ended by SIGKILL, at that moment), and the sales they interrupted. */
async function runLane(lane: Lane, firstKill: number): Promise<{ kills: Moment[]; sales: Sale[]; completed: number }> {
  const kills: Moment[] = [];
  const sales: Sale[] = [];
  let completed = 0;
  for (let kill = 0; kill < KILLS_PER_LANE; kill++) {
    const moment = MOMENTS[(firstKill + kill) % MOMENTS.length] as Moment;
    const result = await killOnce(lane, moment);
    // killOnce throws unless the till ended by SIGKILL: this kill happened.
    kills.push(moment);
    completed += result.completed;
    if (result.interrupted !== undefined) sales.push({ lane: lane.index, referenceId: result.interrupted, moment });
  }
  // The restart after the last crash, once every record's window and the grace have passed by the journal's clock
  // (the tills' window is 3 × 2 s + 2 × 8 s): the journal's clock is moved on rather than the test waiting.
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS + 100));
  const last = startTill(lane.file, lane.running.collectionsBaseUrl, 'recover-only', LAST_RESTART_LATER_MS);
  const exit = await last.exited;
  if (exit.code !== 0) throw new Error(`the last recover failed:\n${last.lines.join('\n')}\n${exit.stderr}`);
  return { kills, sales, completed };
}

it(`a till killed ${LANES * KILLS_PER_LANE} times at chosen and random moments: recover() loses no payment and never pushes twice`, async () => {
  const started = Date.now();
  const lanes = await Promise.all(Array.from({ length: LANES }, (_, index) => startLane(index)));
  try {
    const runs = await Promise.all(lanes.map((lane) => runLane(lane, lane.index)));
    const rows = new Map<
      Moment,
      { kills: number; interrupted: number; unwritten: number; paid: number; notPaid: number; notSent: number; open: number }
    >();
    for (const moment of MOMENTS) rows.set(moment, { kills: 0, interrupted: 0, unwritten: 0, paid: 0, notPaid: 0, notSent: 0, open: 0 });
    for (const moment of runs.flatMap((run) => run.kills)) {
      const row = rows.get(moment);
      if (row) row.kills++;
    }
    let problems: string[] = [];
    let duplicatePushes = 0;
    let twoCollections = 0;
    let lost = 0;
    let records = 0;
    for (const [index, lane] of lanes.entries()) {
      const journal = new SqliteJournal(lane.file);
      const all = await journal.list();
      await journal.close();
      records += all.length;
      const byReference = new Map<string, PaymentRecord>(all.map((record) => [record.referenceId, record]));
      const collections = lane.simulator.collections();
      const held = new Map<string, number>();
      for (const collection of collections) held.set(collection.referenceId, (held.get(collection.referenceId) ?? 0) + 1);
      twoCollections += [...held.values()].filter((count) => count > 1).length;
      duplicatePushes += lane.simulator.requests.filter((request) => request.method === POST && request.outcome === 409).length;
      for (const collection of collections) {
        const record = byReference.get(collection.referenceId);
        if (record === undefined) {
          lost++;
          problems.push(`lane ${index}: collection ${collection.referenceId} is not in the journal`);
        } else if (record.state !== collection.status) {
          problems.push(`lane ${index}: ${collection.referenceId} is ${record.state} in the journal, ${collection.status} at the server`);
        }
      }
      for (const record of all) {
        if (!held.has(record.referenceId) && record.state !== 'not-sent') {
          problems.push(`lane ${index}: ${record.referenceId} is ${record.state} in the journal, absent at the server`);
        }
      }
      for (const sale of runs[index]?.sales ?? []) {
        const row = rows.get(sale.moment);
        const state = byReference.get(sale.referenceId)?.state;
        if (!row) continue;
        row.interrupted++;
        // Killed before the journal write: nothing was sent either (every collection has its record, checked above).
        if (state === undefined) row.unwritten++;
        else if (state === 'successful') row.paid++;
        else if (state === 'failed') row.notPaid++;
        else if (state === 'not-sent') row.notSent++;
        else {
          row.open++;
          problems.push(`lane ${index}: ${sale.referenceId}, interrupted ${sale.moment}, is still ${state}`);
        }
      }
    }
    problems = problems.slice(0, 20);
    const completed = runs.reduce((sum, run) => sum + run.completed, 0);
    const kills = runs.reduce((sum, run) => sum + run.kills.length, 0);
    const table = [
      '| killed | kills | sales interrupted | not yet written | → paid | → not paid | → not sent | → still open |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...MOMENTS.map((moment) => {
        const row = rows.get(moment);
        return `| ${moment} | ${row?.kills} | ${row?.interrupted} | ${row?.unwritten} | ${row?.paid} | ${row?.notPaid} | ${row?.notSent} | ${row?.open} |`;
      }),
      '',
      `${kills} kills, ${records} journal records (${completed} sales completed before a kill), ` +
        `collections held twice: ${twoCollections}, second pushes (409): ${duplicatePushes}, collections missing from the journal: ${lost}, ` +
        `records not at the server's state: ${problems.length}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ].join('\n');
    console.log(`\nCrash test\n${table}\n`);
    expect(problems).toEqual([]);
    expect({ twoCollections, duplicatePushes, lost }).toEqual({ twoCollections: 0, duplicatePushes: 0, lost: 0 });
    expect([...rows.values()].reduce((sum, row) => sum + row.open, 0)).toBe(0);
    // What was observed, moment by moment: every moment was reached, and every kill interrupted a sale (its till had
    // started a sale it had not settled), so each row's outcomes account for each of its kills.
    expect(kills).toBe(LANES * KILLS_PER_LANE);
    for (const [moment, row] of rows) {
      expect(row.kills, moment).toBeGreaterThan(0);
      expect(row.interrupted, `${moment}: kills that interrupted no sale`).toBe(row.kills);
    }
  } finally {
    await Promise.all(lanes.map((lane) => lane.running.close()));
  }
  // The last restart waits out its own watch of the open records (22.4 s) before its verdicts: that much more time.
}, 240_000);
