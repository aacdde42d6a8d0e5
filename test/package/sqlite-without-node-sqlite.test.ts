/**
 * The built `tap-collections-sdk/sqlite` entry on a runtime without `node:sqlite`: the import succeeds and
 * `new SqliteJournal()` throws the main entry's own ConfigurationError naming the version needed, never
 * `ERR_UNKNOWN_BUILTIN_MODULE`. Run on a real Node 20 when one is on PATH (plain `node` is one on the dev machines),
 * and on this Node with `node:sqlite` hidden, so the check runs everywhere.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

beforeAll(() => {
  if (!existsSync(`${root}/dist/sqlite/index.js`)) throw new Error('build first: this test loads the built entry (npm run build)');
});

/** A `node` on PATH older than 22.13 (no `node:sqlite` without a flag), if there is one. */
function oldNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (!existsSync(candidate)) continue;
    try {
      const [major = 0, minor = 0] = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.').map(Number);
      if (major < 22 || (major === 22 && minor < 13)) return candidate;
    } catch {
      // not runnable: look further
    }
  }
  return undefined;
}

const ESM = `
import { ConfigurationError } from 'tap-collections-sdk';
import { SqliteJournal } from 'tap-collections-sdk/sqlite';
try { new SqliteJournal(':memory:'); console.log('constructed'); }
catch (error) { console.log(JSON.stringify({ typed: error instanceof ConfigurationError, name: error.name, message: error.message })); }
`;
const CJS = `
const { ConfigurationError } = require('tap-collections-sdk');
const { SqliteJournal } = require('tap-collections-sdk/sqlite');
try { new SqliteJournal(':memory:'); console.log('constructed'); }
catch (error) { console.log(JSON.stringify({ typed: error instanceof ConfigurationError, name: error.name, message: error.message })); }
`;
/** Hides `node:sqlite` from this Node, as a runtime without it answers `process.getBuiltinModule`. */
const HIDE = `const get = process.getBuiltinModule; process.getBuiltinModule = (id) => (id === 'node:sqlite' || id === 'sqlite' ? undefined : get(id));`;

function expectTyped(stdout: string, version: string): void {
  const outcome = JSON.parse(stdout.trim()) as { typed: boolean; name: string; message: string };
  expect(outcome).toMatchObject({ typed: true, name: 'ConfigurationError' });
  expect(outcome.message).toContain('tap-collections-sdk/sqlite needs node:sqlite');
  expect(outcome.message).toContain(`(this is ${version})`);
  expect(outcome.message).toContain('Node.js 22.13 or later');
  expect(outcome.message).not.toContain('ERR_UNKNOWN_BUILTIN_MODULE');
}

describe('tap-collections-sdk/sqlite without node:sqlite', () => {
  const node20 = oldNode();

  it('on a real Node older than 22.13 (import and require): ConfigurationError naming the version needed', async () => {
    // Every developer's machine and CI's has Node 20 on PATH (the project runs its own Node 24): a missing one
    // fails, never skips.
    if (node20 === undefined) throw new Error("no Node older than 22.13 on PATH: this test needs the machine's Node 20");
    const binary = node20;
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
    const esm = await run(binary, ['--input-type=module', '-e', ESM], { cwd: root });
    expectTyped(esm.stdout, version);
    const cjs = await run(binary, ['-e', CJS], { cwd: root });
    expectTyped(cjs.stdout, version);
  });

  it('on this Node with node:sqlite hidden (import and require): the same typed error', async () => {
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `${HIDE}\nconst { ConfigurationError } = await import('tap-collections-sdk'); const { SqliteJournal } = await import('tap-collections-sdk/sqlite');\ntry { new SqliteJournal(':memory:'); console.log('constructed'); } catch (error) { console.log(JSON.stringify({ typed: error instanceof ConfigurationError, name: error.name, message: error.message })); }`,
      ],
      { cwd: root },
    );
    expectTyped(esm.stdout, process.version);
    const cjs = await run(process.execPath, ['-e', `${HIDE}\n${CJS}`], { cwd: root });
    expectTyped(cjs.stdout, process.version);
  });
});
