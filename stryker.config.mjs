// @ts-check
/**
 * Mutation testing (`npm run test:mutation`): StrykerJS changes one rule at a time in the code that decides how a
 * payment moves, and runs the tests of vitest.mutation.config.ts against each change; a change no test notices is a
 * survivor. docs/testing.md says how to run it and read the report; docs/reliability.md lists the scores and every
 * survivor with why it is harmless.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  mutate: [
    'src/journal/state-machine.ts',
    'src/collections/journaled-initiate.ts',
    'src/collections/recover.ts',
    'src/core/idempotent-create.ts',
    'src/collections/status-words.ts',
    // The settlement worker's decisions: what a status answer, a failed check, a 404 and a final status do to a
    // payment (#check to the end of the file). The scheduler, leases and budget above are load-tested elsewhere.
    'src/collections/settlement-worker.ts:459-620',
  ],
  coverageAnalysis: 'perTest',
  // A mutant of a module-level constant (the default status words, a limit) is active for every test, so it runs
  // all of them: 43 such mutants took 70 % of a run. They are skipped (reported as ignored);
  // `npm run test:mutation -- --ignoreStatic false` tests them too.
  ignoreStatic: true,
  // Only what changed since the committed file is tested again: a run after a small change takes minutes.
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // The machine's cores less one by default; `npm run test:mutation -- --concurrency 1` on a busy machine.
  timeoutMS: 20_000,
  thresholds: { high: 95, low: 90, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
