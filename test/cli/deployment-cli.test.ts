/**
 * The incident with real processes: two simulators (production and a sandbox, each the built CLI's `simulate`), a
 * payment pushed to production whose answer was lost (the record `unknown`, production holding it), and the built CLI
 * `worker` started with the sandbox's base URL on production's SQLite journal (a copied .env). The record stays open,
 * the worker's error line names both base URLs, `/healthz` answers 503, and the sandbox is asked nothing about it.
 * Run `npm run build` (or `npx tsup`) first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CollectionsClient, UnknownOutcomeError } from '../../src/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS } from '../../src/testing/index.ts';

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const bin = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
let dir: string;
const children: ChildProcess[] = [];

interface Started {
  readonly child: ChildProcess;
  readonly output: () => { stdout: string; stderr: string };
  readonly waitFor: (pattern: RegExp, stream?: 'stdout' | 'stderr') => Promise<RegExpMatchArray>;
}

function start(args: string[], env: NodeJS.ProcessEnv = process.env): Started {
  const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const text = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    text.stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    text.stderr += chunk;
  });
  const waitFor = async (pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout') => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const match = text[stream].match(pattern);
      if (match) return match;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern} in ${stream}:\n${text.stdout}\n${text.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, output: () => ({ ...text }), waitFor };
}

async function simulator(): Promise<{ process: Started; baseUrl: string }> {
  // A collection never settles: production holds the payment pending; the sandbox holds none of it.
  const started = start(['simulate', '--port', '0', '--pending-polls', 'Infinity', '--pending-ms', 'Infinity']);
  const baseUrl = (await started.waitFor(/Collections base URL: +(\S+)/))[1] as string;
  return { process: started, baseUrl };
}

beforeAll(async () => {
  if (!existsSync(bin)) throw new Error('dist/cli/bin.js is missing: run `npm run build` before these tests');
  dir = await mkdtemp(join(tmpdir(), 'tap-collections-deployment-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('a worker pointed at the sandbox, on the journal of production', () => {
  it('leaves the record open, logs an error naming both base URLs, answers 503 on /healthz, asks the sandbox nothing', {
    timeout: 40_000,
  }, async () => {
    const [production, sandbox] = await Promise.all([simulator(), simulator()]);
    const file = join(dir, 'journal.db');
    const journal = new SqliteJournal(file);
    // The till's push reaches production, and every answer is lost on the way back: the outcome is unknown.
    const till = new CollectionsClient({
      apiKey: COLLECTIONS_API_KEYS.primary,
      baseUrl: production.baseUrl,
      journal,
      maxRetries: 0,
      logLevel: 'off',
      fetch: async (input, init) => {
        await fetch(input, init);
        throw new TypeError('fetch failed');
      },
    });
    const pushed = await till.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(pushed).toBeInstanceOf(UnknownOutcomeError);
    const { referenceId } = pushed as UnknownOutcomeError;
    await journal.close();

    const sandboxEnvironment = {
      ...process.env,
      COLLECTIONS_API_KEY: COLLECTIONS_API_KEYS.primary,
      COLLECTIONS_BASE_URL: sandbox.baseUrl,
      COLLECTIONS_JOURNAL: '',
    };
    const worker = start(
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
        '--interval-ms',
        '100',
        '--scan-interval-ms',
        '100',
      ],
      sandboxEnvironment,
    );
    const port = (await worker.waitFor(/on port (\d+)\./))[1];
    const line = (await worker.waitFor(/^error: .*settlement worker: payments pushed to .*$/m, 'stderr'))[0];
    expect(line).toContain(production.baseUrl);
    expect(line).toContain(sandbox.baseUrl);
    expect(line).not.toContain(COLLECTIONS_API_KEYS.primary);
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.text()).toContain(production.baseUrl);
    worker.child.kill('SIGTERM');
    await new Promise((resolve) => worker.child.once('exit', resolve));

    // recover from a shell with the same copied environment: each such payment named, the journal untouched, exit 1.
    const recovering = start(['recover', '--journal', `sqlite:${file}`], sandboxEnvironment);
    const code = await new Promise((resolve) => recovering.child.once('exit', resolve));
    expect(code).toBe(1);
    const { stderr } = recovering.output();
    expect(stderr).toMatch(
      new RegExp(`recover: ${referenceId} left unknown: .*${literal(production.baseUrl)}.*${literal(sandbox.baseUrl)}`),
    );
    expect(stderr).toContain('ConfigurationError: recover(): 1 payment(s) left open because their push went to another deployment');

    const after = new SqliteJournal(file);
    try {
      expect((await after.get(referenceId))?.state).toBe('unknown');
    } finally {
      await after.close();
    }
    // The simulator logs each request's path (a status check's names the reference): the sandbox was asked nothing.
    expect(sandbox.process.output().stdout).not.toContain(referenceId);
  });
});
