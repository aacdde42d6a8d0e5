/**
 * The simulator in a process of its own: the `simulate` command, and a script that closes the server and must then
 * exit by itself (no open handles). Both are bundled from the sources with esbuild into a directory without
 * node_modules, which also proves that the loopback face works without msw installed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS_API_KEYS, startSimulator, TAGS, TAP_API_KEYS } from '../../src/testing/index.js';

const source = (file: string) => fileURLToPath(new URL(`../../src/testing/${file}`, import.meta.url));
let dir: string;
let cliPath: string;
let closeScriptPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tap-collections-simulator-'));
  cliPath = join(dir, 'cli.mjs');
  closeScriptPath = join(dir, 'close.mjs');
  const entry = join(dir, 'close-entry.ts');
  await writeFile(
    entry,
    `import { COLLECTIONS_API_KEYS, createSimulator, createSimulatorHandlers, startSimulator } from ${JSON.stringify(source('index.ts'))};
const running = await startSimulator();
const headers = { authorization: 'Bearer ' + COLLECTIONS_API_KEYS.primary };
const health = (await fetch(running.collectionsBaseUrl + '/health', { headers })).status;
running.simulator.injectFault({ route: '*', latencyMs: 60000 });
const pending = fetch(running.collectionsBaseUrl + '/health', { headers }).then(() => 'answered', () => 'failed');
await new Promise((resolve) => setTimeout(resolve, 50));
await running.close();
const msw = await createSimulatorHandlers(createSimulator(), { tapBaseUrl: 'https://a.test', collectionsBaseUrl: 'https://b.test' })
  .then(() => 'loaded', (error) => error.message);
console.log(JSON.stringify({ health, pending: await pending, msw }));
`,
  );
  const shared: BuildOptions = { bundle: true, platform: 'node', format: 'esm', target: 'node22', external: ['msw'], logLevel: 'silent' };
  await Promise.all([
    build({ ...shared, entryPoints: [fileURLToPath(new URL('../../src/cli/bin.ts', import.meta.url))], outfile: cliPath }),
    build({ ...shared, entryPoints: [entry], outfile: closeScriptPath }),
  ]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  output: () => { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitFor: (pattern: RegExp) => Promise<RegExpMatchArray>;
}

function run(file: string, args: string[]): Run {
  const child = spawn(process.execPath, [file, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const waitFor = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const match = stdout.match(pattern);
      if (match) return match;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${pattern} in output:\n${stdout}\n${stderr}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  };
  return { child, output: () => ({ stdout, stderr }), exited, waitFor };
}

async function exitWithin(process: Run, ms: number) {
  const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
  const result = await Promise.race([process.exited, timer]);
  if (result === 'timeout') {
    process.child.kill('SIGKILL');
    throw new Error(`the process did not exit within ${ms} ms`);
  }
  return result;
}

describe('close()', () => {
  it('leaves no open handles: the process exits by itself, the in-flight request fails, and msw is not needed', async () => {
    const script = run(closeScriptPath, []);
    const { code } = await exitWithin(script, 5000);
    expect(code).toBe(0);
    const result = JSON.parse(script.output().stdout.trim());
    expect(result).toEqual({ health: 200, pending: 'failed', msw: expect.stringMatching(/needs msw/) });
  });
});

describe('tap-collections-sdk simulate', () => {
  it('prints both base URLs and the fixture keys, serves them, logs requests, and stops on SIGTERM', async () => {
    const cli = run(cliPath, ['simulate', '--port', '0']);
    await cli.waitFor(/Press Ctrl\+C to stop/);
    const { stdout } = cli.output();
    const tapBaseUrl = stdout.match(/Tap base URL:\s+(\S+)/)?.[1] as string;
    const collectionsBaseUrl = stdout.match(/Collections base URL:\s+(\S+)/)?.[1] as string;
    expect(tapBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/tap$/);
    expect(collectionsBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/collections$/);
    for (const value of [...Object.values(TAP_API_KEYS), ...Object.values(COLLECTIONS_API_KEYS), TAGS.active])
      expect(stdout).toContain(value);

    const health = await fetch(`${collectionsBaseUrl}/health`, { headers: { authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}` } });
    expect(health.status).toBe(200);
    const list = await fetch(`${tapBaseUrl}/v1/tap/partners/customer-queries`, { headers: { 'x-api-key': TAP_API_KEYS.primary } });
    expect(await list.json()).toEqual({ success: true, data: [] });
    await cli.waitFor(/GET \/tap\/v1\/tap\/partners\/customer-queries → 200/);

    cli.child.kill('SIGTERM');
    expect(await exitWithin(cli, 3000)).toEqual({ code: 0, signal: null });
    expect(cli.output().stdout).toContain('Simulator stopped (SIGTERM)');
  });

  it('stops on SIGINT, honouring --quiet and the settlement options', async () => {
    const cli = run(cliPath, ['simulate', '--port=0', '--quiet', '--pending-polls', '0', '--pending-ms', 'Infinity']);
    await cli.waitFor(/Press Ctrl\+C to stop/);
    expect(cli.output().stdout).toContain('after 0 pending status check(s) or Infinity ms');
    const collectionsBaseUrl = cli.output().stdout.match(/Collections base URL:\s+(\S+)/)?.[1] as string;
    await fetch(`${collectionsBaseUrl}/health`, { headers: { authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}` } });
    cli.child.kill('SIGINT');
    expect(await exitWithin(cli, 3000)).toEqual({ code: 0, signal: null });
    expect(cli.output().stdout).not.toContain('→ 200');
  });

  it('prints usage for --help, and exits 2 on bad usage', async () => {
    const help = run(cliPath, ['--help']);
    expect((await exitWithin(help, 3000)).code).toBe(0);
    expect(help.output().stdout).toMatch(/^Usage: tap-collections-sdk <command>/);
    const simulateHelp = run(cliPath, ['simulate', '--help']);
    expect((await exitWithin(simulateHelp, 3000)).code).toBe(0);
    expect(simulateHelp.output().stdout).toMatch(/^Usage: tap-collections-sdk simulate/);
    for (const args of [[], ['serve'], ['simulate', '--bogus', '1'], ['simulate', '--port', 'abc'], ['simulate', '--port']]) {
      const bad = run(cliPath, args);
      expect((await exitWithin(bad, 3000)).code).toBe(2);
      expect(bad.output().stderr).toMatch(/^tap-collections-sdk: /);
    }
  });

  it('exits 1 when the port is taken', async () => {
    const occupant = await startSimulator();
    try {
      const cli = run(cliPath, ['simulate', '--port', String(occupant.port)]);
      expect((await exitWithin(cli, 3000)).code).toBe(1);
      expect(cli.output().stderr).toMatch(/could not start: .*EADDRINUSE/);
    } finally {
      await occupant.close();
    }
  });
});
