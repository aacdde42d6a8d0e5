/** `takeBudget` (optional): holders of one key never granted more than the limit together. */

import type { BudgetGrant, BudgetRequest } from '../../journal/budget.js';
import type { PaymentJournal } from '../../journal/journal.js';
import { expectEqual } from './expect.js';
import { type Check, delay, uuid } from './kit.js';

/** `takeBudget` (optional): holders of one key never granted more than the limit together. */
export const BUDGET_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    '(with takeBudget) concurrent holders on one key (and a reopened store) are never granted more than the limit together',
    async ({ journal, reopen }) => {
      const other = await reopen();
      if (journal.takeBudget === undefined || other.takeBudget === undefined) return;
      const key = `conformance-${uuid()}`;
      const holders = Array.from({ length: 6 }, () => uuid());
      const shares = new Map<string, number>();
      for (let round = 0; round < 4; round++) {
        await Promise.all(
          holders.map(async (holder, index) => {
            const store = (index % 2 === 0 ? journal : other) as Required<Pick<PaymentJournal, 'takeBudget'>>;
            const grant = await measured(store, budgetRequest(key, holder, shares.get(holder) ?? 0));
            shares.set(holder, grant.share);
          }),
        );
        const total = [...shares.values()].reduce((sum, share) => sum + share, 0);
        if (total > 12) throw new Error(`round ${round}: the holders were granted ${total} tokens of a 12-token budget together`);
      }
      expectEqual(
        [...shares.values()].some((share) => share > 0),
        true,
        'some holder was granted tokens',
      );
    },
  ],
  [
    '(with takeBudget) keys are apart, and tokens given back are granted again only a window later',
    async ({ journal }) => {
      if (journal.takeBudget === undefined) return;
      const store = journal as Required<Pick<PaymentJournal, 'takeBudget'>>;
      // Each holder says how long it measured since its last answer, as the SDK's clients do (leases and cooling run on
      // that time, not on the store's clock).
      const take = (request: BudgetRequest) => measured(store, request);
      const [first, second] = [`conformance-${uuid()}`, `conformance-${uuid()}`];
      const [a, b] = [uuid(), uuid()];
      expectEqual((await take(budgetRequest(first, a, 0))).share, 12, 'the first holder of a key: the whole budget');
      expectEqual((await take(budgetRequest(second, b, 0))).share, 12, 'another key: its own whole budget');
      expectEqual((await take(budgetRequest(first, b, 0))).share, 0, 'a second holder while the first keeps everything');
      expectEqual((await take(budgetRequest(first, a, 0))).share, 0, 'the first holder giving everything back keeps none');
      expectEqual((await take(budgetRequest(first, b, 0))).share, 0, 'tokens given back a moment ago (they may still be spent)');
      await delay(1_100);
      expectEqual((await take(budgetRequest(first, b, 0))).share > 0, true, 'tokens given back a window ago are granted again');
      // Tokens their holder had not spent within the last window (`inUse`) are granted again at once.
      const third = `conformance-${uuid()}`;
      expectEqual((await take(budgetRequest(third, a, 0))).share, 12, 'a third key: its whole budget');
      expectEqual(
        (await take({ ...budgetRequest(third, a, 4), want: 4, inUse: 3 })).share,
        4,
        'its holder keeping 4, having spent 3 lately',
      );
      expectEqual((await take(budgetRequest(third, b, 0))).share, 8, 'tokens given back unspent for a window: granted again at once');
      let refused = false;
      await store.takeBudget({ ...budgetRequest(first, a, 0), limit: 0 }).catch(() => {
        refused = true;
      });
      expectEqual(refused, true, 'a request with limit 0 is refused');
    },
  ],
];

/** Each holder's last answer (by key and holder): its event number and when it came (monotonic). */
const answers = new Map<string, { event: number; at: number }>();

/** A renewal that says how long its holder measured since its last answer (`since`), as a client does. */
async function measured(store: Required<Pick<PaymentJournal, 'takeBudget'>>, request: BudgetRequest): Promise<BudgetGrant> {
  const id = `${request.key}\u0000${request.holder}`;
  const last = answers.get(id);
  const since = last === undefined ? {} : { since: { event: last.event, elapsedMs: performance.now() - last.at } };
  const grant = await store.takeBudget({ ...request, ...since });
  answers.set(id, { event: grant.event, at: performance.now() });
  return grant;
}

/** A holder's renewal on a 12-token budget that wants as much as it can get and keeps `keep`. */
function budgetRequest(key: string, holder: string, keep: number): BudgetRequest {
  return { key, holder, limit: 12, keep, want: 1_000, leaseMs: 30_000, windowMs: 1_000, accepted: 0, rateLimited: 0, saturated: true };
}
