/**
 * A fresh install is quiet: `npm ci` prints no warnings, also when npm itself runs on a Node.js older than the
 * project's tools need (the tools run on the Node.js 24 the install brings; see `.npmrc`). Checked with npm's dry run
 * from the lockfile, on the oldest `node` on PATH (the system's Node.js 20 on the dev machines) or this one.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every `node` on PATH with its major version, the oldest first. */
function nodesOnPath(): Array<{ node: string; major: number }> {
  const found: Array<{ node: string; major: number }> = [];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    if (!existsSync(candidate)) continue;
    try {
      const major = Number(execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.')[0]);
      found.push({ node: candidate, major });
    } catch {
      // not runnable: look further
    }
  }
  return found.sort((a, b) => a.major - b.major);
}

/** npm's own entry script (the `npm` on PATH is a link to it). */
function npmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'npm');
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  throw new Error('npm is not on PATH');
}

describe('a fresh install', () => {
  it('prints no warnings, whatever Node.js runs npm', { timeout: 120_000 }, async () => {
    const project = mkdtempSync(path.join(tmpdir(), 'tap-collections-sdk-install-'));
    try {
      for (const file of ['package.json', 'package-lock.json', '.npmrc'])
        if (existsSync(path.join(root, file))) copyFileSync(path.join(root, file), path.join(project, file));
      const node = nodesOnPath()[0]?.node ?? process.execPath;
      // As in a user's shell: without the npm_config_* settings of an `npm run` this test may run under (`--silent`).
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
      const { stdout, stderr } = await run(node, [npmCli(), 'ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
        cwd: project,
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(stdout).toContain('add vitest');
      expect(stderr).not.toContain('EBADENGINE');
      expect(stderr).not.toMatch(/\bwarn\b/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
