/**
 * A partner's application with a packed tarball of the SDK installed as npm would install it: the tarball unpacked
 * into `node_modules/tap-collections-sdk`, its runtime dependencies (and any others asked for) linked from this
 * repository's node_modules, and a `package.json` of its own.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Installs `tarball` into the application folder `app` (created if missing). */
export async function installTarball(tarball: string, app: string, dependencies: readonly string[] = ['ky', 'zod']): Promise<void> {
  const installed = path.join(app, 'node_modules', 'tap-collections-sdk');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  for (const dependency of dependencies) {
    const target = path.join(app, 'node_modules', dependency);
    mkdirSync(path.dirname(target), { recursive: true });
    symlinkSync(path.join(root, 'node_modules', dependency), target, 'dir');
  }
  writeFileSync(path.join(app, 'package.json'), '{ "name": "partner-app", "private": true }');
}
