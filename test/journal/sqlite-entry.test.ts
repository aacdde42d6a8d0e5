/** The built `tap-collections-sdk/sqlite` entry, as a user loads it: `require` and `import`; the main entry stays free of it. */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

beforeAll(() => {
  if (!existsSync(`${root}/dist/sqlite/index.js`)) throw new Error('build first: this test loads the built entry (npm run build)');
});

const script = (load: string) => `
${load}
const journal = new SqliteJournal(':memory:');
// A reference id is a UUID: a row holding anything else is one the SDK did not write, and is skipped.
const id = '00000000-0000-4000-8000-000000000001';
const record = { referenceId: id, state: 'initiating', productId: 'p', amount: 1, currency: 'ZMW', phoneNumber: '260*******56', fingerprint: 'v1:abc' };
const first = await journal.insert(record);
const moved = await journal.transition(id, 1, { state: 'pending', by: 'entry' });
console.log(first.version, await journal.insert(record), moved.applied, (await journal.get(id)).state, (await journal.history(id)).length);
`;

it('loads through import and through require, and works', async () => {
  const esm = await run(
    process.execPath,
    ['--input-type=module', '-e', script("import { SqliteJournal } from 'tap-collections-sdk/sqlite';")],
    { cwd: root },
  );
  expect(esm.stdout.trim()).toBe('1 undefined true pending 2');
  const cjs = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      script(
        "import { createRequire } from 'node:module'; const { SqliteJournal } = createRequire(process.cwd() + '/x.cjs')('tap-collections-sdk/sqlite');",
      ),
    ],
    { cwd: root },
  );
  expect(cjs.stdout.trim()).toBe('1 undefined true pending 2');
});

it('the main entry does not import node:sqlite (or any node: module)', () => {
  for (const file of ['dist/index.js', 'dist/index.cjs']) {
    expect(readFileSync(`${root}/${file}`, 'utf8')).not.toMatch(/["']node:/);
  }
});
