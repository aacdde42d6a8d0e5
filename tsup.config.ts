import { defineConfig, type Options } from 'tsup';

const shared: Options = {
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/cli': 'src/testing/cli.ts',
    'sqlite/index': 'src/sqlite/index.ts',
    'postgres/index': 'src/postgres/index.ts',
  },
  // node:sqlite exists only under its prefixed name: keep every `node:` prefix as written.
  external: [/^node:/],
  removeNodeProtocol: false,
  dts: true,
  sourcemap: true,
  target: 'node22',
  platform: 'neutral',
  treeshake: true,
  splitting: false,
};

export default defineConfig([
  { ...shared, format: 'esm', clean: true },
  // ky ships ESM only; the CommonJS build carries it inside, so `require` works on every Node 22
  // (require(esm) is unflagged only from 22.12) and in CommonJS test runners.
  { ...shared, format: 'cjs', noExternal: ['ky'] },
]);
