/**
 * A client's shared rate budget options (`requestsPerSecond`, `budgetLeaseMs` with a journal), checked and bound
 * to the transport.
 *
 * @module
 */
import { MAX_TIMER_MS } from '../core/config.js';
import { ConfigurationError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import type { SharedBudgets } from '../core/transport.js';
import type { PaymentJournal } from '../journal/journal.js';
import { BudgetBinding, DEFAULT_BUDGET_LEASE_MS, MIN_BUDGET_LEASE_MS, noteUnbudgeted } from './shared-budget.js';

/** The options of `CollectionsClientOptions` the budget reads (documented there). */
export interface BudgetOptions {
  /** The journal that keeps the budget. */
  journal?: PaymentJournal | undefined;
  /** Requests per second shared by every client of the key, or `'adaptive'`. */
  requestsPerSecond?: number | 'adaptive' | undefined;
  /** How long a share is held. */
  budgetLeaseMs?: number | undefined;
}

/**
 * The client's shared rate budgets (`requestsPerSecond` with a journal), or, for a client with a journal and no
 * budget, a binding that only notes its keys (to warn about clients with and without one on one key).
 * @throws {@link ConfigurationError} for a bad `requestsPerSecond` / `budgetLeaseMs`, or a journal without `takeBudget`.
 */
export function sharedBudgetsOf(options: BudgetOptions | undefined, logger: LevelLogger): SharedBudgets | undefined {
  const limit = options?.requestsPerSecond;
  const leaseMs = options?.budgetLeaseMs ?? DEFAULT_BUDGET_LEASE_MS;
  const journal = options?.journal;
  if (limit === undefined) {
    if (options?.budgetLeaseMs !== undefined) {
      throw new ConfigurationError('Invalid CollectionsClient options: budgetLeaseMs needs requestsPerSecond');
    }
    if (journal === undefined) return undefined;
    let seen: string | undefined;
    return {
      budgetFor: (apiKey) => {
        if (apiKey !== seen) {
          seen = apiKey;
          void noteUnbudgeted(journal, apiKey, logger);
        }
        return undefined;
      },
    };
  }
  if (limit !== 'adaptive' && !(Number.isSafeInteger(limit) && limit >= 1)) {
    throw new ConfigurationError("Invalid CollectionsClient options: requestsPerSecond must be a whole number ≥ 1 or 'adaptive'");
  }
  if (!(Number.isSafeInteger(leaseMs) && leaseMs >= MIN_BUDGET_LEASE_MS && leaseMs <= MAX_TIMER_MS)) {
    throw new ConfigurationError(
      `Invalid CollectionsClient options: budgetLeaseMs must be a whole number of milliseconds from ${MIN_BUDGET_LEASE_MS} to ${MAX_TIMER_MS}`,
    );
  }
  if (journal === undefined) {
    throw new ConfigurationError(
      'Invalid CollectionsClient options: requestsPerSecond is the budget a journal shares; give the client a journal',
    );
  }
  if (typeof journal.takeBudget !== 'function') {
    throw new ConfigurationError(
      'Invalid CollectionsClient options: requestsPerSecond needs a journal that keeps rate budgets (takeBudget); this journal does not, and a budget kept per process would not be shared',
    );
  }
  return new BudgetBinding(journal as PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>, limit, leaseMs, logger);
}
