/**
 * A deploy with a push in flight, with a real process of the previous release (the first journal format, built from
 * this repository's history at test time): the till of the previous release opens the journal and sends a push the
 * service holds (it commits it only when the test says: "15 s later"); the new release opens the same journal
 * (upgrading it) and runs the documented restart flow while the push is still on its way, 11 s after it left (the old
 * till's clock runs 11 s behind, so its record says it was written 11 s ago).
 *
 * - The new release must not close the payment `not-sent`: the record carries no window, and a window not known is
 *   the longest possible, so no 404 proves anything. Once the service commits the push, the next recovery finds it.
 * - The old till's next write fails (its lease, its record of the 202), and its next `initiate` fails before sending:
 *   the service never sees that push.
 *
 * Run against SQLite (a file both processes open) and a real PostgreSQL server.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

/** The last commit of the first journal format (no window, no version, no history). */
const PREVIOUS_RELEASE = '483719c';
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
  }
});
say('ready');
`;

const script = { dir: '' };

/** The previous release's sources from git, and the old till bundled against them (with this clone's packages). */
beforeAll(async () => {
  script.dir = await mkdtemp(join(tmpdir(), 'tap-collections-previous-release-'));
  const archive = spawnSync('git', ['archive', '--format=tar', PREVIOUS_RELEASE, 'src'], { cwd: REPOSITORY, maxBuffer: 64 << 20 });
  if (archive.status !== 0) throw new Error(`git archive ${PREVIOUS_RELEASE} failed: ${archive.stderr.toString()}`);
  const extract = spawnSync('tar', ['-x', '-C', script.dir], { input: archive.stdout });
  if (extract.status !== 0) throw new Error(`tar failed: ${extract.stderr.toString()}`);
  await writeFile(join(script.dir, 'old-till.ts'), OLD_TILL);
  await build({
    entryPoints: [join(script.dir, 'old-till.ts')],
    outfile: join(script.dir, 'old-till.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    nodePaths: [join(REPOSITORY, 'node_modules')],
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
}, 60_000);

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
  readonly oldArgs: () => [kind: string, target: string, table: string];
  readonly open: () => PaymentJournal & { close(): Promise<void> };
}

const stores: Store[] = [
  {
    name: 'SQLite (both processes open one file)',
    oldArgs: () => ['sqlite', join(script.dir, 'till.db'), '-'],
    open: () => new SqliteJournal(join(script.dir, 'till.db')),
  },
  {
    name: 'PostgreSQL (a real server)',
    oldArgs: () => ['postgres', inject('postgresUrl'), `previous_release_${process.pid}`],
    open: () => new PostgresJournal({ connectionString: inject('postgresUrl'), tableName: `previous_release_${process.pid}` }),
  },
];

describe('a deploy with a push in flight: a till of the previous release, then the new release on the same journal', () => {
  for (const store of stores) {
    it(`${store.name}: the new release never closes the push not-sent; the old till's writes fail and it sends nothing more`, async () => {
      const simulator = createSimulator();
      const running = await startSimulator({ simulator });
      cleanups.push(() => running.close());
      const front = await startHoldingFront(running);
      cleanups.push(() => front.close());
      const old: LineProcess = startLineProcess(
        [join(script.dir, 'old-till.mjs'), ...store.oldArgs(), front.baseUrl, COLLECTIONS_API_KEYS.primary],
        { ...process.env, OLD_TILL_BEHIND_MS: String(IN_FLIGHT_MS) },
        'till of the previous release',
        { input: true },
      );
      cleanups.push(async () => {
        old.child.kill('SIGKILL');
        await old.exited;
      });
      await old.waitFor(/^ready$/);

      // The previous release writes its record (no window) and sends; the service holds the push.
      const inFlight = globalThis.crypto.randomUUID();
      old.send(`initiate ${inFlight}`);
      await front.received(inFlight);

      // The deploy: the new release opens the journal (upgrading it) and recovers, 11 s after the push left.
      const journal = store.open();
      cleanups.push(() => journal.close());
      const client = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: front.baseUrl, journal, logLevel: 'off' });
      const recovered = await client.recover();
      const during = recovered.find((record) => record.referenceId === inFlight);
      expect(during?.state, 'the push in flight, recovered while the service has not committed it').toBe('initiating');
      expect(during?.decidableAt, 'no time proves a push of unknown window unsent').toBeUndefined();
      expect(during?.sendWindowMs).toBeUndefined();

      // The old till's lease fails, and so does its record of the 202 once the service commits the push.
      old.send('lease');
      await old.waitFor(/^lease (failed|resolved)/);
      expect(old.lines.find((line) => line.startsWith('lease '))).toMatch(/^lease failed /);
      front.commit();
      await old.waitFor(new RegExp(`^initiate ${inFlight} `));
      expect((await journal.get(inFlight))?.state, 'the old till could not record its 202').toBe('initiating');

      // Its next sale fails before anything is sent.
      const next = globalThis.crypto.randomUUID();
      old.send(`initiate ${next}`);
      await old.waitFor(new RegExp(`^initiate ${next} `));
      expect(old.lines.find((line) => line.startsWith(`initiate ${next} `))).toMatch(/ failed JournalError: /);
      expect(front.creates.has(next), 'the old till sent a push after the upgrade').toBe(false);
      expect(await journal.get(next)).toBeUndefined();

      // The next recovery finds the push the service committed: one collection, and the journal agrees.
      const after = (await client.recover()).find((record) => record.referenceId === inFlight);
      expect(after?.state).toBe('pending');
      expect(simulator.collections().filter((collection) => collection.referenceId === inFlight)).toHaveLength(1);
      expect(front.creates.get(inFlight)).toBe(1);
      const { stderr } = await (async () => {
        old.child.kill('SIGTERM');
        return old.exited;
      })();
      expect(stderr, 'the old till was told why its write failed').toMatch(/upgraded by a newer tap-collections-sdk/);
    }, 30_000);
  }
});
