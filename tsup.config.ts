import { defineConfig, type Options } from 'tsup';

/**
 * One line per entry point: `dist/<key>.{js,cjs,d.ts,d.cts}`. The bin is built on its own below.
 *
 * No source maps are shipped: the bundles are not minified, so a stack trace already points at readable
 * code, and the maps were two thirds of the tarball.
 */
const entry = {
  index: 'src/index.ts',
  'testing/index': 'src/testing/index.ts',
};

const shared: Options = {
  entry,
  dts: true,
  sourcemap: false,
  target: 'node22',
  platform: 'neutral',
  treeshake: true,
  splitting: false,
};

/**
 * The `tap-collections-sdk` bin (`dist/testing/cli.js`, ESM only: npm runs it with Node). Every module it
 * imports from `src/testing/` is taken from the published `tap-collections-sdk/testing` build
 * (`./index.js`) instead of being bundled a second time.
 */
const bin: Options = {
  entry: { 'testing/cli': 'src/testing/cli.ts' },
  format: 'esm',
  dts: false,
  sourcemap: false,
  target: 'node22',
  platform: 'node',
  splitting: false,
  esbuildPlugins: [
    {
      name: 'bin-uses-the-testing-entry',
      setup(build) {
        build.onResolve({ filter: /^\.\.?\//, namespace: 'file' }, (args) =>
          args.importer.endsWith('src/testing/cli.ts') ? { path: './index.js', external: true } : undefined,
        );
      },
    },
  ],
};

export default defineConfig([
  { ...shared, format: 'esm', clean: true },
  // ky ships ESM only; the CommonJS build carries it inside, so `require` works on every Node 22
  // (require(esm) is unflagged only from 22.12) and in CommonJS test runners.
  { ...shared, format: 'cjs', noExternal: ['ky'] },
  bin,
]);
