// The SDK's layers as rules (docs/architecture.md explains them). `npm run lint` runs `depcruise src` with this file;
// a violation fails the run and prints the rule's name. Type-only imports count: a type import of `pg` still puts
// `pg` into the published declarations, and a type-only cycle is still a cycle between files.
const { builtinModules } = require('node:module');

/** Every Node.js builtin as dependency-cruiser names it: `node:`-only ones keep the prefix (`node:sqlite`), the rest drop it (`http`). */
const NODE_BUILTIN = `^(node:.+|${builtinModules
  .filter((name) => !name.startsWith('node:'))
  .map((name) => name.replace(/[/]/g, '\\/'))
  .join('|')})$`;

/** The lower layers: what `src/index.ts` (the main entry) is made of. */
const LOWER = '^src/(index\\.ts$|core/|journal/|tap/|collections/)';

/** The upper layers: the other entry points and the bin, each built on the lower ones. */
const UPPER = '^src/(sqlite|postgres|otel|testing|cli)/';

/** Why tap and collections never import each other (the comment of both rules). */
const SERVICES_APART = 'The two services are independent: what both need lives in src/core/. Only src/index.ts puts them side by side.';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycle in src/: a cycle makes the load order decide what a module sees at startup.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'Every import resolves: an import the cruiser cannot follow would hide its edges from every other rule.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
    {
      name: 'core-imports-only-core',
      severity: 'error',
      comment: 'src/core/ (transport, retry, errors, validation, redaction…) is the base: it imports nothing else of the SDK.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'journal-imports-only-core',
      severity: 'error',
      comment: 'src/journal/ (the record, its state machine, MemoryJournal) knows no client and no store: only src/core/.',
      from: { path: '^src/journal/' },
      to: { path: '^src/', pathNot: '^src/(journal|core)/' },
    },
    {
      name: 'tap-not-collections',
      severity: 'error',
      comment: SERVICES_APART,
      from: { path: '^src/tap/' },
      to: { path: '^src/collections/' },
    },
    {
      name: 'collections-not-tap',
      severity: 'error',
      comment: SERVICES_APART,
      from: { path: '^src/collections/' },
      to: { path: '^src/tap/' },
    },
    {
      name: 'lower-layers-not-upper',
      severity: 'error',
      comment:
        'The stores (sqlite, postgres), otel, testing and the cli sit above the main entry: nothing of core, journal, tap, collections or src/index.ts imports them.',
      from: { path: LOWER },
      to: { path: UPPER },
    },
    {
      name: 'testing-not-cli',
      severity: 'error',
      comment:
        'tap-collections-sdk/testing (the simulator, fixtures, the conformance kit) is a library a partner imports into tests: it never carries the bin or its commands (the bin lives in src/cli/ and imports testing, not the reverse).',
      from: { path: '^src/testing/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'src-not-test',
      severity: 'error',
      comment: 'The published code never imports the tests, their helpers, the benchmarks, the scripts or the examples.',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts|examples|ecosystem)/' },
    },
    {
      name: 'main-entry-no-node-builtins',
      severity: 'error',
      comment:
        'The main entry runs wherever fetch exists (browsers, workers, Deno, Bun): nothing it reaches imports a node: module (README.md, "Runs on").',
      from: { path: '^src/index\\.ts$' },
      to: { path: NODE_BUILTIN, reachable: true },
    },
    {
      name: 'main-entry-only-ky-and-zod',
      severity: 'error',
      comment:
        'The main entry depends on ky and zod only: pg, node:sqlite, @opentelemetry/api and msw belong to the entries that need them.',
      from: { path: '^src/index\\.ts$' },
      to: { path: '^node_modules/', pathNot: '^node_modules/(ky|zod)/', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
