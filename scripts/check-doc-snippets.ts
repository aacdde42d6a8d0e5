/**
 * Documentation that compiles: every `ts` block of README.md and docs/*.md is type-checked against the
 * SDK's source, and the blocks of docs/testing.md must equal the test files they are copied from.
 * Run by `npm run typecheck`.
 *
 * Each block is checked as a module: its imports stay at the top, the rest runs inside an async
 * function, and a prelude declares the application objects the examples assume (a till, a sales store).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');
const PRELUDE = `import type * as __SDK from 'tap-collections-sdk';
declare const till: {
  show(text: string): void;
  printReceipt(receipt: { referenceId: string; paidAt: Date; amount: number; currency: 'ZMW' }): void;
};
declare const sales: {
  update(id: string, change: Record<string, unknown>): Promise<void>;
  where(query: Record<string, unknown>): Promise<Array<{ id: string; referenceId: string }>>;
  settle(id: string, status: __SDK.CollectionStatus): Promise<void>;
};
declare const pendingPayments: { save(record: Record<string, unknown>): Promise<void> };
declare const cancelButton: { signal: AbortSignal };
declare const saleId: string;
declare const productId: string;
declare const phoneNumber: string;
declare const amount: number;
declare const referenceId: string;
declare const collections: __SDK.CollectionsClient;
declare const tap: __SDK.TapClient;
`;

interface Snippet {
  readonly source: string;
  readonly line: number;
  readonly code: string;
}

function snippetsOf(file: string): Snippet[] {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index]?.trim() !== '```ts') continue;
    const start = index + 1;
    while (index + 1 < lines.length && lines[index + 1]?.trim() !== '```') index++;
    snippets.push({ source: file, line: start + 1, code: lines.slice(start, index + 1).join('\n') });
    index++;
  }
  return snippets;
}

/** Imports (possibly spanning lines) go to the module's top; everything else into the async body. */
function asModule(code: string): string {
  const imports: string[] = [];
  const body: string[] = [];
  let inImport = false;
  for (const line of code.split('\n')) {
    if (/^import\b/.test(line) || inImport) {
      imports.push(line);
      inImport = !/;\s*$/.test(line);
    } else body.push(line);
  }
  return `${imports.join('\n')}\n${PRELUDE}\nexport async function snippet() {\n${body.join('\n')}\n}\n`;
}

const docs = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const snippets = docs.flatMap(snippetsOf);
const virtual = new Map(snippets.map((snippet, index) => [path.join(root, `.doc-snippet-${index}.ts`), asModule(snippet.code)]));

const config = ts.readConfigFile(path.join(root, 'tsconfig.test.json'), ts.sys.readFile);
const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
const host = ts.createCompilerHost(parsed.options);
const readFile = host.readFile.bind(host);
const fileExists = host.fileExists.bind(host);
host.readFile = (fileName) => virtual.get(path.resolve(fileName)) ?? readFile(fileName);
host.fileExists = (fileName) => virtual.has(path.resolve(fileName)) || fileExists(fileName);
const program = ts.createProgram([...virtual.keys()], { ...parsed.options, noUnusedLocals: false }, host);

const problems: string[] = [];
[...virtual.keys()].forEach((fileName, index) => {
  const snippet = snippets[index] as Snippet;
  const sourceFile = program.getSourceFile(fileName);
  for (const diagnostic of ts.getPreEmitDiagnostics(program, sourceFile)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    problems.push(`${snippet.source} (block at line ${snippet.line}): ${message}`);
  }
});

// docs/testing.md shows test files verbatim (but for the first comment line and the import paths).
const copies: Record<number, string> = { 0: 'test/docs/testing-guide-msw.test.ts', 1: 'test/docs/testing-guide-loopback.test.ts' };
snippetsOf('docs/testing.md').forEach((snippet, index) => {
  const testFile = copies[index];
  if (!testFile) return;
  const expected = readFileSync(path.join(root, testFile), 'utf8')
    .split('\n')
    .slice(1)
    .join('\n')
    .replaceAll("'../../src/index.js'", "'tap-collections-sdk'")
    .replaceAll("'../../src/testing/index.js'", "'tap-collections-sdk/testing'")
    .trim();
  if (snippet.code.trim() !== expected) problems.push(`docs/testing.md (block at line ${snippet.line}) differs from ${testFile}`);
});

if (problems.length > 0) {
  console.error(`Documentation code blocks that do not compile or have drifted:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
  process.exit(1);
}
console.log(`${snippets.length} documentation code blocks type-check; docs/testing.md matches its test files`);
