/**
 * The package as users get it: `npm pack`, unpacked into a project of its own, used through `require`
 * and `import` (both entry points) and through its bin, against the simulator over loopback.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installTarball } from '../helpers/packed-app.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
let project: string;
let packedFiles: string[];

const SCRIPT = (load: string) => `${load}
(async () => {
  const running = await testing.startSimulator();
  try {
    const tap = new sdk.TapClient({ apiKey: testing.TAP_API_KEYS.primary, baseUrl: running.tapBaseUrl, logLevel: 'off' });
    const query = await tap.submitCustomerQuery({ merchantId: 'M', merchantName: 'Shop', terminalId: 'T', amount: 5, tagId: testing.TAGS.active });
    const collections = new sdk.CollectionsClient({ apiKey: testing.COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl, logLevel: 'off' });
    const { referenceId } = await collections.initiate({ productId: testing.PRODUCTS.primary, phoneNumber: sdk.mobileNumberFor(query), amount: 5 });
    const outcome = await collections.pollUntilSettled(referenceId, { initialDelayMs: 0, intervalMs: 10 });
    const error = await tap.submitCustomerQuery({ merchantId: '', merchantName: 'x', terminalId: 'x', amount: 1, tagId: 'x' }).catch((e) => e);
    console.log(JSON.stringify({ statusText: outcome.statusText, validation: error instanceof sdk.RequestValidationError, base: error instanceof sdk.TapCollectionsError }));
  } finally {
    await running.close();
  }
})();
`;

beforeAll(async () => {
  project = mkdtempSync(path.join(tmpdir(), 'tap-collections-sdk-packed-'));
  // dist/ is built (npm test builds it first); --ignore-scripts: prepack would rebuild it under the running tests.
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', project], { cwd: root });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  packedFiles = packed?.files.map((file) => file.path) ?? [];
  await installTarball(path.join(project, packed?.filename ?? ''), project);
  writeFileSync(
    path.join(project, 'use.cjs'),
    SCRIPT("const sdk = require('tap-collections-sdk'); const testing = require('tap-collections-sdk/testing');"),
  );
  writeFileSync(
    path.join(project, 'use.mjs'),
    SCRIPT("import * as sdk from 'tap-collections-sdk'; import * as testing from 'tap-collections-sdk/testing';"),
  );
}, 60_000);

afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships what users run and read, and nothing else', () => {
    // The partners' guides; the internals (measurements, the simulation, mutation results) stay in the repository.
    const documents = readdirSync(path.join(root, 'docs', 'guide'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/guide/${name}`);
    // Every file the exports map names (ESM, CommonJS and their types), the bin (ESM only; it imports the testing
    // entry), and the declaration chunks tsup shares between entries (types common to several entry points).
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const exported = new Set<string>();
    const collect = (target: unknown): void => {
      if (typeof target === 'string') exported.add(target.replace(/^\.\//, ''));
      else if (target && typeof target === 'object') for (const value of Object.values(target)) collect(value);
    };
    collect(manifest.exports);
    const sharedDeclarations = packedFiles.filter((file) => /^dist\/[\w-]+\.d\.c?ts$/.test(file) && !exported.has(file));
    expect(
      sharedDeclarations.every((file) => /^dist\/journal-[\w-]+\.d\.c?ts$/.test(file)),
      sharedDeclarations.join(),
    ).toBe(true);
    expect([...packedFiles].sort()).toEqual(
      ['README.md', 'LICENSE', ...documents, ...exported, ...sharedDeclarations, 'dist/cli/bin.js'].sort(),
    );
    expect(readdirSync(project).some((name) => name.endsWith('.tgz'))).toBe(true);
  });

  it('links, in every shipped document, only to files it ships, to headings they have, or to files of the repository', async () => {
    const installed = path.join(project, 'node_modules', 'tap-collections-sdk');
    const { stdout } = await run('git', ['ls-files'], { cwd: root });
    const repositoryFiles = new Set(stdout.split('\n').filter(Boolean));
    const documents = packedFiles.filter((file) => file.endsWith('.md'));
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'docs/guide/journal.md']));
    const broken: string[] = [];
    let checked = 0;
    for (const document of documents) {
      const text = readFileSync(path.join(installed, document), 'utf8');
      for (const target of markdownLinks(text)) {
        checked++;
        const problem = linkProblem(document, target, installed, repositoryFiles);
        if (problem) broken.push(`${document}: ${target} (${problem})`);
      }
    }
    expect(checked).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('bundles the simulator once: the bin imports the testing entry', () => {
    const bin = readFileSync(path.join(project, 'node_modules/tap-collections-sdk/dist/cli/bin.js'), 'utf8');
    // Loaded by `simulate` only, from the built testing entry: the other commands start without it.
    expect(bin).toContain('await import("../testing/index.js")');
    expect(bin).not.toMatch(/^import .*index\.js";$/m);
    expect(bin).not.toContain('function createSimulator');
    // The bin with every command is about 54 000 characters; with the simulator's testing entry (96 000) bundled in,
    // it would be well over 150 000.
    expect(bin.length).toBeLessThan(64_000);
  });

  it.each([
    ['require (CommonJS)', 'use.cjs'],
    ['import (ESM)', 'use.mjs'],
  ])('works through %s, both entry points, a whole flow against the simulator', async (_how, script) => {
    const { stdout } = await run(process.execPath, [script], { cwd: project, timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ statusText: 'successful', validation: true, base: true });
  });

  it('runs its bin', async () => {
    const { stdout } = await run(process.execPath, ['node_modules/tap-collections-sdk/dist/cli/bin.js', '--help'], { cwd: project });
    expect(stdout).toContain('simulate');
  });
});

const REPOSITORY_FILE = /^https:\/\/github\.com\/tap-collections\/tap-collections-sdk\/(?:blob|tree)\/main\/([^#?]+)/;

/** Every inline (`[text](target)`, `![alt](target)`) and reference (`[name]: target`) link target outside code. */
function markdownLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
  const reference = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((match) => match[1] as string);
  return [...inline, ...reference];
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const headings = markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6}\s+(.+)$/gm);
  return new Set(
    [...headings].map((match) =>
      (match[1] as string)
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  );
}

/** Why `target`, linked from `document`, would be dead for a reader of the installed package; `undefined` when it resolves. */
function linkProblem(document: string, target: string, installed: string, repositoryFiles: ReadonlySet<string>): string | undefined {
  const repository = REPOSITORY_FILE.exec(target);
  if (repository) {
    const file = decodeURIComponent(repository[1] as string).replace(/\/$/, '');
    const known = repositoryFiles.has(file) || [...repositoryFiles].some((tracked) => tracked.startsWith(`${file}/`));
    return known ? undefined : 'no such file in the repository';
  }
  if (/^[a-z][a-z+.-]*:/i.test(target)) return undefined; // other sites: not ours to check offline
  const [pathPart = '', anchor] = target.split('#');
  const file =
    pathPart === '' ? document : path.posix.normalize(path.posix.join(path.posix.dirname(document), decodeURIComponent(pathPart)));
  if (file.startsWith('..')) return 'points outside the package';
  let text: string;
  try {
    text = readFileSync(path.join(installed, file), 'utf8');
  } catch {
    return 'not shipped';
  }
  if (anchor !== undefined && file.endsWith('.md') && !anchorsOf(text).has(anchor)) return `no heading #${anchor}`;
  return undefined;
}
