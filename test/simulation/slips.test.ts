/**
 * The slip table (slips.ts) stays true: every slip still applies, exactly once, to today's production sources, so a
 * refactor that moves the code fails here rather than leaving `npm run sim:slips` (and docs/internals/simulation.md's table)
 * describing code that no longer exists. The sweeps themselves are too long for `npm test`: `npm run sim:slips`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applySlip, SLIPS, SlipMovedError } from './slips.js';

const root = new URL('../../', import.meta.url);

describe('the slip table', () => {
  it.each(SLIPS.map((slip) => [slip.name, slip] as const))('%s still applies exactly once to its production file', (_name, slip) => {
    expect(slip.file).toMatch(/^src\//);
    const source = readFileSync(new URL(slip.file, root), 'utf8');
    const slipped = applySlip(source, slip);
    expect(slipped).not.toBe(source);
    // One line changed (or one word moved between two adjacent lines: `completed-failed`).
    const before = source.split('\n');
    const after = slipped.split('\n');
    const removed = before.filter((line) => !after.includes(line));
    const added = after.filter((line) => !before.includes(line));
    expect(Math.max(removed.length, added.length)).toBeLessThanOrEqual(slip.name === 'completed-failed' ? 2 : 1);
  });

  it('names every slip once', () => {
    const names = SLIPS.map((slip) => slip.name);
    expect(new Set(names).size).toBe(names.length);
    expect(SLIPS).toHaveLength(29);
  });

  it('refuses a slip whose text moved, or occurs twice', () => {
    const slip = { name: 'x', row: 'x', file: 'src/x.ts', find: 'a + b', replace: 'a - b', seed: 1 };
    expect(applySlip('return a + b;', slip)).toBe('return a - b;');
    expect(() => applySlip('return a + c;', slip)).toThrow(SlipMovedError);
    expect(() => applySlip('return a + b + a + b;', slip)).toThrow('the slip no longer applies: the code moved');
  });
});
