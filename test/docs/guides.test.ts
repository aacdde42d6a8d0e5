/**
 * The documents as partners get them: the assumptions guide stays a list of short decisions (the reasoning lives in
 * docs/internals), and no document or source comment carries a label of the project's own history, which means
 * nothing to a reader.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

/** Every file under `folder` (relative to the repository) whose name ends with one of `endings`. */
function filesUnder(folder: string, endings: readonly string[]): string[] {
  return readdirSync(new URL(folder, root), { recursive: true, encoding: 'utf8' })
    .filter((name) => endings.some((ending) => name.endsWith(ending)))
    .map((name) => `${folder}${name}`);
}

describe('the partner guides', () => {
  it('assumptions: one short row per decision (at most 300 characters)', () => {
    const rows = read('docs/guide/assumptions.md')
      .split('\n')
      .filter((line) => line.startsWith('| ') && !/^\| (Silent on|Gap) \|/.test(line));
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.filter((row) => row.length > 300)).toEqual([]);
  });

  it('no history labels (a round, an issue or a work item by number) in the README, docs or src', () => {
    const label = /waves? [0-9]|wave-[0-9]|issues? #?[0-9]|sessions? [0-9]|fleet-[0-9]+/i;
    const files = ['README.md', ...filesUnder('docs/', ['.md']), ...filesUnder('src/', ['.ts'])];
    const found = files.flatMap((file) =>
      read(file)
        .split('\n')
        .flatMap((line, index) => (label.test(line) ? [`${file}:${index + 1}: ${line.trim().slice(0, 80)}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
