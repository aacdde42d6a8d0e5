/**
 * `npm run test:mutation [-- stryker options]`: runs StrykerJS with the options given, then rewrites the absolute
 * paths it writes into the committed incremental file (`projectRoot`, and the stack traces of crashed runs) relative
 * to the project, so the file names no machine's folders. Exits with StrykerJS's code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const run = spawnSync('stryker', ['run', ...process.argv.slice(2)], { stdio: 'inherit', shell: process.platform === 'win32' });
const file = 'test/mutation/stryker-incremental.json';
const root = process.cwd();
if (existsSync(file)) {
  const text = readFileSync(file, 'utf8');
  const relative = text
    .replaceAll(`${pathToFileURL(root).href}/`, '')
    .replaceAll(`${root}/`, '')
    .replaceAll(JSON.stringify(root), '"."');
  if (relative !== text) writeFileSync(file, relative);
}
process.exit(run.status ?? 1);
