// @ts-check
/**
 * Mutation testing (`npm run test:mutation`): StrykerJS changes one rule at a time in the code that decides how a
 * payment moves, and runs the tests of vitest.mutation.config.ts against each change; a change no test notices is a
 * survivor. docs/internals/mutation-testing.md says how to run it and read the report, and lists the scores and
 * every survivor with why it is harmless.
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
    // The whole worker, not a line range: its decisions (what a status answer, a failed check, a 404, a
    // contradiction and a final status do to a payment) move within the file with every change, and a range
    // silently stops covering them. Its scheduler, leases and budget are mutated too; their survivors are listed.
    'src/collections/settlement-worker.ts',
    // Moved out of the worker file unchanged: what a status answer, a 404 (a resend, a not-sent close) and a
    // contradiction do to a payment, and what onSettled and onContradiction hear.
    'src/collections/worker-settling.ts',
    // Moved out of the worker file unchanged: which payments it holds (scan, renew, park, set aside, release), the
    // quota and the reserve; a lease kept past its bound would let two workers check one payment.
    'src/collections/worker-leases.ts',
    // Moved out of the worker file unchanged: the record onSettled is given and the pause after a 429.
    'src/collections/worker-outcome.ts',
    // What a 404 proves (only the service's own, and not on a wrong base URL) and the second, monotonic measure of
    // a record's age before it is closed as not sent.
    'src/collections/not-found-evidence.ts',
    'src/journal/record-watch.ts',
    // The duplicate-refusing mode (`duplicateReferences: 'refused'`): whether an open record may be resent and the
    // create rebuilt byte for byte, which answer means the service holds the reference, which refusal closes it, and
    // the sealed number a resend opens.
    'src/collections/resend.ts',
    'src/collections/duplicate-answer.ts',
    'src/collections/create-collection.ts',
    'src/collections/sealed-number.ts',
    // The status check's request: the reference it refuses before any I/O, the route, the deadline it carries.
    'src/collections/status-checks.ts',
    // How a record is written to a row and read back, and which rows are refused as unreadable rather than absent.
    'src/journal/record-row.ts',
    // The journal's budget arithmetic: the shares of the key's budget, the create reserve, the adaptive rate.
    'src/journal/budget.ts',
    // A process's share of the key's budget: when it asks the journal again, what it sends within it, what it waits.
    'src/collections/shared-budget.ts',
    // Where a record's push went, and whether this client's answers are evidence about it (base URL and account,
    // a rotated key's former accounts, an account not read).
    'src/collections/deployment.ts',
  ],
  coverageAnalysis: 'perTest',
  // A mutant of a module-level constant (the default status words, a limit) is active for every test, so it runs
  // all of them: 43 such mutants took 70 % of a run. They are skipped (reported as ignored) unless
  // MUTATE_STATIC=1 is set (`MUTATE_STATIC=1 npm run test:mutation -- --mutate <file>`; Stryker's CLI can only turn
  // the option on).
  ignoreStatic: process.env.MUTATE_STATIC !== '1',
  // Only what changed since the committed file is tested again: a run after a small change takes minutes.
  incremental: true,
  incrementalFile: 'test/mutation/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  // No `concurrency` here: Stryker's default (the machine's cores less one) suits a machine of one's own; on a busy
  // one, `npm run test:mutation -- --concurrency 1`.
  timeoutMS: 20_000,
  thresholds: { high: 95, low: 90, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
