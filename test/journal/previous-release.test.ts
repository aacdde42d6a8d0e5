/**
 * A deploy with a push in flight, with real processes of every earlier release (built from this repository's history
 * at test time): the first journal format, the state-machine release (its insert writes a window and its update bumps
 * the version) and the release before this one. The till of the earlier release opens the journal and sends a push
 * the service holds (it commits it only when the test says: "15 s later"); the new release opens the same journal
 * (upgrading it) and runs the documented restart flow while the push is still on its way, 11 s after it left (the old
 * till's clock runs 11 s behind, so a record it stamps says it was written 11 s ago).
 *
 * - The new release must not close the payment `not-sent`: a record of the first release carries no window, and a
 *   window not known is the longest possible, so no 404 proves anything; a later release's window has not run out.
 *   Once the service commits the push, the next recovery finds it.
 * - Every kind of write of the old till fails (its record of the 202, a lease, a renewal, a release, a transition, a
 *   contradiction mark, a budget renewal: each that its release has), and so does its next `initiate`, before
 *   sending: the service never sees that push. A till of the earlier release started after the upgrade (its own
 *   schema statements run at open) fails the same way, and the upgraded journal keeps working.
 *
 * Run against SQLite (a file both processes open) and a real PostgreSQL server.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CollectionsClient, type PaymentJournal } from '../../src/index.js';
import { PostgresJournal } from '../../src/postgres/index.js';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { COLLECTIONS_API_KEYS, createSimulator, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { forward } from '../helpers/forward.js';
import { type LineProcess, startLineProcess } from '../helpers/line-process.js';

/** Every earlier release whose tills may still be running when the journal is upgraded. */
interface Release {
  readonly commit: string;
  readonly name: string;
  /** Its records carry the sender's window (the first release's do not). */
  readonly writesWindow: boolean;
  /** The writes its journal has beyond insert, transition and leases. */
  readonly marks: boolean;
  readonly budgets: boolean;
  /** A till of it started after the upgrade of a PostgreSQL table can read (its schema statements succeed). */
  readonly readsAfterRestart: boolean;
}

const RELEASES: readonly Release[] = [
  { commit: '483719c', name: 'the first journal release', writesWindow: false, marks: false, budgets: false, readsAfterRestart: true },
  { commit: '3fca6b1', name: 'the state-machine release', writesWindow: true, marks: false, budgets: false, readsAfterRestart: false },
  { commit: 'c7258be', name: 'the release before this one', writesWindow: true, marks: true, budgets: true, readsAfterRestart: true },
];
const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const PRODUCT = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';
/** How long ago, by the time the new release recovers, the push left (the provider commits it at 15 s). */
const IN_FLIGHT_MS = 11_000;

/**
 * The till of the previous release: commands on stdin (`initiate <ref>`, `lease`), one line per outcome on stdout.
 * Its clock runs IN_FLIGHT_MS behind (the first release stamped records with the writer's clock).
 */
const OLD_TILL = `
import { createInterface } from 'node:readline';
const behind = Number(process.env.OLD_TILL_BEHIND_MS);
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) { if (args.length === 0) super(RealDate.now() - behind); else super(...args); }
  static now() { return RealDate.now() - behind; }
};
const { CollectionsClient } = await import('./src/index.ts');
const [kind, target, table, baseUrl, apiKey] = process.argv.slice(2);
const journal = kind === 'sqlite'
  ? new (await import('./src/sqlite/index.ts')).SqliteJournal(target)
  : new (await import('./src/postgres/index.ts')).PostgresJournal({ connectionString: target, tableName: table });
const client = new CollectionsClient({ apiKey, baseUrl, journal, logLevel: 'error', maxRetries: 0 });
const say = (line) => process.stdout.write(line + '\\n');
const failed = (what) => (error) => say(what + ' failed ' + error.name + ': ' + String(error.message).replace(/\\n/g, ' '));
createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, referenceId] = line.split(' ');
  if (command === 'initiate') {
    client.initiate({ productId: '${PRODUCT}', phoneNumber: '0977123456', amount: 10, referenceId })
      .then((created) => say('initiate ' + referenceId + ' resolved ' + created.status), failed('initiate ' + referenceId));
  } else if (command === 'lease') {
    journal.lease({ owner: 'old-worker', leaseMs: 60000, limit: 10 })
      .then((records) => say('lease resolved ' + records.length), failed('lease'));
  } else if (command === 'renew') {
    journal.renew('old-worker', [referenceId], 60000).then((held) => say('renew resolved ' + held.length), failed('renew'));
  } else if (command === 'release') {
    journal.release('old-worker', [referenceId]).then(() => say('release resolved'), failed('release'));
  } else if (command === 'transition' || command === 'mark') {
    const [, , version, state] = line.split(' ');
    const change = { state, by: 'old-till', ...(command === 'mark' ? { contradiction: { statusText: 'successful' } } : {}) };
    // The first release has no versions: update(referenceId, change).
    const written = typeof journal.transition === 'function'
      ? journal.transition(referenceId, Number(version), change).then((outcome) => String(outcome.applied))
      : journal.update(referenceId, change).then((record) => String(record !== undefined));
    written.then((applied) => say(command + ' resolved ' + applied), failed(command));
  } else if (command === 'get') {
    journal.get(referenceId).then((record) => say('get resolved ' + (record === undefined ? 'none' : record.state)), failed('get'));
  } else if (command === 'budget') {
    journal.takeBudget({ key: 'old-key', holder: 'old-till', limit: 5, keep: 0, want: 1, leaseMs: 5000, windowMs: 1000, accepted: 0, rateLimited: 0, saturated: false })
      .then(() => say('budget resolved'), failed('budget'));
  }
});
say('ready');
`;

const script = { dir: '' };

/** Each earlier release's sources from git, and the old till bundled against them (with this clone's packages). */
beforeAll(async () => {
  script.dir = await mkdtemp(join(tmpdir(), 'tap-collections-previous-release-'));
  for (const release of RELEASES) {
    const dir = join(script.dir, release.commit);
    await mkdir(dir);
    const archive = spawnSync('git', ['archive', '--format=tar', release.commit, 'src'], { cwd: REPOSITORY, maxBuffer: 64 << 20 });
    if (archive.status !== 0) throw new Error(`git archive ${release.commit} failed: ${archive.stderr.toString()}`);
    const extract = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
    if (extract.status !== 0) throw new Error(`tar failed: ${extract.stderr.toString()}`);
    await writeFile(join(dir, 'old-till.ts'), OLD_TILL);
    await build({
      entryPoints: [join(dir, 'old-till.ts')],
      outfile: join(dir, 'old-till.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      nodePaths: [join(REPOSITORY, 'node_modules')],
      banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
      logLevel: 'silent',
    });
  }
}, 120_000);

/** The service behind a front that holds each push until the test commits it (a provider that commits late). */
interface HoldingFront {
  readonly baseUrl: string;
  /** Pushes received, by referenceId. */
  readonly creates: Map<string, number>;
  /** Resolves when a push for `referenceId` arrives (held). */
  received(referenceId: string): Promise<void>;
  /** The held pushes reach the service now. */
  commit(): void;
  close(): Promise<void>;
}

async function startHoldingFront(running: RunningSimulator): Promise<HoldingFront> {
  const target = new URL(running.collectionsBaseUrl);
  const arrivals = new Map<string, () => void>();
  const held: (() => void)[] = [];
  let committed = false;
  const creates = new Map<string, number>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks);
      const create = request.method === 'POST';
      if (create) {
        const referenceId = String((JSON.parse(body.toString('utf8')) as { referenceId?: unknown }).referenceId);
        creates.set(referenceId, (creates.get(referenceId) ?? 0) + 1);
        arrivals.get(referenceId)?.();
        if (!committed) await new Promise<void>((resolve) => held.push(resolve));
      }
      await forward(target.origin, request, body, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname.replace(/\/$/, '')}`,
    creates,
    received: (referenceId) =>
      creates.has(referenceId) ? Promise.resolve() : new Promise<void>((resolve) => arrivals.set(referenceId, resolve)),
    commit: () => {
      committed = true;
      for (const release of held.splice(0)) release();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  if (script.dir !== '') await rm(script.dir, { recursive: true, force: true });
});

interface Store {
  readonly name: string;
  readonly oldArgs: (release: Release) => [kind: string, target: string, table: string];
  readonly open: (release: Release) => PaymentJournal & { close(): Promise<void> };
}

const table = (release: Release) => `previous_release_${release.commit}_${process.pid}`;
const stores: Store[] = [
  {
    name: 'SQLite (both processes open one file)',
    oldArgs: (release) => ['sqlite', join(script.dir, `${release.commit}.db`), '-'],
    open: (release) => new SqliteJournal(join(script.dir, `${release.commit}.db`)),
  },
  {
    name: 'PostgreSQL (a real server)',
    oldArgs: (release) => ['postgres', inject('postgresUrl'), table(release)],
    open: (release) => new PostgresJournal({ connectionString: inject('postgresUrl'), tableName: table(release) }),
  },
];

/** A till of `release` on `store`'s journal, ready for commands. */
async function startOldTill(release: Release, store: Store, baseUrl: string, name: string): Promise<LineProcess> {
  const old = startLineProcess(
    [join(script.dir, release.commit, 'old-till.mjs'), ...store.oldArgs(release), baseUrl, COLLECTIONS_API_KEYS.primary],
    { ...process.env, OLD_TILL_BEHIND_MS: String(IN_FLIGHT_MS) },
    name,
    { input: true },
  );
  cleanups.push(async () => {
    old.child.kill('SIGKILL');
    await old.exited;
  });
  await old.waitFor(/^ready$/);
  return old;
}

/** Sends `command` to the till and resolves with its outcome line (each command word is sent once per till). */
async function ask(till: LineProcess, command: string): Promise<string> {
  const [word, referenceId] = command.split(' ');
  const prefix = word === 'initiate' ? `initiate ${referenceId} ` : `${word} `;
  till.send(command);
  await till.waitFor(new RegExp(`^${prefix}`));
  return till.lines.find((line) => line.startsWith(prefix)) as string;
}

/**
 * Every kind of write the till's release has, each on a record it would change: a lease of a free open record, a
 * renewal and a release of one leased to its owner name, a transition of an open record on its version, a
 * contradiction mark of a final one, a budget renewal. Each must fail, and change nothing.
 */
async function expectEveryWriteFails(till: LineProcess, release: Release, journal: PaymentJournal, what: string): Promise<void> {
  const [free, held, closed] = [fixtureRecord(), fixtureRecord(), fixtureRecord()];
  for (const record of [free, held, closed]) expect(await journal.insert(record), 'the new release inserts').toBeDefined();
  const final = await journal.transition(closed.referenceId, 1, { state: 'failed', by: 'test', statusText: 'failed' });
  // Held in the old till's owner name, so that its renewal and release would change it if they ran; the lease needs a
  // free record, so one is released again.
  const leased = await journal.lease({ owner: 'old-worker', leaseMs: 60_000, limit: 1_000 });
  await journal.release('old-worker', [free.referenceId]);
  const ids = [free.referenceId, held.referenceId, closed.referenceId];
  const before = await Promise.all(ids.map((referenceId) => journal.get(referenceId)));
  const commands = [
    'lease',
    `renew ${held.referenceId}`,
    `release ${held.referenceId}`,
    `transition ${free.referenceId} 1 pending`,
    ...(release.marks ? [`mark ${closed.referenceId} ${final.record?.version} failed`] : []),
    ...(release.budgets ? ['budget'] : []),
  ];
  for (const command of commands) expect(await ask(till, command), `${what}: ${command}`).toMatch(/^\w+ failed /);
  const after = await Promise.all(ids.map((referenceId) => journal.get(referenceId)));
  expect(after, `${what}: the records the old till tried to change`).toEqual(before);
  // The new release still writes: its leases end, the fixtures close.
  await journal.release(
    'old-worker',
    leased.map((record) => record.referenceId),
  );
  for (const record of [free, held])
    expect((await journal.transition(record.referenceId, 1, { state: 'failed', by: 'test' })).applied).toBe(true);
}

function fixtureRecord() {
  return {
    referenceId: globalThis.crypto.randomUUID(),
    state: 'initiating' as const,
    productId: PRODUCT,
    amount: 10,
    currency: 'ZMW',
    phoneNumber: '260*****3456',
    fingerprint: 'fixture',
    sendWindowMs: 30_000,
  };
}

describe('a deploy with a push in flight: a till of an earlier release, then the new release on the same journal', () => {
  for (const release of RELEASES) {
    for (const store of stores) {
      it(`${release.name} (${release.commit}), ${store.name}: the new release never closes the push not-sent; every write of the old till fails and it sends nothing more`, async () => {
        const simulator = createSimulator();
        const running = await startSimulator({ simulator });
        cleanups.push(() => running.close());
        const front = await startHoldingFront(running);
        cleanups.push(() => front.close());
        const old = await startOldTill(release, store, front.baseUrl, `till of ${release.name}`);

        // The earlier release writes its record and sends; the service holds the push.
        const inFlight = globalThis.crypto.randomUUID();
        old.send(`initiate ${inFlight}`);
        await front.received(inFlight);

        // The deploy: the new release opens the journal (upgrading it) and recovers, 11 s after the push left.
        const journal = store.open(release);
        cleanups.push(() => journal.close());
        const client = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: front.baseUrl, journal, logLevel: 'off' });
        const recovered = await client.recover();
        const during = recovered.find((record) => record.referenceId === inFlight);
        expect(during?.state, 'the push in flight, recovered while the service has not committed it').toBe('initiating');
        if (!release.writesWindow) {
          expect(during?.decidableAt, 'no time proves a push of unknown window unsent').toBeUndefined();
          expect(during?.sendWindowMs).toBeUndefined();
        }
        expect(during?.deployment, 'a record of an earlier release says nothing of where its push went').toBeUndefined();

        // Every kind of write of the old till fails, and so does its record of the 202 once the service commits the push.
        await expectEveryWriteFails(old, release, journal, 'the till running since before the upgrade');
        front.commit();
        await old.waitFor(new RegExp(`^initiate ${inFlight} `));
        expect((await journal.get(inFlight))?.state, 'the old till could not record its 202').toBe('initiating');

        // Its next sale fails before anything is sent.
        const next = globalThis.crypto.randomUUID();
        expect(await ask(old, `initiate ${next}`)).toMatch(/ failed JournalError: /);
        expect(front.creates.has(next), 'the old till sent a push after the upgrade').toBe(false);
        expect(await journal.get(next)).toBeUndefined();

        // A till of the earlier release started after the upgrade runs its own schema statements at open: the lock holds.
        const restarted = await startOldTill(release, store, front.baseUrl, `restarted till of ${release.name}`);
        const later = globalThis.crypto.randomUUID();
        expect(await ask(restarted, `initiate ${later}`)).toMatch(/ failed JournalError: /);
        expect(front.creates.has(later), 'a restarted old till sent a push after the upgrade').toBe(false);
        if (store.name.startsWith('PostgreSQL'))
          await expectEveryWriteFails(restarted, release, journal, 'a till started after the upgrade');
        // On PostgreSQL its schema statements ran and succeeded (its reads work), except the state-machine release's (they
        // name a lease column renamed since); on SQLite it cannot open the file.
        const read = await ask(restarted, `get ${inFlight}`);
        expect(read).toMatch(
          store.name.startsWith('PostgreSQL') && release.readsAfterRestart ? /^get resolved initiating$/ : /^get failed /,
        );

        // The next recovery finds the push the service committed: one collection, and the journal agrees.
        const after = (await client.recover()).find((record) => record.referenceId === inFlight);
        expect(after?.state).toBe('pending');
        expect(simulator.collections().filter((collection) => collection.referenceId === inFlight)).toHaveLength(1);
        expect(front.creates.get(inFlight)).toBe(1);
        const { stderr } = await (async () => {
          old.child.kill('SIGTERM');
          return old.exited;
        })();
        const told = [...old.lines, stderr].join('\n');
        expect(told, 'the old till was told why its write failed').toMatch(/upgraded by a newer tap-collections-sdk/);
      }, 60_000);
    }
  }
});
