/**
 * `npm run test:runtimes`: the packed package on every runtime it claims. Packs the SDK (`npm pack`), installs the
 * tarball into one small consumer project per runtime (`ecosystem/<runtime>`), starts the packed bin's simulator on
 * loopback (with CORS, for the browser page), runs the one shared flow (`ecosystem/flow.mjs`) on each runtime and prints
 * a matrix step × runtime, then `N passed, N failed`. Exits non-zero on any failure; a runtime that is missing or
 * crashes fails every one of its steps, never skips.
 *
 * The runtimes come pinned from `ecosystem/runtimes/package.json` (installed there, apart from the project's own
 * dependencies, so `npm ci` stays fast); Chromium is Debian's `/usr/bin/chromium`. `--no-build` packs the existing
 * `dist/` (CI has just built it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const ecosystem = path.join(root, 'ecosystem');
const runtimesDir = path.join(ecosystem, 'runtimes');
const bin = (name: string) => path.join(runtimesDir, 'node_modules', '.bin', name);
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const ENV_NAMES = ['TAP_API_KEY', 'TAP_BASE_URL', 'COLLECTIONS_API_KEY', 'COLLECTIONS_BASE_URL'] as const;
const ROW_TIMEOUT_MS = 90_000;

/** The steps of the flow, in its order (rows of the matrix). */
const STEPS = [
  'health',
  'tap query',
  'mobileNumberFor',
  'initiate',
  'poll to settled',
  'RequestValidationError',
  'AuthenticationError',
  'abort mid-poll',
  'PollTimeoutError',
  'refused connection',
  'blocked port',
  'env defaults',
] as const;
/** The steps a Deno without permissions runs: each must end as a ConfigurationError naming the flag. */
const DENIED_STEPS = ['health', 'initiate', 'env defaults'] as const;

interface StepResult {
  step: string;
  ok: boolean;
  detail: string;
}
interface Setup {
  tapBaseUrl: string;
  collectionsBaseUrl: string;
  refusedBaseUrl: string;
  fixtures: Record<string, string>;
  network: 'granted' | 'denied';
  env: 'granted' | 'denied' | 'none';
  refusal: 'provable' | 'unprovable';
  browser: boolean;
}
interface Column {
  label: string;
  version: string;
  steps: readonly string[];
  results: StepResult[];
  error?: string;
}

// ---------------------------------------------------------------------------------------------------------------------
// Processes

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return new Promise<Ran>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? root,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? ROW_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function mustRun(command: string, args: readonly string[], cwd: string = root): Promise<string> {
  const result = await run(command, args, { cwd, timeoutMs: 300_000 });
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.code}):\n${result.stderr || result.stdout}`);
  return result.stdout;
}

/** A loopback port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts a long-running process and resolves once `pattern` appears on its stdout. */
function startProcess(command: string, args: readonly string[], cwd: string, pattern: RegExp) {
  return new Promise<{ child: ChildProcess; match: RegExpMatchArray }>((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${path.basename(command)} did not start:\n${output}`));
    }, 30_000);
    const onData = (chunk: string) => {
      output += chunk;
      const match = output.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match });
      }
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${path.basename(command)} exited (${code}):\n${output}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// Preparation

/**
 * Installs the pinned runtimes unless what is installed was installed from this very package.json. Every version is
 * exact there and the runtimes pin their platform packages exactly, so no lockfile is kept: the registry here lacks
 * the other platforms' binaries, which `npm ci` would insist on finding in a lockfile.
 */
export async function ensureRuntimes(): Promise<void> {
  const manifest = readFileSync(path.join(runtimesDir, 'package.json'));
  const stamp = path.join(runtimesDir, 'node_modules', '.installed-from-sha256');
  const digest = createHash('sha256').update(manifest).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return;
  console.log('Installing the runtimes (ecosystem/runtimes)…');
  await mustRun('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock'], runtimesDir);
  writeFileSync(stamp, digest);
}

/** Packs the SDK and installs the tarball into a fresh copy of each consumer project. */
async function prepareConsumers(work: string): Promise<Record<string, string>> {
  const packed = JSON.parse(await mustRun('npm', ['pack', '--json', '--pack-destination', work])) as Array<{ filename: string }>;
  const tarball = path.join(work, packed[0]?.filename ?? '');
  const consumers: Record<string, string> = {};
  await Promise.all(
    ['node', 'bun', 'deno', 'workerd', 'browser'].map(async (name) => {
      const dir = path.join(work, name);
      cpSync(path.join(ecosystem, name), dir, { recursive: true });
      cpSync(path.join(ecosystem, 'flow.mjs'), path.join(dir, 'flow.mjs'));
      cpSync(tarball, path.join(dir, 'tap-collections-sdk.tgz'));
      await mustRun('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock'], dir);
      consumers[name] = dir;
    }),
  );
  // Bundled as a partner's build would bundle them (wrangler and most web builds use esbuild).
  const bundle = (dir: string, entry: string, outfile: string) =>
    build({
      entryPoints: [path.join(dir, entry)],
      outfile: path.join(dir, outfile),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      logLevel: 'silent',
    });
  await Promise.all([
    bundle(consumers.workerd as string, 'worker.mjs', 'worker.bundle.mjs'),
    bundle(consumers.browser as string, 'page.mjs', 'page.bundle.mjs'),
  ]);
  return consumers;
}

// ---------------------------------------------------------------------------------------------------------------------
// Runtimes

function parseResults(output: string): StepResult[] {
  const line = output.split('\n').find((candidate) => candidate.startsWith('FLOW_RESULTS '));
  if (line === undefined) throw new Error('the flow printed no results');
  return JSON.parse(line.slice('FLOW_RESULTS '.length)) as StepResult[];
}

async function runScript(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<StepResult[]> {
  if (!existsSync(command)) throw new Error(`missing runtime: ${command}`);
  const result = await run(command, args, { cwd, env });
  try {
    return parseResults(result.stdout);
  } catch (error) {
    throw new Error(`${(error as Error).message} (exit ${result.code}): ${result.stderr.slice(-1500)}`);
  }
}

async function version(command: string, args: readonly string[], pattern: RegExp): Promise<string> {
  if (!existsSync(command)) return 'missing';
  const { stdout } = await run(command, args, { timeoutMs: 30_000 });
  return stdout.match(pattern)?.[1] ?? stdout.trim();
}

/** workerd: the bundled worker behind a config whose outbound network allows loopback; the flow runs per request. */
async function runWorkerd(dir: string, setup: Setup, env: Record<string, string>): Promise<StepResult[]> {
  if (!existsSync(bin('workerd'))) throw new Error(`missing runtime: ${bin('workerd')}`);
  const values: Record<string, string> = { FLOW_SETUP: JSON.stringify(setup), ...env };
  const config = readFileSync(path.join(dir, 'config.capnp'), 'utf8').replace(/@([A-Z_]+)@/g, (_all, name: string) =>
    JSON.stringify(values[name] ?? ''),
  );
  writeFileSync(path.join(dir, 'config.run.capnp'), config);
  const port = await freePort();
  const child = spawn(bin('workerd'), ['serve', 'config.run.capnp', '--socket-addr', `http=127.0.0.1:${port}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(ROW_TIMEOUT_MS) });
        const text = await answer.text();
        if (!answer.ok) throw new Error(`workerd answered ${answer.status}: ${text.slice(0, 1500)}`);
        return JSON.parse(text) as StepResult[];
      } catch (error) {
        const refused = (error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED';
        if (!refused || attempt >= 100 || child.exitCode !== null) throw new Error(`${(error as Error).message}\n${output.slice(-1500)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await stop(child);
  }
}

interface PlaywrightPage {
  goto(url: string): Promise<unknown>;
  waitForFunction(body: string, arg: unknown, options: { timeout: number }): Promise<unknown>;
  evaluate(body: string): Promise<unknown>;
  on(event: 'pageerror' | 'console', listener: (value: { message?: string; text?: () => string }) => void): void;
}
interface PlaywrightBrowser {
  version(): string;
  newPage(): Promise<PlaywrightPage>;
  close(): Promise<void>;
}
interface Playwright {
  chromium: { launch(options: { executablePath: string; headless: boolean; args: string[] }): Promise<PlaywrightBrowser> };
}

/** Serves a directory on loopback, so the page's origin differs from the simulator's (a real cross-origin call). */
async function serveDirectory(dir: string): Promise<Server> {
  const types: Record<string, string> = { '.html': 'text/html', '.mjs': 'text/javascript' };
  const server = createServer((request, response) => {
    const name = path.basename(new URL(request.url ?? '/', 'http://x').pathname) || 'index.html';
    const file = path.join(dir, name);
    if (!existsSync(file)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': `${types[path.extname(name)] ?? 'application/octet-stream'}; charset=utf-8` });
    response.end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function openChromium(): Promise<PlaywrightBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`missing runtime: ${CHROMIUM} (apt-get install chromium)`);
  const entry = path.join(runtimesDir, 'node_modules', 'playwright-core', 'index.mjs');
  const { chromium } = (await import(pathToFileURL(entry).href)) as Playwright;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

async function runChromium(browser: PlaywrightBrowser, dir: string, setup: Setup): Promise<StepResult[]> {
  const server = await serveDirectory(dir);
  const errors: string[] = [];
  try {
    const page = await browser.newPage();
    page.on('pageerror', (error) => errors.push(error.message ?? String(error)));
    const { port } = server.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}/index.html#${encodeURIComponent(JSON.stringify(setup))}`);
    try {
      await page.waitForFunction('window.flowResults !== undefined', null, { timeout: ROW_TIMEOUT_MS });
    } catch (error) {
      throw new Error(`${(error as Error).message}; page errors: ${errors.join('; ')}`);
    }
    return (await page.evaluate('window.flowResults')) as StepResult[];
  } finally {
    server.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// The matrix

async function column(
  label: string,
  versionOf: Promise<string>,
  steps: readonly string[],
  body: () => Promise<StepResult[]>,
): Promise<Column> {
  const started = Date.now();
  const ran: Column = { label, version: await versionOf.catch(() => 'unknown'), steps, results: [] };
  try {
    ran.results = await body();
  } catch (error) {
    ran.error = (error as Error).message;
  }
  process.stderr.write(`  ${label}: ${Date.now() - started} ms\n`);
  return ran;
}

/** The result of a step in a column; a step the runtime should have run but did not is a failure. */
function cell(ran: Column, step: string): StepResult | undefined {
  if (!ran.steps.includes(step)) return undefined;
  return ran.results.find((result) => result.step === step) ?? { step, ok: false, detail: ran.error ?? 'not run' };
}

function printMatrix(columns: readonly Column[]): { passed: number; failed: number } {
  const width = Math.max(...STEPS.map((step) => step.length)) + 2;
  const labelWidth = (ran: Column) => Math.max(ran.label.length, 4) + 2;
  const lines = [`${''.padEnd(width)}${columns.map((ran) => ran.label.padEnd(labelWidth(ran))).join('')}`];
  let passed = 0;
  let failed = 0;
  const failures: string[] = [];
  for (const step of STEPS) {
    let line = step.padEnd(width);
    for (const ran of columns) {
      const result = cell(ran, step);
      if (result === undefined) line += '-'.padEnd(labelWidth(ran));
      else if (result.ok) {
        passed++;
        line += 'ok'.padEnd(labelWidth(ran));
      } else {
        failed++;
        line += 'FAIL'.padEnd(labelWidth(ran));
        failures.push(`${ran.label} / ${step}: ${result.detail}`);
      }
    }
    lines.push(line.trimEnd());
  }
  console.log(`\n${lines.join('\n')}\n`);
  console.log(`Versions: ${columns.map((ran) => `${ran.label} ${ran.version}`).join(', ')}`);
  console.log('("-": not applicable; "deno -P": Deno without --allow-net and --allow-env)');
  if (failures.length > 0) console.log(`\nFailures:\n${failures.map((failure) => `  ${failure}`).join('\n')}`);
  return { passed, failed };
}

async function main(): Promise<void> {
  const started = Date.now();
  await ensureRuntimes();
  if (!process.argv.includes('--no-build')) await mustRun('npm', ['run', 'build', '--silent']);
  const work = mkdtempSync(path.join(tmpdir(), 'tap-collections-runtimes-'));
  let simulator: ChildProcess | undefined;
  try {
    const consumers = await prepareConsumers(work);
    const nodeDir = consumers.node as string;
    const packedTesting = path.join(nodeDir, 'node_modules', 'tap-collections-sdk', 'dist', 'testing');
    const started_ = await startProcess(
      process.execPath,
      [path.join(packedTesting, 'cli.js'), 'simulate', '--port', '0', '--cors', '--quiet'],
      nodeDir,
      /listening on (http:\/\/\S+)/,
    );
    simulator = started_.child;
    const url = started_.match[1] as string;
    const testing = (await import(pathToFileURL(path.join(packedTesting, 'index.js')).href)) as Record<string, Record<string, string>>;
    const fixtures = {
      tapKey: testing.TAP_API_KEYS?.primary ?? '',
      collectionsKey: testing.COLLECTIONS_API_KEYS?.primary ?? '',
      tag: testing.TAGS?.active ?? '',
      product: testing.PRODUCTS?.primary ?? '',
      phone: testing.PHONES?.succeeds ?? '',
      neverSettles: testing.PHONES?.neverSettles ?? '',
    };
    const env = {
      TAP_API_KEY: fixtures.tapKey,
      TAP_BASE_URL: `${url}/tap`,
      COLLECTIONS_API_KEY: fixtures.collectionsKey,
      COLLECTIONS_BASE_URL: `${url}/collections`,
    };
    const setup: Setup = {
      tapBaseUrl: env.TAP_BASE_URL,
      collectionsBaseUrl: env.COLLECTIONS_BASE_URL,
      refusedBaseUrl: `http://127.0.0.1:${await freePort()}/collections`,
      fixtures,
      network: 'granted',
      env: 'granted',
      refusal: 'provable',
      browser: false,
    };
    const childEnv = { ...process.env, ...env };
    const node22 = bin('node');
    const nodeVersion = (command: string) => version(command, ['--version'], /v(\S+)/);
    const script =
      (command: string, args: readonly string[], dir: string, given: Setup = setup) =>
      () =>
        runScript(command, [...args, JSON.stringify(given)], dir, childEnv);
    const deno = bin('deno');
    const denoVersion = version(deno, ['--version'], /deno (\S+)/);
    const columns: Column[] = [];
    columns.push(await column('node22 esm', nodeVersion(node22), STEPS, script(node22, ['main.mjs'], nodeDir)));
    columns.push(await column('node22 cjs', nodeVersion(node22), STEPS, script(node22, ['main.cjs'], nodeDir)));
    columns.push(await column('node24 esm', nodeVersion(process.execPath), STEPS, script(process.execPath, ['main.mjs'], nodeDir)));
    columns.push(await column('node24 cjs', nodeVersion(process.execPath), STEPS, script(process.execPath, ['main.cjs'], nodeDir)));
    columns.push(
      await column('bun', version(bin('bun'), ['--version'], /(\S+)/), STEPS, script(bin('bun'), ['main.mjs'], consumers.bun as string)),
    );
    const denoDir = consumers.deno as string;
    const allow = ['run', '--allow-net=127.0.0.1', `--allow-env=${ENV_NAMES.join(',')}`, 'main.mjs'];
    columns.push(await column('deno', denoVersion, STEPS, script(deno, allow, denoDir)));
    const denied: Setup = { ...setup, network: 'denied', env: 'denied' };
    columns.push(await column('deno -P', denoVersion, DENIED_STEPS, script(deno, ['run', 'main.mjs'], denoDir, denied)));
    const workerdSetup: Setup = { ...setup, refusal: 'unprovable' };
    columns.push(
      await column('workerd', version(bin('workerd'), ['--version'], /workerd (\S+)/), STEPS, () =>
        runWorkerd(consumers.workerd as string, workerdSetup, env),
      ),
    );
    const browser = await openChromium().catch((error: unknown) => error as Error);
    const browserSetup: Setup = { ...setup, refusal: 'unprovable', env: 'none', browser: true };
    columns.push(
      await column('chromium', Promise.resolve(browser instanceof Error ? 'missing' : browser.version()), STEPS, async () => {
        if (browser instanceof Error) throw browser;
        return runChromium(browser, consumers.browser as string, browserSetup);
      }),
    );
    if (!(browser instanceof Error)) await browser.close();
    const { passed, failed } = printMatrix(columns);
    console.log(`\nRuntime matrix in ${Math.round((Date.now() - started) / 1000)} s.`);
    console.log(`${passed} passed, ${failed} failed`);
    if (failed > 0) process.exitCode = 1;
  } finally {
    if (simulator) await stop(simulator);
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  console.log('0 passed, 1 failed');
  process.exitCode = 1;
});
