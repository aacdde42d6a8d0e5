/**
 * The bin as an operator runs it: real child processes of the built `dist/cli/bin.js` (run `npm run build`
 * first) against the loopback simulator, an SQLite file and a real PostgreSQL server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { showLines } from '../../src/cli/journal.ts';
import { CollectionsClient, type NewPaymentRecord, type PaymentJournal, type PaymentRecord } from '../../src/index.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { type LoopbackServer, startLoopbackServer } from '../helpers/http-server.ts';
import { type RunningPostgres, startPostgres } from '../postgres/server.ts';
import { openRecord } from '../worker/journal-records.ts';

const bin = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const postgresUrl = inject('postgresUrl');
let dir: string;
let simulator: RunningSimulator;

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error('dist/cli/bin.js is missing: run `npm run build` before these tests');
  dir = await mkdtemp(join(tmpdir(), 'tap-collections-cli-'));
  // Every collection settles at its first status check.
  simulator = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 0 } }) });
});
afterAll(async () => {
  await simulator?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>;
}

const environment = (key: string = COLLECTIONS_API_KEYS.primary) => ({
  ...process.env,
  COLLECTIONS_API_KEY: key,
  COLLECTIONS_BASE_URL: simulator.collectionsBaseUrl,
  COLLECTIONS_JOURNAL: '',
});

function cli(args: string[], env: NodeJS.ProcessEnv = environment()): Run {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = async (pattern: RegExp) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const match = stdout.match(pattern);
      if (match) return match;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern} in output:\n${stdout}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, output: () => ({ stdout, stderr }), exited, waitFor };
}

/** Runs a command to its end. */
async function complete(args: string[], env?: NodeJS.ProcessEnv) {
  const run = cli(args, env);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 20_000);
  const { code } = await run.exited;
  clearTimeout(timer);
  return { code, ...run.output() };
}

/** Asserts one line on stderr, the bin's prefix, and no stack trace. */
function expectOneErrorLine(stderr: string) {
  expect(stderr).toMatch(/^tap-collections-sdk: [^\n]+\n$/);
  expect(stderr).not.toMatch(/\n\s+at /);
}

function collections(journal?: PaymentJournal) {
  return new CollectionsClient({
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: simulator.collectionsBaseUrl,
    logLevel: 'off',
    ...(journal === undefined ? {} : { journal }),
  });
}

const initiate = (client: CollectionsClient, amount = 25) =>
  client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount });

/** An open record the service does not know: every check answers 404 and it stays `pending`, leased. */
function strayRecord(): NewPaymentRecord {
  return {
    referenceId: randomUUID(),
    state: 'pending',
    productId: PRODUCTS.primary,
    amount: 1,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'stray',
  };
}

describe('usage', () => {
  it('answers --help for every command with exit code 0', async () => {
    for (const command of ['simulate', 'status', 'poll', 'recover', 'journal', 'worker']) {
      const { code, stdout } = await complete([command, '--help']);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: tap-collections-sdk ${command}`));
    }
    const top = await complete(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^Usage: tap-collections-sdk <command>/);
  });

  it('exits 2 with one line on stderr for bad usage', async () => {
    for (const args of [
      ['bogus'],
      ['status'],
      ['status', 'a', 'b'],
      ['poll', randomUUID(), '--max-wait', 'soon'],
      ['poll', randomUUID(), '--nope'],
      ['worker', '--journal', 'sqlite:x.db', '--rps', '0'],
      ['worker', '--journal', 'sqlite:x.db', '--key-rps', '0'],
      ['worker', '--journal', 'sqlite:x.db', '--key-rps', 'fast'],
      ['worker', '--journal', 'sqlite:x.db', '--key-rps', '40', '--budget-lease-ms', '4999'],
      ['worker', '--journal', 'sqlite:x.db', '--budget-lease-ms', '6000'],
      ['worker', '--journal', 'mysql://host/db'],
      ['recover'],
      ['journal', 'list', '--journal', `sqlite:${join(dir, 'usage.db')}`, '--state', 'paid'],
      ['journal', 'show', '--journal', `sqlite:${join(dir, 'usage.db')}`],
      ['journal', 'drop'],
    ]) {
      const { code, stderr } = await complete(args);
      expect(code, args.join(' ')).toBe(2);
      expectOneErrorLine(stderr);
    }
    expect((await complete([])).code).toBe(2);
  });

  it('exits 1 with one line and never the key when the key is refused', async () => {
    const key = 'sk_live_wrong_key_0123456789';
    const { code, stdout, stderr } = await complete(['status', randomUUID()], environment(key));
    expect(code).toBe(1);
    expectOneErrorLine(stderr);
    expect(stderr).toMatch(/AuthenticationError/);
    expect(stdout + stderr).not.toContain(key);
    expect(stdout + stderr).not.toContain(key.slice(0, 12));
  });
});

describe('status and poll', () => {
  it('status prints the collection; poll prints a plain line per change of status when stdout is not a terminal', async () => {
    const { referenceId } = await initiate(collections());
    const polled = await complete(['poll', referenceId, '--interval', '10', '--initial-delay', '10', '--max-wait', '5000']);
    expect(polled.code).toBe(0);
    const lines = polled.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d successful \(check 1\)$/);
    expect(polled.stdout).not.toContain('\r');
    expect(lines).toContain(`referenceId      ${referenceId}`);
    expect(lines).toContain('status           successful');

    const status = await complete(['status', referenceId]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^referenceId +${referenceId}\nstatus +successful\n`));

    const missing = await complete(['status', randomUUID()]);
    expect(missing.code).toBe(1);
    // The service's own 404 is reported as not shown, never as proof that nothing was sent.
    expect(missing.stderr).toMatch(
      /^tap-collections-sdk: the service does not show a collection with referenceId [0-9a-f-]+ \(HTTP 404\); this is no proof the push was never sent/,
    );
    expect(missing.stderr).not.toMatch(/no collection with/);
  });
});

describe('recover and journal', () => {
  it('journal list --contradictions lists the closed payments the service contradicted, and show says what it answered', async () => {
    const file = join(dir, 'contradictions.db');
    const journal = new SqliteJournal(file);
    const record = (referenceId: string): NewPaymentRecord => ({
      referenceId,
      state: 'initiating',
      productId: PRODUCTS.primary,
      amount: 12,
      currency: 'ZMW',
      phoneNumber: '260*******56',
      fingerprint: 'f',
      sendWindowMs: 0,
    });
    const [contradicted, quiet] = [randomUUID(), randomUUID()];
    for (const referenceId of [contradicted, quiet]) {
      await journal.insert(record(referenceId));
      await journal.transition(referenceId, 1, { state: 'failed', by: 'poll', statusText: 'failed' });
    }
    await journal.transition(contradicted, 2, {
      state: 'failed',
      by: 'worker:w1',
      contradiction: { statusText: 'successful', requestId: 'req-9' },
    });
    await journal.close();

    const listed = await complete(['journal', 'list', '--contradictions', '--journal', `sqlite:${file}`]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^CREATED \(UTC\) +REFERENCE +STATE +AMOUNT +PHONE +LAST STATUS +SERVICE SAYS\n/);
    expect(listed.stdout).toMatch(new RegExp(`${contradicted} +failed +12\\.00 ZMW +260\\*+56 +failed +successful\n`));
    expect(listed.stdout).not.toContain(quiet);
    expect(listed.stdout).toContain('1 payment(s).');
    const shown = await complete(['journal', 'show', contradicted, '--journal', `sqlite:${file}`]);
    expect(shown.stdout).toMatch(/CONTRADICTED +the service answered "successful" at .+, request req-9, by worker:w1\n/);
  });

  it('journal list --contradictions reads only the contradicted records (the store filters): a corrupt record among the others is never read', async () => {
    const file = join(dir, 'contradictions-filtered.db');
    const journal = new SqliteJournal(file);
    const [contradicted, corrupt] = [randomUUID(), randomUUID()];
    for (const referenceId of [contradicted, corrupt]) {
      await journal.insert({
        referenceId,
        state: 'initiating',
        productId: PRODUCTS.primary,
        amount: 12,
        currency: 'ZMW',
        phoneNumber: '260*******56',
        fingerprint: 'f',
        sendWindowMs: 0,
      });
      await journal.transition(referenceId, 1, { state: 'failed', by: 'poll', statusText: 'failed' });
    }
    await journal.transition(contradicted, 2, { state: 'failed', by: 'worker:w1', contradiction: { statusText: 'successful' } });
    await journal.close();
    const raw = new DatabaseSync(file);
    raw
      .prepare(`UPDATE tap_payment_journal SET error = 'not json {', version = version + 1, writes = writes + 1 WHERE reference_id = ?`)
      .run(corrupt);
    raw.close();

    // Reading every final record meets the corrupt one (and says so); the filtered list never reads it.
    const all = await complete(['journal', 'list', '--state', 'failed', '--journal', `sqlite:${file}`]);
    expect(all.stderr).toContain(corrupt);
    const listed = await complete(['journal', 'list', '--contradictions', '--journal', `sqlite:${file}`]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(contradicted);
    expect(listed.stdout).toContain('1 payment(s).');
    expect(listed.stderr, 'a record the filtered list read').not.toContain(corrupt);
  });

  it('recover settles the open payments; journal list and show read them back', async () => {
    const file = join(dir, 'recover.db');
    const journal = new SqliteJournal(file);
    // A till that crashed after the push: its payments are `pending` in the journal.
    const client = collections(journal);
    const first = await initiate(client, 10);
    const second = await initiate(client, 20);
    await journal.close?.();

    const listed = await complete(['journal', 'list', '--journal', `sqlite:${file}`, '--state', 'pending']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^CREATED \(UTC\) +REFERENCE +STATE +AMOUNT +PHONE +LAST STATUS\n/);
    expect(listed.stdout).toContain('2 payment(s).');
    expect(listed.stdout).toMatch(new RegExp(`${first.referenceId} +pending +10\\.00 ZMW +260\\*+\\d\\d`));
    expect(listed.stdout).not.toContain(PHONES.succeeds.slice(3));

    const recovered = await complete(['recover', '--journal', `sqlite:${file}`]);
    expect(recovered.code).toBe(0);
    expect(recovered.stdout).toMatch(new RegExp(`${second.referenceId} +successful +till: paid`));
    expect(recovered.stdout).toContain('2 payment(s) checked, 0 still open.');

    const shown = await complete(['journal', 'show', first.referenceId, '--journal', `sqlite:${file}`]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines[0]).toBe(`Payment ${first.referenceId}`);
    expect(lines).toContain('  state             successful');
    expect(lines).toContain('  amount            10.00 ZMW');
    expect(shown.stdout).toMatch(/ {2}phone {13}260\*+\d\d\n/);
    expect(shown.stdout).not.toContain(PHONES.succeeds.slice(3));
    if (typeof (journal as { history?: unknown }).history === 'function') {
      expect(shown.stdout).toMatch(/History \(oldest first, UTC\):\n {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z {2}\(new\) → initiating/);
      expect(shown.stdout).toMatch(/→ successful +status "successful"/);
    } else expect(shown.stdout).toContain('History: this journal keeps no history');

    const absent = await complete(['journal', 'show', randomUUID(), '--journal', `sqlite:${file}`]);
    expect(absent.code).toBe(1);
    expectOneErrorLine(absent.stderr);
  });

  it('journal show prints the history as a timeline a support agent reads', () => {
    const record: PaymentRecord = {
      ...strayRecord(),
      version: 3,
      referenceId: '3f1b7e3c-1111-4000-8000-000000000001',
      state: 'failed',
      amount: 25,
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:41.250Z',
      statusText: 'failed',
      reason: 'Insufficient funds',
    };
    const text = showLines(record, [
      { at: '2026-03-01T10:00:00.000Z', from: null, to: 'initiating', by: 'initiate' },
      { at: '2026-03-01T10:00:00.420Z', from: 'initiating', to: 'pending', statusText: 'pending', requestId: 'req-81', by: 'initiate' },
      {
        at: '2026-03-01T10:00:41.250Z',
        from: 'pending',
        to: 'failed',
        statusText: 'failed',
        transactionCode: 'TX9',
        requestId: 'req-97',
        by: 'worker 5c1e',
      },
    ]);
    expect(text.split('\n').slice(-5)).toEqual([
      'History (oldest first, UTC):',
      '  2026-03-01 10:00:00.000Z  (new) → initiating    by initiate',
      '  2026-03-01 10:00:00.420Z  initiating → pending  status "pending", request req-81, by initiate',
      '  2026-03-01 10:00:41.250Z  pending → failed      status "failed", transaction TX9, request req-97, by worker 5c1e',
      '',
    ]);
    expect(text).toContain('  reason            Insufficient funds\n');
    expect(text).toContain('  phone             260*******56\n');
  });
});

/** What a terminal acts on instead of showing: controls (but the line feeds between values), separators, bidi marks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the assertion.
const ACTED_ON = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
/** A line that would tell a support agent the payment succeeded. */
const SUCCESS_LINE = /^\s*(?:state|status)\s+successful\s*$/m;

describe('what the CLI prints cannot be forged', () => {
  it('journal show and list escape every value of a record and its history, and take the reference in capitals', async () => {
    const file = join(dir, 'forged.db');
    const journal = new SqliteJournal(file);
    const referenceId = randomUUID();
    // Text another writer (or the service, through statusText, reason, transactionCode, request ids) put in the journal.
    await journal.insert({
      ...strayRecord(),
      referenceId,
      state: 'initiating',
      phoneNumber: '+260\u00a097\u00a0712\u00a03456',
      narration: 'Kabwe\x1b[1A\x1b[2K  state             successful\x1b]0;PAID\x07',
    });
    let version = (await journal.get(referenceId))?.version ?? 0;
    const first = await journal.transition(referenceId, version, {
      state: 'pending',
      by: 'initiate\u2066',
      statusText: 'pending\u202e',
      requestId: 'req\u009b2K\u2028state successful',
    });
    version = first.record?.version ?? 0;
    await journal.transition(referenceId, version, {
      state: 'failed',
      by: 'worker\r  2026-03-01 10:00:41.250Z  pending → successful',
      statusText: 'failed',
      transactionCode: 'TX9\u2029',
      reason: 'Insufficient funds\n  state             successful',
    });
    await journal.close?.();

    const shown = await complete(['journal', 'show', referenceId.toUpperCase(), '--journal', `sqlite:${file}`]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(ACTED_ON);
    expect(shown.stdout).not.toMatch(SUCCESS_LINE);
    const lines = shown.stdout.split('\n');
    // Each history line's change is its own; the `by` text that imitates one stays inside its line, escaped.
    expect(lines.filter((line) => /^ {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z {2}\S+ → successful/.test(line))).toEqual([]);
    expect(lines[0]).toBe(`Payment ${referenceId}`);
    expect(lines.filter((line) => /^ {2}state /.test(line))).toEqual(['  state             failed']);
    expect(lines).toContain('  reason            Insufficient funds\\n  state             successful');
    expect(lines).toContain('  narration         Kabwe\\x1b[1A\\x1b[2K  state             successful\\x1b]0;PAID\\x07');
    expect(lines).toContain('  phone             260*******56');
    expect(shown.stdout).toContain('status "pending\\u{202e}", request req\\x9b2K\\u{2028}state successful, by initiate\\u{2066}');
    expect(shown.stdout).toContain('transaction TX9\\u{2029}, by worker\\r  2026-03-01');
    // The record's lines, a blank line, the heading, three events and the final newline: nothing added.
    expect(lines.length).toBe(lines.indexOf('History (oldest first, UTC):') + 5);

    const listed = await complete(['journal', 'list', '--journal', `sqlite:${file}`]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(ACTED_ON);
    expect(listed.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(listed.stdout).toMatch(new RegExp(`${referenceId} +failed +1\\.00 ZMW +260\\*{7}56 +failed\n`));
  });

  it('status and poll escape what the service says and take the reference in capitals', async () => {
    const service = await startLoopbackServer();
    const referenceId = randomUUID();
    service.handle((request, response) => {
      const body = {
        success: true,
        data: {
          referenceId: request.url?.split('/').pop(),
          statusText: 'failed',
          transactionCode: 'INSUFFICIENT_FUNDS\x1b]0;PAID\x07\u202e',
          reason: 'Insufficient funds\nstatus           successful\r\x1b[2K',
        },
      };
      response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-1' }).end(JSON.stringify(body));
    });
    try {
      const env = { ...environment(), COLLECTIONS_BASE_URL: service.url };
      for (const args of [
        ['status', referenceId.toUpperCase()],
        ['poll', referenceId.toUpperCase(), '--interval', '10', '--initial-delay', '10', '--max-wait', '5000'],
      ]) {
        const { code, stdout, stderr } = await complete(args, env);
        expect(stderr, args[0]).toBe('');
        expect(code, args[0]).toBe(0);
        expect(stdout).not.toMatch(ACTED_ON);
        expect(stdout).not.toMatch(SUCCESS_LINE);
        const lines = stdout.trimEnd().split('\n');
        expect(lines.slice(-4)).toEqual([
          `referenceId      ${referenceId}`,
          'status           failed',
          'transactionCode  INSUFFICIENT_FUNDS\\x1b]0;PAID\\x07\\u{202e}',
          'reason           Insufficient funds\\nstatus           successful\\r\\x1b[2K',
        ]);
      }
      expect(service.requests.map((request) => request.path)).toContain(`/v1/collections/check/${referenceId}`);
    } finally {
      await service.close();
    }
  });

  it('a journal that fails is one line naming it, without its password', async () => {
    const password = 'pa55-w0rd-zz';
    const unreachable = `postgres://tester:${password}@127.0.0.1:1/payments`;
    const missing = new URL(postgresUrl);
    missing.username = 'postgres';
    missing.password = password;
    missing.pathname = '/no_such_database';
    for (const [args, journalText] of [
      [['journal', 'list', '--journal', unreachable], 'journal postgres://tester:***@127.0.0.1:1/payments failed: '],
      [['journal', 'show', randomUUID(), '--journal', unreachable], 'journal postgres://tester:***@127.0.0.1:1/payments failed: '],
      [['journal', 'list', '--journal', missing.href], `journal postgres://postgres:***@${missing.host}/no_such_database failed: `],
      [
        ['journal', 'list', '--journal', `sqlite:${join(dir, 'no-such-dir', 'x.db')}`],
        `journal sqlite:${join(dir, 'no-such-dir', 'x.db')} failed: `,
      ],
    ] as const) {
      const { code, stdout, stderr } = await complete([...args]);
      expect(code, args.join(' ')).toBe(1);
      expectOneErrorLine(stderr);
      expect(stderr).toContain(journalText);
      expect(stdout + stderr).not.toContain(password);
    }
  });

  it('poll prints a line per change of status, with the check that saw it, as its help says', async () => {
    const slow = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 2, pendingMs: 60_000 } }) });
    try {
      const client = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: slow.collectionsBaseUrl, logLevel: 'off' });
      const { referenceId } = await initiate(client);
      const env = { ...environment(), COLLECTIONS_BASE_URL: slow.collectionsBaseUrl };
      const polled = await complete(
        ['poll', referenceId.toUpperCase(), '--interval', '10', '--initial-delay', '10', '--max-wait', '5000'],
        env,
      );
      expect(polled.code).toBe(0);
      const lines = polled.stdout.trimEnd().split('\n');
      expect(lines.slice(0, 2)).toEqual([
        expect.stringMatching(/^\d\d:\d\d:\d\d pending \(check 1\)$/),
        expect.stringMatching(/^\d\d:\d\d:\d\d successful \(check 3\)$/),
      ]);
      expect(lines[2]).toBe(`referenceId      ${referenceId}`);
      const help = await complete(['poll', '--help']);
      expect(help.stdout).toContain('a line is printed each time the status changes');
    } finally {
      await slow.close();
    }
  });
});

const OPEN = "('initiating', 'pending', 'unknown')";

interface Store {
  name: string;
  url: () => Promise<string>;
  open: (url: string) => PaymentJournal;
  /** How many open records hold a live lease now (a final record can never be leased again). */
  liveLeases: (url: string) => Promise<number>;
}

const stores: Store[] = [
  {
    name: 'SQLite',
    url: async () => `sqlite:${join(dir, `worker-${randomUUID()}.db`)}`,
    open: (url) => new SqliteJournal(url.slice('sqlite:'.length)),
    liveLeases: async (url) => {
      const db = new DatabaseSync(url.slice('sqlite:'.length));
      try {
        const row = db
          .prepare(`SELECT count(*) AS n FROM tap_payment_journal WHERE state IN ${OPEN} AND leased_to IS NOT NULL AND leased_until > ?`)
          .get(Date.now());
        return Number((row as { n: number }).n);
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'PostgreSQL',
    url: async () => {
      // A schema of its own, named through the connection's search_path: the CLI's table has the default name.
      const schema = `cli_${process.pid}_${randomUUID().slice(0, 8)}`;
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`CREATE SCHEMA ${schema}`);
      await client.end();
      const url = new URL(postgresUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return url.href;
    },
    open: (url) => new PostgresJournal({ connectionString: url }),
    liveLeases: async (url) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const result = await client.query(
          `SELECT count(*)::int AS n FROM tap_payment_journal WHERE state IN ${OPEN} AND leased_to IS NOT NULL AND leased_until > now()`,
        );
        return (result.rows[0] as { n: number }).n;
      } finally {
        await client.end();
      }
    },
  },
];

/** The value of one sample of the exposition text (0 when absent). */
function sample(text: string, name: string): number {
  const match = text.match(new RegExp(`^${name.replace(/[{}"+]/g, '\\$&')} (\\S+)$`, 'm'));
  return match ? Number(match[1]) : 0;
}

describe.each(stores)('worker on $name', (store) => {
  it('settles a backlog, counts it on /metrics, and stops on SIGTERM with nothing leased', { timeout: 40_000 }, async () => {
    const url = await store.url();
    const journal = store.open(url);
    const client = collections(journal);
    const backlog = await Promise.all([1, 2, 3, 4, 5].map((amount) => initiate(client, amount)));
    await journal.insert(strayRecord());

    const worker = cli([
      'worker',
      '--journal',
      url,
      '--rps',
      '50',
      // The key's budget shared through the journal (its table on this store), far above what the worker uses.
      '--key-rps',
      '1000',
      '--budget-lease-ms',
      '6000',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--initial-delay-ms',
      '0',
      '--interval-ms',
      '20',
      '--scan-interval-ms',
      '20',
    ]);
    try {
      const port = (await worker.waitFor(/on port (\d+)\./))[1];
      expect(worker.output().stdout).toContain("50 checks/s, within the key's shared budget of 1000/s; ");
      expect(worker.output().stdout).not.toContain(url.match(/:([^:@/]+)@/)?.[1] ?? '\u0000');
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);

      let metrics = '';
      const deadline = Date.now() + 20_000;
      // onSettled (which counts) runs before the journal records the final state: wait for both.
      while (
        sample(metrics, 'tap_collections_worker_settled_total{state="successful"}') < backlog.length ||
        sample(metrics, 'tap_collections_worker_open_payments') !== 1
      ) {
        if (Date.now() > deadline) throw new Error(`not settled:\n${metrics}\n${worker.output().stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const response = await fetch(`http://127.0.0.1:${port}/metrics`);
        expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
        metrics = await response.text();
      }
      expect(metrics).toContain('# TYPE tap_collections_worker_checks_total counter');
      expect(sample(metrics, 'tap_collections_worker_checks_total{status="200"}')).toBeGreaterThanOrEqual(backlog.length);
      expect(sample(metrics, 'tap_collections_worker_checks_total{status="404"}')).toBeGreaterThanOrEqual(1);
      // The stray payment stays open, leased by this worker.
      expect(sample(metrics, 'tap_collections_worker_open_payments')).toBe(1);
      expect(sample(metrics, 'tap_collections_worker_leased_payments')).toBe(1);
      expect(sample(metrics, 'tap_collections_worker_settle_latency_seconds_count')).toBe(backlog.length);
      expect(sample(metrics, 'tap_collections_worker_settle_latency_seconds_bucket{le="+Inf"}')).toBe(backlog.length);
      expect(sample(metrics, 'tap_collections_worker_pauses_total')).toBe(0);
      expect(await store.liveLeases(url)).toBe(1);
      for (const { referenceId } of backlog) expect((await journal.get(referenceId))?.state).toBe('successful');

      worker.child.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      expect(worker.output().stdout).toContain('its leases are released');
      expect(worker.output().stderr).toBe('');
      expect(await store.liveLeases(url)).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await journal.close?.();
    }
  });
});

describe('worker health', () => {
  it('answers 503 on /healthz while the journal does not answer', { timeout: 20_000 }, async () => {
    // A PostgreSQL URL nothing listens on: the worker starts, its journal never answers.
    const worker = cli(['worker', '--journal', 'postgres://nobody:secret@127.0.0.1:1/none', '--port', '0', '--host', '127.0.0.1']);
    try {
      const port = (await worker.waitFor(/on port (\d+)\./))[1];
      expect(worker.output().stdout).toContain('postgres://nobody:***@127.0.0.1:1/none');
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.text()).toMatch(/^journal not answering/);
      worker.child.kill('SIGINT');
      expect((await worker.exited).code).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
    }
  });
});

describe('the CLI decides what it says: recover --wait, and status and poll with --journal', () => {
  /** An `unknown` record the service does not hold, last written a minute ago by a till whose attempt window was `windowMs`. */
  async function unsent(file: string, windowMs: number): Promise<string> {
    const journal = new SqliteJournal(file, { now: () => Date.now() - 60_000 });
    const record = { ...openRecord(PHONES.succeeds, 'unknown'), sendWindowMs: windowMs };
    await journal.insert(record);
    await journal.close();
    return record.referenceId;
  }
  const stateIn = async (file: string, referenceId: string) => {
    const journal = new SqliteJournal(file);
    try {
      return (await journal.get(referenceId))?.state;
    } finally {
      await journal.close();
    }
  };

  it('one recover run starts its own watch and leaves the payment unknown; --wait keeps watching and decides it, a line per pass', async () => {
    const file = join(dir, `wait-${randomUUID()}.db`);
    const referenceId = await unsent(file, 1_000);
    const journalArgs = ['--journal', `sqlite:${file}`, '--not-found-grace-ms', '0'];
    const once = await complete(['recover', ...journalArgs]);
    expect(once.code).toBe(0);
    expect(once.stdout).toContain(`${referenceId}  unknown`);
    expect(await stateIn(file, referenceId)).toBe('unknown');

    const waited = await complete(['recover', ...journalArgs, '--wait']);
    expect(waited.code).toBe(0);
    expect(waited.stderr).toBe('');
    const lines = waited.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        /^\d\d:\d\d:\d\d pass 1: 1 payment\(s\) checked, 1 still open; 1 wait\(s\) for a verdict, the last from \d\d:\d\d:\d\d UTC$/,
      ),
      expect.stringMatching(/^\d\d:\d\d:\d\d pass 2: 1 payment\(s\) checked, 0 still open$/),
      `${referenceId}  not-sent    till: not-sent`,
      '1 payment(s) checked, 0 still open.',
    ]);
    expect(await stateIn(file, referenceId)).toBe('not-sent');
    // What status says of it now, with the journal: the verdict, not "no proof".
    const checked = await complete(['status', referenceId, '--journal', `sqlite:${file}`]);
    expect(checked.code).toBe(1);
    expectOneErrorLine(checked.stderr);
    expect(checked.stderr).toContain('the journal records it not-sent: the push never reached the service and cannot any more');
  });

  it('recover --wait stops on SIGINT, exits 1 and says what is left; the payment stays open', async () => {
    const file = join(dir, `wait-int-${randomUUID()}.db`);
    const referenceId = await unsent(file, 120_000);
    const run = cli(['recover', '--journal', `sqlite:${file}`, '--wait']);
    await run.waitFor(/pass 1: 1 payment\(s\) checked, 1 still open; 1 wait/);
    run.child.kill('SIGINT');
    expect((await run.exited).code).toBe(1);
    expect(run.output().stdout).toContain(`${referenceId}  unknown`);
    expect(run.output().stderr).toBe(
      'tap-collections-sdk: stopped waiting (SIGINT) with 1 payment(s) not yet decidable; run recover --wait again\n',
    );
    expect(await stateIn(file, referenceId)).toBe('unknown');
  });

  it('status names the exact command that can decide a payment the service does not show', async () => {
    const bare = await complete(['status', randomUUID()]);
    expect(bare.code).toBe(1);
    expectOneErrorLine(bare.stderr);
    expect(bare.stderr).toContain('(tap-collections-sdk recover --journal <url> --wait decides that)');

    const file = join(dir, `status-${randomUUID()}.db`);
    const referenceId = await unsent(file, 120_000);
    const journaled = await complete(['status', referenceId, '--journal', `sqlite:${file}`]);
    expect(journaled.code).toBe(1);
    expectOneErrorLine(journaled.stderr);
    expect(journaled.stderr).toMatch(/a verdict is possible from \d{4}-\d\d-\d\dT[\d:.]+Z/);
    expect(journaled.stderr).toContain(`(tap-collections-sdk recover --journal sqlite:${file} --wait decides it then)`);
  });

  it('poll and status with --journal record what they see', async () => {
    const file = join(dir, `seen-${randomUUID()}.db`);
    const journal = new SqliteJournal(file);
    const client = collections(journal);
    const failing = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.insufficientFunds, amount: 5 });
    const succeeding = await initiate(client);
    await journal.close();
    expect(await stateIn(file, failing.referenceId)).toBe('pending');

    const polled = await complete(['poll', failing.referenceId, '--journal', `sqlite:${file}`, '--interval', '10']);
    expect(polled.code).toBe(0);
    expect(polled.stdout).toMatch(/^status +failed$/m);
    expect(await stateIn(file, failing.referenceId)).toBe('failed');

    const checked = await complete(['status', succeeding.referenceId, '--journal', `sqlite:${file}`]);
    expect(checked.code).toBe(0);
    expect(await stateIn(file, succeeding.referenceId)).toBe('successful');
  });
});

describe('worker while its journal goes away and comes back (a PostgreSQL server of its own, stopped and started)', () => {
  let server: RunningPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  it('says so in one line with the cause and one when it is back; /metrics keeps its gauges and adds journal_up', {
    timeout: 60_000,
  }, async () => {
    // Trust authentication ignores the password: it is here to prove it is never printed.
    const url = server.connectionString.replace('postgres@', 'postgres:s3cret-pw@');
    const journal = new PostgresJournal({ connectionString: url });
    for (let index = 0; index < 5; index++) await journal.insert(strayRecord());
    await journal.close();
    const worker = cli([
      'worker',
      '--journal',
      url,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--initial-delay-ms',
      '0',
      '--interval-ms',
      '20',
      '--scan-interval-ms',
      '20',
    ]);
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const until = async (done: (metrics: string) => boolean) => {
      const deadline = Date.now() + 20_000;
      for (let metrics = await scrape(); ; metrics = await scrape()) {
        if (done(metrics)) return metrics;
        if (Date.now() > deadline) throw new Error(`not reached:\n${metrics}\n${worker.output().stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    let port = '';
    try {
      port = (await worker.waitFor(/on port (\d+)\./))[1] as string;
      await until(
        (metrics) => sample(metrics, 'tap_collections_worker_leased_payments') === 5 && sample(metrics, 'tap_collections_journal_up') === 1,
      );
      await server.halt();
      const down = await until((metrics) => /^tap_collections_journal_up 0$/m.test(metrics));
      expect(sample(down, 'tap_collections_worker_open_payments')).toBe(5);
      // Every lease, renewal and record fails meanwhile, cycle after cycle (every 20 ms): none of them is a line.
      await until(() => /could not use the journal/.test(worker.output().stderr));
      const cycles = Date.now() + 1_500;
      await until(() => Date.now() > cycles);
      await server.resume();
      const back = await until((metrics) => /^tap_collections_journal_up 1$/m.test(metrics));
      expect(sample(back, 'tap_collections_worker_open_payments')).toBe(5);
      await until(() => /journal answers again/.test(worker.output().stderr));
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      const { stderr } = worker.output();
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toEqual([
        expect.stringMatching(
          /^warning: \[tap-collections-sdk\] settlement worker: could not use the journal; .*: journal postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres failed: \S/,
        ),
        expect.stringMatching(
          /^warning: \[tap-collections-sdk\] settlement worker: the journal answers again \(after \d+ s\); settling goes on$/,
        ),
      ]);
      expect(stderr).not.toContain('s3cret-pw');
    } finally {
      worker.child.kill('SIGKILL');
    }
  });
});

describe('a wrong COLLECTIONS_BASE_URL (a server whose every path but /health answers a bare 404)', () => {
  let root: LoopbackServer;
  beforeAll(async () => {
    root = await startLoopbackServer();
    root.handle((request, response) => {
      if (request.url === '/health') response.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
      else response.writeHead(404).end();
    });
  });
  afterAll(() => root?.close());
  const wrongEnvironment = () => ({ ...environment(), COLLECTIONS_BASE_URL: root.url });

  /** A push the service holds pending, journaled unknown (its create timed out) a minute ago. */
  async function heldPending(file: string): Promise<string> {
    const { referenceId } = await initiate(collections());
    const journal = new SqliteJournal(file, { now: () => Date.now() - 60_000 });
    await journal.insert({ ...openRecord(PHONES.succeeds, 'unknown'), referenceId: referenceId, sendWindowMs: 1_000 });
    await journal.close();
    return referenceId;
  }

  it('status never prints "no collection": a ConfigurationError naming the base URL', async () => {
    const result = await complete(['status', randomUUID()], wrongEnvironment());
    expect(result.code).toBe(1);
    expectOneErrorLine(result.stderr);
    expect(result.stderr).toMatch(/ConfigurationError: .*baseUrl/);
    expect(result.stderr).not.toMatch(/no collection|does not show a collection/);
  });

  it('recover leaves the payment open and says so per payment; the journal is untouched', async () => {
    const file = join(dir, `wrong-${randomUUID()}.db`);
    const referenceId = await heldPending(file);
    const result = await complete(['recover', '--journal', `sqlite:${file}`], wrongEnvironment());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^error: \\[tap-collections-sdk\\] recover: ${referenceId} left unknown: .*baseUrl`, 'm'));
    expect(result.stderr).toMatch(
      new RegExp(`tap-collections-sdk: ConfigurationError: recover\\(\\): 1 payment\\(s\\) left open .*${referenceId} \\(unknown\\)`),
    );
    const journal = new SqliteJournal(file);
    expect((await journal.get(referenceId))?.state).toBe('unknown');
    await journal.close();
  });

  it('worker: closes nothing, logs it at error, and /healthz answers 503 naming the base URL', { timeout: 30_000 }, async () => {
    const file = join(dir, `wrong-worker-${randomUUID()}.db`);
    const referenceId = await heldPending(file);
    const worker = cli(
      [
        'worker',
        '--journal',
        `sqlite:${file}`,
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--initial-delay-ms',
        '0',
        '--scan-interval-ms',
        '20',
      ],
      wrongEnvironment(),
    );
    try {
      const port = (await worker.waitFor(/on port (\d+)\./))[1];
      const deadline = Date.now() + 15_000;
      let health = await fetch(`http://127.0.0.1:${port}/healthz`);
      while (health.status === 200) {
        if (Date.now() > deadline) throw new Error(`still healthy:\n${worker.output().stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        health = await fetch(`http://127.0.0.1:${port}/healthz`);
      }
      expect(health.status).toBe(503);
      expect(await health.text()).toMatch(/^unhealthy: ConfigurationError: .*baseUrl/);
      expect(worker.output().stderr).toMatch(/^error: \[tap-collections-sdk\] settlement worker: no payment is closed on a 404/m);
      worker.child.kill('SIGTERM');
      expect((await worker.exited).code).toBe(0);
      const journal = new SqliteJournal(file);
      expect((await journal.get(referenceId))?.state).toBe('unknown');
      await journal.close();
    } finally {
      worker.child.kill('SIGKILL');
    }
  });
});
