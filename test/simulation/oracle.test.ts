/**
 * The checker stays apart from the checked: the oracle's files (oracle.ts, invariants.ts) import nothing from the SDK
 * but types, so a slip in a production rule (a status word's meaning, the window formula, the 404 evidence rule) can
 * never change the rule the simulation judges by. The wiring (sim.ts, processes.ts, journal.ts's store) of course
 * imports the SDK under test.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { attemptWindow, carriesWindow, isSdkError, judgedWindow, meaningOfWord, notFoundIsEvidence } from './oracle.js';

const ORACLE_FILES = ['oracle.ts', 'invariants.ts'];

/** Every import statement of `source` (possibly over several lines) with where it imports from. */
function importsOf(source: string): { statement: string; from: string }[] {
  return [...source.matchAll(/^import\s[\s\S]*?from\s+'([^']+)';/gm)].map((match) => ({ statement: match[0], from: match[1] as string }));
}

describe('the oracle', () => {
  it.each(ORACLE_FILES)('%s imports nothing from src/ but types', (file) => {
    const source = readFileSync(new URL(file, import.meta.url), 'utf8');
    const fromSrc = importsOf(source).filter((statement) => /(^|\/)src\//.test(statement.from));
    for (const { statement } of fromSrc) expect(statement, file).toMatch(/^import type /);
    // And no dynamic import or require of the SDK.
    expect(source).not.toMatch(/(import|require)\(\s*'[^']*src\//);
  });

  it('reads the grep right (an import of a value from src/ is seen)', () => {
    const found = importsOf("import type { A } from '../../src/a.js';\nimport {\n  B,\n} from '../../src/b.js';\n");
    expect(found.map((entry) => entry.statement.startsWith('import type '))).toEqual([true, false]);
  });

  it('keeps the rules of the contract', () => {
    expect(meaningOfWord(' Completed ')).toBe('successful');
    expect(meaningOfWord('DECLINED')).toBe('failed');
    expect(meaningOfWord('processing')).toBe('pending');
    expect(meaningOfWord('queued')).toBeUndefined();
    expect(attemptWindow({ maxRetries: 2, timeoutMs: 30_000 })).toBe(106_000);
    expect(judgedWindow({}, 106_000)).toBe(Number.POSITIVE_INFINITY);
    expect(judgedWindow({ sendWindowMs: 70_000 }, 106_000)).toBe(106_000);
    // A window stated as unbounded (a store's upgrade, a resend of a record of the previous release) is no window.
    expect(judgedWindow({ sendWindowMs: Number.POSITIVE_INFINITY }, 106_000)).toBe(Number.POSITIVE_INFINITY);
    expect(carriesWindow({ sendWindowMs: Number.POSITIVE_INFINITY })).toBe(false);
    expect(carriesWindow({ sendWindowMs: 0 })).toBe(true);
    expect(notFoundIsEvidence('bare 404', false)).toBe(false);
    expect(notFoundIsEvidence('404', true)).toBe(false);
    expect(notFoundIsEvidence('404', false)).toBe(true);
    class TapCollectionsError extends Error {}
    class NotFoundError extends TapCollectionsError {}
    expect(isSdkError(new NotFoundError('x'))).toBe(true);
    expect(isSdkError(new Error('x'))).toBe(false);
    expect(isSdkError('x')).toBe(false);
  });
});
