/**
 * The fixtures table of docs/guide/testing.md against the exported fixtures: every exported value has its row, with
 * its value, and every row names a fixture that exists. Adding a fixture without documenting it fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as testing from '../../src/testing/index.js';

const guide = readFileSync(new URL('../../docs/guide/testing.md', import.meta.url), 'utf8');
const rows = new Map(
  [...guide.matchAll(/^\| `([A-Z_]+\.[A-Za-z]+)` \| (.*) \| (.*) \|$/gm)].map((match) => [match[1] as string, match[2] as string]),
);
const groups = {
  PARTNERS: testing.PARTNERS,
  TAP_API_KEYS: testing.TAP_API_KEYS,
  COLLECTIONS_API_KEYS: testing.COLLECTIONS_API_KEYS,
  TAGS: testing.TAGS,
  PRODUCTS: testing.PRODUCTS,
  PHONES: testing.PHONES,
};
const fixtures = Object.entries(groups).flatMap(([group, values]) =>
  Object.entries(values).map(([key, value]) => [`${group}.${key}`, value] as const),
);

/** How the table shows a value: strings in full, UUIDs by their first block, partners by name. */
function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null && 'partnerName' in value) return `\`${String(value.partnerName)}\``;
  const text = String(value);
  return /^[0-9a-f]{8}-[0-9a-f-]{27}$/.test(text) ? `\`${text.slice(0, 8)}-…\`` : `\`${text}\``;
}

describe('the fixtures table of docs/guide/testing.md', () => {
  it('has found the table', () => {
    expect(rows.size).toBeGreaterThan(20);
  });

  it.each(fixtures)('documents %s with its value', (name, value) => {
    expect(rows.has(name), `${name} has no row`).toBe(true);
    expect(rows.get(name)).toContain(shown(value));
  });

  it('names only fixtures that exist', () => {
    const exported = new Set<string>(fixtures.map(([name]) => name));
    expect([...rows.keys()].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('names the fixture for PollTimeoutError', () => {
    expect(guide).toMatch(/`PHONES\.neverSettles`[^\n]*PollTimeoutError/);
  });
});
