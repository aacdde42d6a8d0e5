/**
 * The API site's configuration (typedoc.json) against the package: every guide in docs/guide/ is a page of the site,
 * and every entry point of package.json `exports` is a module of the site, named as users import it.
 * Adding a guide or an entry point is one line in typedoc.json; these tests name the line that is missing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
const typedoc = JSON.parse(read('typedoc.json')) as { entryPoints: string[]; projectDocuments: string[] };
const manifest = JSON.parse(read('package.json')) as { name: string; exports: Record<string, unknown> };

describe('the API site', () => {
  it('has a page for every guide in docs/guide/ and none for the internals (typedoc.json "projectDocuments", in reading order)', () => {
    const guides = readdirSync(new URL('docs/guide/', root)).filter((name) => name.endsWith('.md'));
    expect([...typedoc.projectDocuments].sort()).toEqual(guides.map((name) => `docs/guide/${name}`).sort());
  });

  it('has a module for every entry point, named as it is imported (typedoc.json "entryPoints", `@module`)', () => {
    const imported = Object.keys(manifest.exports)
      .filter((subpath) => subpath !== './package.json')
      .map((subpath) => manifest.name + subpath.slice(1));
    const documented = typedoc.entryPoints.map((file) => read(file).match(/^ \* @module (\S+)$/m)?.[1]);
    expect(documented.sort()).toEqual(imported.sort());
  });
});
