import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  entry: { index: 'src/index.ts', 'testing/index': 'src/testing/index.ts', 'testing/cli': 'src/testing/cli.ts' },
  dts: true,
  sourcemap: true,
  target: 'node22',
  platform: 'neutral',
  treeshake: true,
  splitting: false,
  // ky and zod/mini are carried inside each entry, tree-shaken to what the SDK calls: one module to load instead of
  // ~110 (zod/mini's graph alone is ~90 files), which halves the cold import (docs/performance.md). Both stay
  // dependencies: the declarations import zod's types, and zod 4 schemas work across copies (`_zod` traits).
  // It also lets the CommonJS build `require` ky (ESM only) on every Node 22, and in CommonJS test runners.
  noExternal: ['ky', 'zod'],
};

export default defineConfig([
  { ...shared, format: 'esm', clean: true },
  { ...shared, format: 'cjs' },
]);
