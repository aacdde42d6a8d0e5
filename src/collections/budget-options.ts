/**
 * A client's side of the key's shared rate budget: its options (`requestsPerSecond`, `budgetLeaseMs` with a
 * journal) checked, and the binding that finds, per journal and key digest in this process, the one
 * {@link KeyBudget} every client there shares (and warns about clients with and without a budget on one key).
 *
 * @module
 */
import { MAX_TIMER_MS } from '../core/config.js';
import { ConfigurationError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import type { SharedBudgets } from '../core/transport.js';
import type { PaymentJournal } from '../journal/journal.js';
import { DEFAULT_BUDGET_LEASE_MS, KeyBudget, MIN_BUDGET_LEASE_MS, type SharedLimit } from './shared-budget.js';

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

interface JournalBudgets {
  readonly budgets: Map<string, KeyBudget>;
  /** Key digests used on this journal by clients without `requestsPerSecond`. */
  readonly unbudgeted: Set<string>;
  readonly warned: Set<string>;
}

/** Every journal's budgets in this process: clients on one journal object and one key share one {@link KeyBudget}. */
const REGISTRY = new WeakMap<object, JournalBudgets>();

function registryOf(journal: PaymentJournal): JournalBudgets {
  let entry = REGISTRY.get(journal);
  if (entry === undefined) {
    entry = { budgets: new Map(), unbudgeted: new Set(), warned: new Set() };
    REGISTRY.set(journal, entry);
  }
  return entry;
}

function warnMixed(entry: JournalBudgets, digest: string, logger: LevelLogger): void {
  if (entry.warned.has(digest)) return;
  entry.warned.add(digest);
  logger.warn(
    'shared rate budget: clients with and without requestsPerSecond use the same API key on this journal; the requests of those without it are not counted in the shared budget',
  );
}

/**
 * A client's view of the shared budgets: the {@link KeyBudget} of each key it sends with (the key may rotate: each
 * key has its own budget, as the service limits each key). Hands it out synchronously once the key's digest is known.
 */
export class BudgetBinding {
  readonly #journal: PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>;
  readonly #limit: SharedLimit;
  readonly #leaseMs: number;
  readonly #logger: LevelLogger;
  /** The last key used and its budget: the hot path's lookup is one comparison. */
  #lastKey: string | undefined;
  #lastBudget: KeyBudget | undefined;

  constructor(
    journal: PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>,
    limit: SharedLimit,
    leaseMs: number,
    logger: LevelLogger,
  ) {
    this.#journal = journal;
    this.#limit = limit;
    this.#leaseMs = leaseMs;
    this.#logger = logger;
  }

  /** The budget of `apiKey`, or a promise of it the first time a key is seen (its digest is computed then). */
  budgetFor(apiKey: string): KeyBudget | Promise<KeyBudget> {
    if (apiKey === this.#lastKey && this.#lastBudget !== undefined) return this.#lastBudget;
    return this.#lookUp(apiKey);
  }

  async #lookUp(apiKey: string): Promise<KeyBudget> {
    const digest = await keyDigest(apiKey);
    const entry = registryOf(this.#journal);
    let budget = entry.budgets.get(digest);
    if (budget === undefined) {
      budget = new KeyBudget(this.#journal, digest, this.#limit, this.#leaseMs, this.#logger);
      entry.budgets.set(digest, budget);
    } else if (!budget.declare(this.#limit)) {
      this.#logger.warn('shared rate budget: clients of this process declare different requestsPerSecond for one key; the stricter holds');
    }
    if (entry.unbudgeted.has(digest)) warnMixed(entry, digest, this.#logger);
    this.#lastKey = apiKey;
    this.#lastBudget = budget;
    return budget;
  }
}

/**
 * Notes that a client without `requestsPerSecond` sends with `apiKey` on `journal`, and warns once per key when a
 * client with it uses the same key there. Resolves when noted; never rejects.
 */
export async function noteUnbudgeted(journal: PaymentJournal, apiKey: string, logger: LevelLogger): Promise<void> {
  try {
    const digest = await keyDigest(apiKey);
    const entry = registryOf(journal);
    entry.unbudgeted.add(digest);
    if (entry.budgets.has(digest)) warnMixed(entry, digest, logger);
  } catch {
    // Only a warning is lost.
  }
}

const DIGEST_LABEL = new TextEncoder().encode('tap-collections-sdk/rate-budget/v1');

/**
 * What identifies a key's budget in a journal: HMAC-SHA-256 of a fixed label under the key, in hex. The key is
 * never stored; the digest cannot be turned back into it, and a different key (a rotation) is a different budget.
 * Another `label` gives another identity of the same key (each use of an identity has its own label, so one stored
 * identity can never be matched against another kind).
 */
export async function keyDigest(apiKey: string, label: Uint8Array<ArrayBuffer> = DIGEST_LABEL): Promise<string> {
  const subtle = globalThis.crypto.subtle;
  const key = await subtle.importKey('raw', new TextEncoder().encode(apiKey), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await subtle.sign('HMAC', key, label));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
