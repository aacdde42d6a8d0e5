/**
 * `checkPaymentJournal`: the conformance checks every payment journal passes (the shipped stores in this
 * package's own tests, and a store of your own in yours).
 *
 * The checks live in `journal-conformance/`, one file per part of the interface (writes, the window, reads,
 * the deployment and the contradictions filter, leases, counts, budgets); this entry runs them in the order below.
 *
 * @module
 */

import type { PaymentJournal } from '../journal/journal.js';
import { BUDGET_CHECKS } from './journal-conformance/budget.js';
import { COUNT_CHECKS } from './journal-conformance/counts.js';
import { DEPLOYMENT_CHECKS } from './journal-conformance/deployment.js';
import { type Check, describe, settle, tracking, untracked } from './journal-conformance/kit.js';
import { LEASE_CHECKS } from './journal-conformance/leases.js';
import { READ_CHECKS } from './journal-conformance/reads.js';
import { WINDOW_CHECKS } from './journal-conformance/window.js';
import { WRITE_CHECKS } from './journal-conformance/writes.js';

/** The outcome of one conformance check. */
export interface JournalCheckResult {
  /** What the check proves, in a sentence. */
  readonly name: string;
  /** True when the store behaved as the interface requires. */
  readonly ok: boolean;
  /** What went wrong, when `ok` is false. */
  readonly error?: string;
}

/**
 * Opens the store under test. The suite calls it more than once (at least twice) and every call must open
 * the **same storage**: that is how it checks that a record written is read back after reopening (a new
 * `SqliteJournal` on the same file, a new pool on the same database). The storage should hold no open
 * records when the suite starts (a fresh file or schema is simplest); every record the suite writes is
 * left in a final state, so the suite can run again on the same storage.
 */
export type OpenPaymentJournal = () => PaymentJournal | Promise<PaymentJournal>;

/**
 * Runs every conformance check against the store that `openJournal` opens (see {@link OpenPaymentJournal})
 * and resolves with one result per check, in order. It never rejects for a failing store: a check that throws
 * is reported with `ok: false` and the message. Checks run one after another; leases are checked with leases of
 * a few tens of milliseconds, so the whole suite takes well under a few seconds on a local store.
 *
 * ```ts
 * const results = await checkPaymentJournal(() => new SqliteJournal(file));
 * expect(results.filter((result) => !result.ok)).toEqual([]);
 * ```
 */
export async function checkPaymentJournal(openJournal: OpenPaymentJournal): Promise<JournalCheckResult[]> {
  const opened: PaymentJournal[] = [];
  // Every referenceId the suite inserts, so a check that fails half-way still leaves nothing open behind it
  // (an open record left over would be leased by the next check, and by the next run on the same storage).
  const written = new Set<string>();
  const reopen = async () => {
    const journal = tracking(await openJournal(), written);
    opened.push(journal);
    return journal;
  };
  const results: JournalCheckResult[] = [];
  let journal: PaymentJournal;
  try {
    journal = await reopen();
  } catch (error) {
    return [{ name: 'the store opens', ok: false, error: describe(error) }];
  }
  for (const [name, check] of CHECKS) {
    try {
      await check({ journal, reopen });
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: describe(error) });
    }
    try {
      await settle(
        journal,
        [...written].map((referenceId) => ({ referenceId })),
      );
    } catch {
      // A store that cannot settle has failed a check already.
    }
    written.clear();
  }
  // The same object may come back from every open (a memory store): close each once.
  for (const store of new Set(opened.map((journal) => untracked.get(journal) ?? journal))) {
    try {
      await store.close?.();
    } catch {
      // A store that cannot close has still answered every check.
    }
  }
  return results;
}

/** Every check, in the order they run: each group's checks in its file's order. */
const CHECKS: ReadonlyArray<readonly [string, Check]> = [
  ...WRITE_CHECKS,
  ...WINDOW_CHECKS,
  ...DEPLOYMENT_CHECKS,
  ...READ_CHECKS,
  ...LEASE_CHECKS,
  ...COUNT_CHECKS,
  ...BUDGET_CHECKS,
];
