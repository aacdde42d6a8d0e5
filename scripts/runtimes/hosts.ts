/**
 * How the shared flow runs on each runtime: a script whose last line carries the results (Node.js, Bun, Deno), a
 * worker answering them (workerd), a page holding them (Chromium through playwright-core).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freePort, ROW_TIMEOUT_MS, run, stop } from './processes.ts';

const runtimesDir = fileURLToPath(new URL('../../ecosystem/runtimes', import.meta.url));
/** A runtime's executable, as installed from `ecosystem/runtimes/package.json`. */
export const bin = (name: string) => path.join(runtimesDir, 'node_modules', '.bin', name);
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/** One step's outcome, as the flow reports it. */
export interface StepResult {
  step: string;
  ok: boolean;
  detail: string;
}
/** What the flow is given (see `ecosystem/flow.mjs`). */
export interface Setup {
  tapBaseUrl: string;
  collectionsBaseUrl: string;
  refusedBaseUrl: string;
  fixtures: Record<string, string>;
  network: 'granted' | 'denied';
  env: 'granted' | 'denied' | 'none';
  refusal: 'provable' | 'unprovable';
  browser: boolean;
}

function parseResults(output: string): StepResult[] {
  const line = output.split('\n').find((candidate) => candidate.startsWith('FLOW_RESULTS '));
  if (line === undefined) throw new Error('the flow printed no results');
  return JSON.parse(line.slice('FLOW_RESULTS '.length)) as StepResult[];
}

/** Runs a consumer script (Node.js, Bun, Deno) and reads the results from its `FLOW_RESULTS` line; a missing runtime throws. */
export async function runScript(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<StepResult[]> {
  if (!existsSync(command)) throw new Error(`missing runtime: ${command}`);
  const result = await run(command, args, { cwd, env });
  try {
    return parseResults(result.stdout);
  } catch (error) {
    throw new Error(`${(error as Error).message} (exit ${result.code}): ${result.stderr.slice(-1500)}`);
  }
}

/** A runtime's version, read from its `--version` output; `missing` when it is not installed. */
export async function version(command: string, args: readonly string[], pattern: RegExp): Promise<string> {
  if (!existsSync(command)) return 'missing';
  const { stdout } = await run(command, args, { timeoutMs: 30_000 });
  return stdout.match(pattern)?.[1] ?? stdout.trim();
}

/** workerd: the bundled worker behind a config whose outbound network allows loopback; the flow runs per request. */
export async function runWorkerd(dir: string, setup: Setup, env: Record<string, string>): Promise<StepResult[]> {
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
/** The part of playwright-core used here (it is installed with the runtimes, not as a project dependency). */
export interface PlaywrightBrowser {
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

/** Launches Debian's Chromium headless through playwright-core; throws when it is not installed. */
export async function openChromium(): Promise<PlaywrightBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`missing runtime: ${CHROMIUM} (apt-get install chromium)`);
  const entry = path.join(runtimesDir, 'node_modules', 'playwright-core', 'index.mjs');
  const { chromium } = (await import(pathToFileURL(entry).href)) as Playwright;
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** Opens the bundled page from another loopback origin than the simulator and reads the results it holds. */
export async function runChromium(browser: PlaywrightBrowser, dir: string, setup: Setup): Promise<StepResult[]> {
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
