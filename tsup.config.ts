import { rmSync } from 'node:fs';
import type { Plugin } from 'esbuild';
import { defineConfig, type Options } from 'tsup';

// dist is emptied here, once, before any build starts, instead of by tsup's `clean` option: that option also
// deletes every .d.ts in dist when its config's declaration build starts, which races with the other configs'
// declarations (dist/testing/index.d.ts went missing whenever the testing types were written first).
rmSync(new URL('dist', import.meta.url), { recursive: true, force: true });

/**
 * One line per entry point: `dist/<key>.{js,cjs,d.ts,d.cts}`. Entries whose types import an optional peer
 * dependency go in `withOptionalPeerTypes` instead (see below). The bin is built on its own.
 *
 * No source maps are shipped: the bundles are not minified, so a stack trace already points at readable
 * code, and the maps were two thirds of the tarball.
 */
const entries = {
  index: 'src/index.ts',
  'sqlite/index': 'src/sqlite/index.ts',
  'postgres/index': 'src/postgres/index.ts',
};

/**
 * Entries whose declarations import the types of an optional peer dependency (msw for the simulator's msw
 * face, `@opentelemetry/api` for the OpenTelemetry hooks). The import is the first line of each bundled
 * declaration file, and a ts-ignore directive before it lets a project without the peer compile under `skipLibCheck: false` (the peer's types are then `any`); with the
 * peer installed, the types are the peer's own. test/package/strict-types.test.ts checks both.
 */
const withOptionalPeerTypes = {
  'testing/index': 'src/testing/index.ts',
  'otel/index': 'src/otel/index.ts',
};

const shared: Options = {
  // node:sqlite exists only under its prefixed name: keep every `node:` prefix as written.
  external: [/^node:/],
  removeNodeProtocol: false,
  dts: true,
  sourcemap: false,
  target: 'node22',
  platform: 'neutral',
  treeshake: true,
  splitting: false,
  // ky and zod/mini are carried inside each entry, tree-shaken to what the SDK calls: one module to load instead of
  // ~110 (zod/mini's graph alone is ~90 files), which halves the cold import (docs/internals/performance.md). Both stay
  // dependencies: the declarations import zod's types, and zod 4 schemas work across copies (`_zod` traits).
  // It also lets the CommonJS build `require` ky (ESM only) on every Node 22, and in CommonJS test runners.
  noExternal: ['ky', 'zod'],
};

const OPTIONAL_PEER_BANNER =
  '// The next import is of an optional peer dependency: without it installed, its types are `any` instead of an error.\n// @ts-ignore';

/**
 * The `tap-collections-sdk` bin (`dist/cli/bin.js`, ESM only: npm runs it with Node): its commands
 * (`src/cli/`) are bundled into it, and everything heavy they use is imported, when a command needs it, from the
 * package's own built entry points: the SDK (`../index.js`), the simulator (`../testing/index.js`, only for
 * `simulate`), the journal stores (`../sqlite/index.js`, `../postgres/index.js`, only for the `--journal` given).
 * The relative paths from `src/cli/` and from `dist/cli/` are the same, so they are kept as written.
 */
const ENTRY_IMPORT = /^\.\.\/(index|testing\/index|sqlite\/index|postgres\/index)\.js$/;
const bin: Options = {
  entry: { 'cli/bin': 'src/cli/bin.ts' },
  format: 'esm',
  dts: false,
  sourcemap: false,
  target: 'node22',
  platform: 'node',
  removeNodeProtocol: false,
  splitting: false,
  esbuildPlugins: [
    {
      name: 'bin-uses-the-built-entries',
      setup(build) {
        build.onResolve({ filter: ENTRY_IMPORT, namespace: 'file' }, (args) =>
          /[\\/]src[\\/]cli[\\/]/.test(args.importer) ? { path: args.path, external: true } : undefined,
        );
      },
    },
  ],
};

/**
 * `src/sqlite/` and `src/postgres/` import the SDK's errors from `../core/errors.js` like every other layer; the build
 * points that import at the built main entry instead of bundling a copy, so those entries throw the main entry's own
 * `ConfigurationError` in both formats (a bundled copy would fail `instanceof`). Every name they import from there
 * is one the main entry exports.
 */
const mainEntryExternal = (file: string): Plugin => ({
  name: 'stores-use-the-main-entry',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/core\/errors\.js$/ }, (args) =>
      /src[\\/](sqlite|postgres)[\\/]/.test(args.importer) ? { path: `../${file}`, external: true } : undefined,
    );
  },
});

export default defineConfig([
  { ...shared, entry: entries, format: 'esm', esbuildPlugins: [mainEntryExternal('index.js')] },
  { ...shared, entry: entries, format: 'cjs', esbuildPlugins: [mainEntryExternal('index.cjs')] },
  { ...shared, entry: withOptionalPeerTypes, format: 'esm', dts: { banner: OPTIONAL_PEER_BANNER } },
  { ...shared, entry: withOptionalPeerTypes, format: 'cjs', dts: { banner: OPTIONAL_PEER_BANNER } },
  bin,
]);
