/**
 * The code blocks of the documentation as modules a compiler can check: shared by `scripts/check-doc-snippets.ts`
 * (against the SDK's source) and `test/package/strict-types.test.ts` (against the packed package's types).
 *
 * Each block is checked as a module: its imports stay at the top, the rest runs inside an async
 * function, and a prelude declares the application objects the examples assume (a till, a sales store).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const PRELUDE = `import type * as __SDK from 'tap-collections-sdk';
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

export interface Snippet {
  readonly source: string;
  readonly line: number;
  readonly code: string;
}

/** The ```ts blocks of a Markdown file (`file` relative to `root`). */
export function snippetsOf(root: string, file: string): Snippet[] {
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
export function asModule(code: string): string {
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
