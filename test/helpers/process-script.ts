/**
 * Bundles a TypeScript entry into one ESM file in a fresh temporary folder, so a test can run it as a real child
 * process (`node file.mjs`) and kill it. `useProcessScript` does it once per test file and removes the folder after.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll } from 'vitest';

/** Where the bundled script is, once the file's `beforeAll` has run. */
export interface ProcessScript {
  /** The bundled `.mjs` file. */
  path: string;
  /** Its temporary folder, for anything else the test writes (databases, logs). */
  dir: string;
}

/**
 * Bundles `entry` (a URL, e.g. `new URL('./processes/till.ts', import.meta.url)`) before the file's tests run.
 * `external` packages are left out of the bundle; `requireShim` gives the bundle a real `require`, which a CommonJS
 * dependency bundled in (pg) needs for Node's built-ins.
 */
export function useProcessScript(
  entry: URL,
  name: string,
  external: string[] = [],
  options: { requireShim?: boolean } = {},
): ProcessScript {
  const script: ProcessScript = { path: '', dir: '' };
  beforeAll(async () => {
    script.dir = await mkdtemp(join(tmpdir(), `tap-collections-${name}-`));
    script.path = join(script.dir, `${name}.mjs`);
    await build({
      entryPoints: [fileURLToPath(entry)],
      outfile: script.path,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      external,
      // A CommonJS dependency bundled into ESM (e.g. pg) requires Node's built-ins: give it a real require.
      ...(options.requireShim
        ? {
            banner: {
              js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
            },
          }
        : {}),
      logLevel: 'silent',
    });
  });
  afterAll(() => rm(script.dir, { recursive: true, force: true }));
  return script;
}
