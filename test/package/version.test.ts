import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SDK_VERSION } from '../../src/index.js';

describe('package metadata', () => {
  it('sends the version package.json declares', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SDK_VERSION).toBe(version);
  });
});
