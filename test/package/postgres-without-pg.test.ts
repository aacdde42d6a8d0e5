/**
 * The built `tap-collections-sdk/postgres` entry in a project that has not installed `pg` (an optional peer): the
 * first call rejects with the main entry's own ConfigurationError saying to install pg, never the runtime's bare
 * "Cannot find package 'pg'". The package is copied (package.json and dist) into a folder where no `pg` resolves.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
let project: string;

beforeAll(() => {
  if (!existsSync(`${root}/dist/postgres/index.js`)) throw new Error('build first: this test loads the built entry (npm run build)');
  project = mkdtempSync(path.join(tmpdir(), 'tap-no-pg-'));
  const installed = path.join(project, 'node_modules', 'tap-collections-sdk');
  mkdirSync(installed, { recursive: true });
  cpSync(path.join(root, 'package.json'), path.join(installed, 'package.json'));
  cpSync(path.join(root, 'dist'), path.join(installed, 'dist'), { recursive: true });
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

const CALL = `
try { await new PostgresJournal({ connectionString: 'postgres://app@127.0.0.1:1/none' }).get('00000000-0000-0000-0000-000000000000'); console.log('answered'); }
catch (error) { console.log(JSON.stringify({ typed: error instanceof ConfigurationError, name: error.name, message: error.message })); }
`;

function expectTyped(stdout: string): void {
  const outcome = JSON.parse(stdout.trim()) as { typed: boolean; name: string; message: string };
  expect(outcome).toMatchObject({ typed: true, name: 'ConfigurationError' });
  expect(outcome.message).toBe(
    'tap-collections-sdk/postgres needs the pg package, which is not installed: install pg (npm install pg), or pass a pool of your own (option pool)',
  );
}

describe('tap-collections-sdk/postgres without pg installed', () => {
  it('import and require: the first call rejects with ConfigurationError saying to install pg', async () => {
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { ConfigurationError } = await import('tap-collections-sdk'); const { PostgresJournal } = await import('tap-collections-sdk/postgres');\n${CALL}`,
      ],
      { cwd: project },
    );
    expectTyped(esm.stdout);
    const cjs = await run(
      process.execPath,
      [
        '-e',
        `(async () => { const { ConfigurationError } = require('tap-collections-sdk'); const { PostgresJournal } = require('tap-collections-sdk/postgres');\n${CALL}})()`,
      ],
      { cwd: project },
    );
    expectTyped(cjs.stdout);
  });
});
