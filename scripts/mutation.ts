/**
 * `npm run test:mutation [-- stryker options]`: runs StrykerJS with the options given, then rewrites the absolute
 * paths it writes into the committed incremental file (`projectRoot`, and the stack traces of crashed runs) relative
 * to the project, so the file names no machine's folders, also where `node_modules` is a link to another folder.
 * Exits with StrykerJS's code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const run = spawnSync('stryker', ['run', ...process.argv.slice(2)], { stdio: 'inherit', shell: process.platform === 'win32' });
const file = 'test/mutation/stryker-incremental.json';
const root = process.cwd();
// Stack traces name node_modules by its real path: another folder when it is a link (a second work tree, a shared store).
const roots = new Set([root, realpathSync(root), ...(existsSync('node_modules') ? [path.dirname(realpathSync('node_modules'))] : [])]);
if (existsSync(file)) {
  const text = readFileSync(file, 'utf8');
  let relative = text;
  for (const folder of roots) {
    relative = relative
      .replaceAll(`${pathToFileURL(folder).href}/`, '')
      .replaceAll(`${folder}/`, '')
      .replaceAll(JSON.stringify(folder), '"."');
  }
  if (relative !== text) writeFileSync(file, relative);
}
process.exit(run.status ?? 1);
