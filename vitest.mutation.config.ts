import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The simulation runs after every other file of a mutant's run: vitest starts with the longest file, and a mutant a
 * rule test kills in milliseconds cost the whole thousand seeds first (about 75 s of a core). Files that failed in
 * the last run still come first among the others.
 */
class SimulationLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isSimulation = (file: TestSpecification) => file.moduleId.endsWith('test/simulation/simulation.test.ts');
    return [...sorted.filter((file) => !isSimulation(file)), ...sorted.filter(isSimulation)];
  }
}

/**
 * The tests StrykerJS runs against each mutant (`npm run test:mutation`, see stryker.config.mjs): the deterministic
 * simulation with fewer seeds, and the in-process unit tests of the mutated files. Left out: tests that run the SDK
 * in other processes (a mutant is active only in the test's own process) and the PostgreSQL tests (the memory
 * journal's conformance suite covers the same journal rules in process), and tests that hold real time to tens of
 * milliseconds (test/worker/worker-simulator.test.ts, test/collections/poll-until-settled.test.ts,
 * test/collections/poll-status-words.test.ts): on a loaded machine
 * they fail in the initial run, which stops it; the worker's decisions are tested on fake timers instead.
 */
export default defineConfig({
  test: {
    include: [
      'test/simulation/simulation.test.ts',
      'test/journal/initiate.test.ts',
      'test/journal/initiate-overtaken.test.ts',
      'test/journal/initiate-outcome-evidence.test.ts',
      'test/journal/initiate-decisions.test.ts',
      'test/journal/recover.test.ts',
      'test/journal/recover-rules.test.ts',
      'test/journal/state-machine-cases.test.ts',
      'test/journal/state-machine-rules.test.ts',
      'test/journal/memory-conformance.test.ts',
      // The rows of a SQLite file (record-row.ts), in process: what is written, read back and refused.
      'test/journal/sqlite-conformance.test.ts',
      'test/journal/sqlite-rows.test.ts',
      'test/journal/one-404-rule.test.ts',
      'test/journal/record-watch.test.ts',
      'test/journal/contradictions.test.ts',
      'test/collections/not-found-evidence.test.ts',
      'test/collections/not-found-evidence-rules.test.ts',
      'test/worker/liveness-bound.test.ts',
      'test/collections/initiate.test.ts',
      'test/collections/reconcile.test.ts',
      'test/collections/errors.test.ts',
      'test/collections/check-status.test.ts',
      'test/collections/status-checks-rules.test.ts',
      'test/collections/status-words.test.ts',
      'test/collections/status-words-rules.test.ts',
      'test/worker/scheduler.test.ts',
      'test/worker/budget-and-queue.test.ts',
      // The key's shared budget on virtual time (the journal's arithmetic, a process's share, 'adaptive').
      'test/worker/shared-budget.test.ts',
      // A process's share rule by rule (shared-budget.ts): when a token frees, what a renewal reports and asks for.
      'test/worker/shared-budget-rules.test.ts',
      // The journal's budget arithmetic rule by rule (budget.ts): the requests a store refuses, edges of the shares.
      'test/journal/budget-rules.test.ts',
      'test/worker/settlement-decisions.test.ts',
      // Which payments a worker holds, rule by rule (worker-leases.ts): scan, renew, park, set aside, release.
      'test/worker/lease-rules.test.ts',
      'test/core/connection-failure.test.ts',
      'test/core/retry-policy.test.ts',
      'test/core/idempotent-create.test.ts',
      'test/tap/reconcile-own-query.test.ts',
      'test/tap/submit-customer-query.test.ts',
      // The duplicate-refusing mode: resends within a call, by recover(), the worker and initiate; the probe's reading
      // of the duplicate answer; the directed worlds of its precondition.
      'test/collections/duplicate-references.test.ts',
      'test/collections/duplicate-references-rules.test.ts',
      'test/cli/probe-duplicates.test.ts',
      'test/simulation/simulation-directed.test.ts',
      // The 202's undocumented id, as the create hands it on (create-collection.ts's withTextId).
      'test/collections/initiated-id.test.ts',
      // Where a record's push went (deployment.ts): the other deployment's answers never move it, key rotation.
      'test/journal/deployment.test.ts',
    ],
    environment: 'node',
    // One module graph for all the files of a mutant's run instead of one per file: every test file here passes
    // without isolation, and each mutant's run is several times faster.
    isolate: false,
    sequence: { sequencer: SimulationLast },
    testTimeout: 30_000,
    // The first half of `npm test`'s seeds (this set runs simulation.test.ts alone: seeds 1–1 000) in batches of 50:
    // a mutant caught at seed 3 costs one batch, a survivor the whole thousand. The rare paths are checked by
    // `npm test`'s sweep, not here (test/simulation/suite.ts).
    env: { SIM_SEEDS: process.env.SIM_SEEDS ?? '2000', SIM_BATCHES: process.env.SIM_BATCHES ?? '20', SIM_RARE_PATHS: 'off' },
  },
});
