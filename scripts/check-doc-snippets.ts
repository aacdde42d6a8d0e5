/**
 * Documentation that compiles: every `ts` block of README.md and docs/{guide,internals}/*.md is type-checked against
 * the SDK's source (strict, with `exactOptionalPropertyTypes`, as a partner's project may be), and the blocks of
 * docs/guide/testing.md must equal the test files they are copied from. Run by `npm run typecheck`. How a block becomes
 * a module: scripts/doc-snippets.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { asModule, type Snippet, snippetsOf } from './doc-snippets.ts';

const root = path.resolve(import.meta.dirname, '..');

const docs = [
  'README.md',
  ...['docs/guide', 'docs/internals'].flatMap((folder) =>
    readdirSync(path.join(root, folder))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `${folder}/${name}`),
  ),
];
const snippets = docs.flatMap((file) => snippetsOf(root, file));
const virtual = new Map(snippets.map((snippet, index) => [path.join(root, `.doc-snippet-${index}.ts`), asModule(snippet.code)]));

const config = ts.readConfigFile(path.join(root, 'tsconfig.test.json'), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
const host = ts.createCompilerHost(parsed.options);
const readFile = host.readFile.bind(host);
const fileExists = host.fileExists.bind(host);
host.readFile = (fileName) => virtual.get(path.resolve(fileName)) ?? readFile(fileName);
host.fileExists = (fileName) => virtual.has(path.resolve(fileName)) || fileExists(fileName);
// Under a partner's strictest setting: with exactOptionalPropertyTypes, `{ apiKey: process.env.KEY }` compiles only
// if the option's type says it takes `undefined` (the project's own sources are compiled without it).
const program = ts.createProgram([...virtual.keys()], { ...parsed.options, noUnusedLocals: false, exactOptionalPropertyTypes: true }, host);

const problems: string[] = [];
[...virtual.keys()].forEach((fileName, index) => {
  const snippet = snippets[index] as Snippet;
  const sourceFile = program.getSourceFile(fileName);
  for (const diagnostic of ts.getPreEmitDiagnostics(program, sourceFile)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    problems.push(`${snippet.source} (block at line ${snippet.line}): ${message}`);
  }
});

// docs/guide/testing.md shows test files verbatim (but for the first comment line and the import paths).
const copies: Record<number, string> = { 0: 'test/docs/testing-guide-msw.test.ts', 1: 'test/docs/testing-guide-loopback.test.ts' };
snippetsOf(root, 'docs/guide/testing.md').forEach((snippet, index) => {
  const testFile = copies[index];
  if (!testFile) return;
  const expected = readFileSync(path.join(root, testFile), 'utf8')
    .split('\n')
    .slice(1)
    .join('\n')
    .replaceAll("'../../src/index.js'", "'tap-collections-sdk'")
    .replaceAll("'../../src/testing/index.js'", "'tap-collections-sdk/testing'")
    .trim();
  if (snippet.code.trim() !== expected) problems.push(`docs/guide/testing.md (block at line ${snippet.line}) differs from ${testFile}`);
});

if (problems.length > 0) {
  console.error(`Documentation code blocks that do not compile or have drifted:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
  process.exit(1);
}
console.log(`${snippets.length} documentation code blocks type-check; docs/guide/testing.md matches its test files`);
