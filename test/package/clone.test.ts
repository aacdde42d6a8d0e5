/**
 * Using the SDK before it is published, as the README says: in a fresh clone (the repository's files, no `dist/`),
 * `npm pack` builds the package itself (`prepack`) and the tarball works in an application, through `import`,
 * `require` and its bin. Without the build in `prepack`, the tarball ships no `dist/` and fails with
 * `ERR_MODULE_NOT_FOUND` once installed.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installTarball } from '../helpers/packed-app.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
let workspace: string;
let app: string;
let packedFiles: string[];

beforeAll(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'tap-collections-sdk-clone-'));
  const clone = path.join(workspace, 'tap-collections-sdk');
  // The files a clone has: those git tracks (the working tree's version of each), never dist/.
  const { stdout: tracked } = await run('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  for (const file of tracked.split('\0').filter(Boolean)) {
    if (!existsSync(path.join(root, file))) continue; // deleted in the working tree, not yet committed
    mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(clone, file));
  }
  expect(existsSync(path.join(clone, 'dist'))).toBe(false);
  // What `npm ci` installs (linked: the clone's own install is the same lockfile).
  symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'), 'dir');

  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workspace], { cwd: clone, maxBuffer: 16 * 1024 * 1024 });
  // `npm pack` prints the build's own output (prepack) before its JSON array: read from the array's first line.
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[\s*$/m))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packedFiles = packed?.files.map((file) => file.path) ?? [];

  app = path.join(workspace, 'partner-app');
  await installTarball(path.join(workspace, packed?.filename ?? ''), app);
}, 420_000);

afterAll(() => {
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe('npm pack in a fresh clone', () => {
  it('builds the package and ships it', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/cli/bin.js', 'dist/sqlite/index.js']),
    );
  });

  it('installs into an application that imports, requires and runs it', async () => {
    const imported = await run(
      process.execPath,
      ['--input-type=module', '-e', "import { CollectionsClient } from 'tap-collections-sdk'; console.log(typeof CollectionsClient);"],
      { cwd: app },
    );
    expect(imported.stdout.trim()).toBe('function');
    const required = await run(process.execPath, ['-e', "console.log(typeof require('tap-collections-sdk').TapClient)"], { cwd: app });
    expect(required.stdout.trim()).toBe('function');
    const bin = await run(process.execPath, ['node_modules/tap-collections-sdk/dist/cli/bin.js', '--help'], { cwd: app });
    expect(bin.stdout).toMatch(/^Usage: tap-collections-sdk <command>/);
  });
});
