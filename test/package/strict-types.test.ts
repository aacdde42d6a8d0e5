/**
 * The packed package's types under a partner's strictest settings (`skipLibCheck: false`,
 * `exactOptionalPropertyTypes`), through `import` (`.d.ts`) and `require` (`.d.cts`), for both entry points: once in
 * a project without msw, the optional peer that only `createSimulatorHandlers` needs, and once in a project with it,
 * where the handlers go to msw's `setupServer` with their real type. The README's code blocks compile against them as
 * they are, and every public option takes `undefined` (`{ apiKey: process.env.TAP_API_KEY }`).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asModule, snippetsOf } from '../../scripts/doc-snippets.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
let workspace: string;
let tarball: string;

const tsconfig = (lib: string[]) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      // The standard library's own declarations are not the package's: checking lib.dom.d.ts alone takes seconds.
      skipDefaultLibCheck: true,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      lib,
      types: ['node'],
      noEmit: true,
    },
    include: ['*.mts', '*.cts'],
  });

const WITHOUT_MSW = `
import { CollectionsClient, TapClient, type CollectionStatus } from 'tap-collections-sdk';
import { createSimulator, createSimulatorHandlers, startSimulator, TAGS, TAP_API_KEYS, type RunningSimulator } from 'tap-collections-sdk/testing';

const running: RunningSimulator = await startSimulator({ simulator: createSimulator() });
const tap = new TapClient({ apiKey: TAP_API_KEYS.primary, baseUrl: running.tapBaseUrl });
const query = await tap.submitCustomerQuery({ merchantId: 'M', merchantName: 'Shop', terminalId: 'T', amount: 5, tagId: TAGS.active });
const status: CollectionStatus | undefined = undefined;
export { createSimulatorHandlers, CollectionsClient, query, status };
`;

const WITH_MSW = `
import { setupServer } from 'msw/node';
import { createSimulator, createSimulatorHandlers } from 'tap-collections-sdk/testing';

const handlers = await createSimulatorHandlers(createSimulator(), { tapBaseUrl: 'https://tap.test', collectionsBaseUrl: 'https://collections.test' });
export const server = setupServer(...handlers);
// With msw installed the handlers carry msw's type, not \`any\`: this line must be an error.
// @ts-expect-error
export const notAString: string = handlers[0];
`;

const REQUIRED = `
import sdk = require('tap-collections-sdk');
import testing = require('tap-collections-sdk/testing');

export const client: sdk.TapClient = new sdk.TapClient({ apiKey: testing.TAP_API_KEYS.primary, baseUrl: 'http://127.0.0.1:1' });
export const start: typeof testing.startSimulator = testing.startSimulator;
`;

/** Every public option given a value that may be `undefined`, as code that reads its settings from the environment does. */
const OPTIONS_MAY_BE_UNDEFINED = `
import { CollectionsClient, MemoryJournal, TapClient } from 'tap-collections-sdk';
import { SqliteJournal } from 'tap-collections-sdk/sqlite';
import { createSimulator, startSimulator } from 'tap-collections-sdk/testing';

const setting = (name: string): string | undefined => process.env[name];
const number = (name: string): number | undefined => (setting(name) === undefined ? undefined : Number(setting(name)));
const signal: AbortSignal | undefined = undefined;
const common = {
  apiKey: setting('API_KEY'),
  baseUrl: setting('BASE_URL'),
  timeoutMs: number('TIMEOUT_MS'),
  maxRetries: number('MAX_RETRIES'),
  maxRetryAfterMs: number('MAX_RETRY_AFTER_MS'),
  maxConcurrentRequests: number('MAX_CONCURRENT'),
  maxResponseBytes: number('MAX_RESPONSE_BYTES'),
  fetch: undefined,
  logger: undefined,
  logLevel: undefined,
  headers: undefined,
  dangerouslyAllowBrowser: undefined,
  onResponse: undefined,
  instrumentation: undefined,
};
const tap = new TapClient({ ...common, maxListBytes: number('MAX_LIST_BYTES') });
const collections = new CollectionsClient({ ...common, journal: undefined, phoneNumberFormat: undefined, statusWords: undefined });
const request = { signal, timeoutMs: number('T'), maxRetries: number('R'), headers: undefined };
await tap.submitCustomerQuery(
  { merchantId: 'M', merchantName: 'Shop', terminalId: 'T', amount: 5, tagId: 'TAG', referenceId: setting('REF') },
  request,
);
await tap.listCustomerQueries(request);
const { referenceId } = await collections.initiate(
  { productId: 'p', phoneNumber: '0977123456', amount: 5, narration: setting('NARRATION'), referenceId: setting('REF'), currency: undefined },
  request,
);
await collections.pollUntilSettled(referenceId, {
  ...request,
  maxWaitMs: number('W'),
  initialDelayMs: undefined,
  intervalMs: undefined,
  maxIntervalMs: undefined,
  notFoundGraceMs: undefined,
  onUpdate: undefined,
});
await collections.recover({ ...request, concurrency: number('C'), notFoundGraceMs: undefined });
await collections.waitForSettlement(referenceId, { signal, maxWaitMs: number('W') });
await collections.request('GET', '/health', { ...request, query: undefined });
const worker = collections.startSettlementWorker({
  requestsPerSecond: number('RPS'),
  maxConcurrentChecks: undefined,
  onSettled: undefined,
  onStale: undefined,
  staleAfterMs: undefined,
  signal,
  initialDelayMs: undefined,
  intervalMs: undefined,
  maxIntervalMs: undefined,
  notFoundGraceMs: undefined,
  leaseMs: undefined,
  maxLeasedPayments: undefined,
  scanIntervalMs: undefined,
  journal: undefined,
});
await new MemoryJournal({ now: undefined }).list({ states: undefined, limit: number('LIMIT') });
new SqliteJournal(':memory:', { busyTimeoutMs: undefined, flushEveryWrite: undefined, now: undefined, logger: undefined });
await startSimulator({ port: number('PORT'), host: setting('HOST'), simulator: createSimulator({ now: undefined, settlement: undefined }), cors: undefined });
export { worker };
`;

/**
 * A partner project with the unpacked tarball and the given packages from this repository's node_modules. Without
 * msw it compiles against Node's types alone; msw's own types need the DOM library (as msw documents).
 */
async function project(name: string, packages: string[], lib: string[], files: Record<string, string>): Promise<string> {
  const directory = path.join(workspace, name);
  const installed = path.join(directory, 'node_modules', 'tap-collections-sdk');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  for (const dependency of packages) {
    mkdirSync(path.dirname(path.join(directory, 'node_modules', dependency)), { recursive: true });
    symlinkSync(path.join(root, 'node_modules', dependency), path.join(directory, 'node_modules', dependency), 'dir');
  }
  writeFileSync(path.join(directory, 'package.json'), '{ "name": "partner-app", "private": true, "type": "module" }');
  writeFileSync(path.join(directory, 'tsconfig.json'), tsconfig(lib));
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(directory, file), text);
  return directory;
}

async function typeErrors(directory: string): Promise<string> {
  try {
    await run(process.execPath, [tsc, '-p', directory], { cwd: directory, timeout: 170_000 });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout) || String(error);
  }
}

beforeAll(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'tap-collections-sdk-types-'));
  // dist/ is built (npm test builds it first); --ignore-scripts: prepack would rebuild it under the running tests.
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', workspace], { cwd: root });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  tarball = path.join(workspace, packed?.filename ?? '');
}, 60_000);

afterAll(() => {
  rmSync(workspace, { recursive: true, force: true });
});

describe('the packed types with skipLibCheck: false and exactOptionalPropertyTypes', () => {
  it("compile the README's code blocks as written, and every option given a value that may be undefined", async () => {
    const readme = Object.fromEntries(
      snippetsOf(root, 'README.md').map((snippet, index) => [`readme-${index}.mts`, asModule(snippet.code)]),
    );
    expect(Object.keys(readme).length).toBeGreaterThan(3);
    const directory = await project('readme', ['ky', 'zod', '@types/node', 'undici-types'], ['es2023'], {
      ...readme,
      'options.mts': OPTIONS_MAY_BE_UNDEFINED,
    });
    expect(await typeErrors(directory)).toBe('');
  }, 180_000);

  it('compile without msw installed', async () => {
    const directory = await project('without-msw', ['ky', 'zod', '@types/node', 'undici-types'], ['es2023'], {
      'use.mts': WITHOUT_MSW,
      'use.cts': REQUIRED,
    });
    expect(await typeErrors(directory)).toBe('');
  }, 180_000);

  it('compile with msw installed, the handlers typed as msw handlers', async () => {
    const directory = await project('with-msw', ['ky', 'zod', '@types/node', 'undici-types', 'msw'], ['es2023', 'dom', 'dom.iterable'], {
      'msw.mts': WITH_MSW,
      'use.cts': REQUIRED,
    });
    expect(await typeErrors(directory)).toBe('');
  }, 180_000);
});
