/**
 * The examples are documentation that runs: each is executed as a user would (`node examples/x.ts`,
 * importing the built package by name) against the embedded simulator.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_VARIABLES } from '../../examples/connect.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
// Sandbox credentials in the developer's shell must not send the examples to the real sandbox from a test run.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !(SANDBOX_VARIABLES as readonly string[]).includes(name)));

async function runExample(name: string) {
  return run(process.execPath, [`examples/${name}.ts`], { cwd: root, env, timeout: 30_000 });
}

describe('examples', () => {
  beforeAll(() => {
    if (!existsSync(`${root}/dist/index.js`)) throw new Error('build first: the examples import the built package (npm run build)');
  });

  it('sandbox-smoke passes every step against the simulator', async () => {
    const { stdout } = await runExample('sandbox-smoke');
    expect(stdout).toContain('against the simulator');
    expect(stdout).toMatch(/5 of 5 steps passed/);
    expect(stdout).toContain('successful');
    expect(stdout).not.toContain('260977123456');
  });

  it('tap-and-collect finishes a sale as paid', async () => {
    const { stdout } = await runExample('tap-and-collect');
    expect(stdout).toContain("kind: 'paid'");
  });

  it('list-queries lists with masked numbers and no names', async () => {
    const { stdout } = await runExample('list-queries');
    expect(stdout).toContain('2 customer queries on the simulator');
    expect(stdout).toContain('260*******56');
    expect(stdout).not.toContain('Mwila');
  });

  it('raw-request calls a documented and an undocumented endpoint, and refuses a path outside the base URL', async () => {
    const { stdout } = await runExample('raw-request');
    expect(stdout).toContain('GET /health → 200');
    expect(stdout).toContain('GET /v1/collections/summary → NotFoundError (404)');
    expect(stdout).toContain('refused before sending: RequestValidationError (path)');
  });

  it('handle-errors provokes every failure it describes', async () => {
    const { stdout } = await runExample('handle-errors');
    for (const name of [
      'RequestValidationError',
      'AuthenticationError',
      'BadRequestError',
      'ConflictError',
      'UnprocessableEntityError',
      'RateLimitError',
      'UnknownOutcomeError',
    ]) {
      expect(stdout).toContain(name);
    }
    expect(stdout).not.toContain('✘');
  });

  it('till-restart crashes its till and recovers the last sale as paid', async () => {
    const { stdout } = await runExample('till-restart');
    expect(stdout).toContain('till process ended by SIGKILL');
    expect(stdout).toMatch(/last sale .*: still unknown/);
    expect(stdout).toMatch(/last sale .*, now successful: paid/);
    expect(stdout).not.toContain('260977123456');
  });

  it('a half-configured sandbox is refused with the missing variables named', async () => {
    const error = await run(process.execPath, ['examples/sandbox-smoke.ts'], { cwd: root, env: { ...env, TAP_API_KEY: 'x' } }).catch(
      (caught: unknown) => caught,
    );
    expect(String((error as { stderr?: string }).stderr)).toContain('also set TAP_BASE_URL');
  });
});
