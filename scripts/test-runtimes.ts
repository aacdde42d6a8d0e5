/**
 * `npm run test:runtimes`: the packed package on every runtime it claims. Packs the SDK (`npm pack`), installs the
 * tarball into one small consumer project per runtime (`ecosystem/<runtime>`), starts the packed bin's simulator on
 * loopback (with CORS, for the browser page), runs the one shared flow (`ecosystem/flow.mjs`) on each runtime and prints
 * a matrix step × runtime; then runs every example as the README says on Node.js 22; then `N passed, N failed`. Exits
 * non-zero on any failure; a runtime that is missing or crashes fails every one of its steps, never skips.
 *
 * The runtimes come pinned from `ecosystem/runtimes/package.json` (installed there, apart from the project's own
 * dependencies, so `npm ci` stays fast); Chromium is Debian's `/usr/bin/chromium`. `--no-build` packs the existing
 * `dist/` (CI has just built it).
 */

import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { bin, openChromium, runChromium, runScript, runWorkerd, type Setup, type StepResult, version } from './runtimes/hosts.ts';
import { freePort, mustRun, run, startProcess, stop } from './runtimes/processes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const ecosystem = path.join(root, 'ecosystem');
const runtimesDir = path.join(ecosystem, 'runtimes');
const ENV_NAMES = ['TAP_API_KEY', 'TAP_BASE_URL', 'COLLECTIONS_API_KEY', 'COLLECTIONS_BASE_URL'] as const;

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

/** One runtime's column of the matrix. */
interface Column {
  label: string;
  version: string;
  steps: readonly string[];
  results: StepResult[];
  error?: string;
}

// ---------------------------------------------------------------------------------------------------------------------
// Preparation

/**
 * Installs the pinned runtimes unless what is installed was installed from this very package.json. Every version is
 * exact there and the runtimes pin their platform packages exactly, so no lockfile is kept: the registry here lacks
 * the other platforms' binaries, which `npm ci` would insist on finding in a lockfile.
 */
async function ensureRuntimes(): Promise<void> {
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
  // dist/ was just built (or, with --no-build, by CI): packing runs no prepack build again.
  const packed = JSON.parse(await mustRun('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], root)) as Array<{
    filename: string;
  }>;
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
// The examples on Node.js 22

/** The examples a user runs (`connect.ts` is the module they share). */
function exampleNames(): string[] {
  return readdirSync(path.join(root, 'examples'))
    .filter((name) => name.endsWith('.ts') && name !== 'connect.ts')
    .map((name) => name.slice(0, -'.ts'.length))
    .sort();
}

/**
 * Every example run as the README says, `node examples/<name>.ts` from the repository (the built package, against the
 * simulator), on the oldest Node.js line the package supports: each must exit 0. (test/examples runs them on Node.js 24.)
 */
async function examplesOn(node: string): Promise<StepResult[]> {
  const env = { ...process.env };
  for (const name of ENV_NAMES) delete env[name];
  const results: StepResult[] = [];
  for (const name of exampleNames()) {
    const started = Date.now();
    const ran = await run(node, [`examples/${name}.ts`], { cwd: root, env, timeoutMs: 60_000 }).catch((error: unknown) => ({
      code: -1,
      stdout: '',
      stderr: String(error),
    }));
    results.push({
      step: `example ${name}`,
      ok: ran.code === 0,
      detail: ran.code === 0 ? `${Date.now() - started} ms` : `exit ${ran.code}: ${ran.stderr.slice(-600)}`,
    });
  }
  return results;
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
  if (!process.argv.includes('--no-build')) await mustRun('npm', ['run', 'build', '--silent'], root);
  const work = mkdtempSync(path.join(tmpdir(), 'tap-collections-runtimes-'));
  let simulator: ChildProcess | undefined;
  try {
    const consumers = await prepareConsumers(work);
    const nodeDir = consumers.node as string;
    const packedTesting = path.join(nodeDir, 'node_modules', 'tap-collections-sdk', 'dist', 'testing');
    const started_ = await startProcess(
      process.execPath,
      [path.join(nodeDir, 'node_modules', 'tap-collections-sdk', 'dist', 'cli', 'bin.js'), 'simulate', '--port', '0', '--cors', '--quiet'],
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
    const matrix = printMatrix(columns);
    const examples = await examplesOn(node22);
    for (const result of examples) console.log(`${result.ok ? 'ok  ' : 'FAIL'} ${result.step} on node22 (${result.detail})`);
    const passed = matrix.passed + examples.filter((result) => result.ok).length;
    const failed = matrix.failed + examples.filter((result) => !result.ok).length;
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
