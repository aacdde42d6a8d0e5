/**
 * The deployment a client's pushes go to (its Collections base URL and an identity of its API key's account),
 * written into each record `initiate` journals, and the one check that an answer is evidence about a record: it must
 * come from the deployment the record's push went to. A sandbox's 404 says nothing about a production push.
 *
 * @module
 */
import { ConfigurationError } from '../core/errors.js';
import { isDeploymentKnown, type PaymentDeployment, type PaymentRecord } from '../journal/journal.js';
import { keyDigest } from './budget-options.js';

/** The label a key's account identity is computed under (never the rate budget's: the two never compare). */
const ACCOUNT_LABEL = new TextEncoder().encode('tap-collections-sdk/account/v1');
/** Hex digits kept of a key's identity: 64 bits tell a fleet's keys apart, and nothing about a key can be learnt from them. */
const IDENTITY_HEX = 16;
/** The longest `account` name. */
export const MAX_ACCOUNT_LENGTH = 100;
/** C0, C1, DEL, line and paragraph separators, bidirectional overrides: an account name is printed by the CLI. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** How many key identities one key function is remembered by (a rotation a day for two months). */
const MAX_REMEMBERED_KEYS = 64;

/** The options of `CollectionsClientOptions` the deployment reads (documented there). */
export interface DeploymentOptions {
  account?: string | undefined;
  formerAccounts?: readonly string[] | undefined;
}

/**
 * The account identity of `apiKey` when the client names no `account`: `key:` and 16 hex digits of HMAC-SHA-256 of a
 * fixed label under the key. It cannot be turned back into the key, and differs from the rate budget's digest.
 */
export async function keyIdentity(apiKey: string): Promise<string> {
  return `key:${(await keyDigest(apiKey, ACCOUNT_LABEL)).slice(0, IDENTITY_HEX)}`;
}

/**
 * The identities of every key each key function returned in this process: one account, since the integrator's key
 * function vouches for every key it hands out (a rotation is recognized). Shared by the clients built with the same
 * function, so a client made per request still recognizes the keys its predecessors used.
 */
const KEYS_OF_FUNCTION = new WeakMap<object, Set<string>>();

function accountProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string';
  if (value.length > MAX_ACCOUNT_LENGTH) return `must be at most ${MAX_ACCOUNT_LENGTH} characters long`;
  if (UNPRINTABLE.test(value)) return 'must not contain control characters, line separators or bidirectional overrides';
  return undefined;
}

/** @throws {@link ConfigurationError} naming `account` or `formerAccounts` and the value's problem. */
function checkOptions(options: DeploymentOptions | undefined): { account: string | undefined; former: Set<string> } {
  const account = options?.account;
  if (account !== undefined) {
    const problem = accountProblem(account);
    if (problem !== undefined) throw new ConfigurationError(`Invalid CollectionsClient options: account ${problem}`);
  }
  const former = options?.formerAccounts;
  if (former === undefined) return { account, former: new Set() };
  if (!Array.isArray(former)) throw new ConfigurationError('Invalid CollectionsClient options: formerAccounts must be an array of strings');
  former.forEach((entry: unknown, index) => {
    const problem = accountProblem(entry);
    if (problem !== undefined) throw new ConfigurationError(`Invalid CollectionsClient options: formerAccounts[${index}] ${problem}`);
  });
  return { account, former: new Set(former) };
}

/** A client's deployment: what it writes into a record, and whether a record's push went to it. One per client. */
export class ClientDeployment {
  /** The client's base URL, normalized (lower-case scheme and host, no default port, no trailing slash, path kept). */
  readonly baseUrl: string;
  /** The `account` option, when given: the identity written into every record. */
  readonly account: string | undefined;
  readonly #former: ReadonlySet<string>;
  /** Identities of the keys this client (and the clients sharing its key function) sent with in this process. */
  readonly #keys: Set<string>;
  readonly #resolveKey: () => Promise<string>;
  /** The key noted last and its identity, once computed. */
  #lastKey: string | undefined;
  #latest: string | undefined;
  /** Identities being computed, in the order the keys came. */
  #noting: Promise<void> = Promise.resolve();

  /**
   * @param keySource - The client's `apiKey` option: a key function's identities are shared by every client given it.
   * @param resolveKey - The key the client would send with now (the key function's answer, checked).
   * @throws {@link ConfigurationError} for a bad `account` / `formerAccounts`.
   */
  constructor(baseUrl: string, options: DeploymentOptions | undefined, keySource: unknown, resolveKey: () => Promise<string>) {
    const { account, former } = checkOptions(options);
    this.baseUrl = baseUrl;
    this.account = account;
    this.#former = former;
    this.#resolveKey = resolveKey;
    let keys = typeof keySource === 'function' ? KEYS_OF_FUNCTION.get(keySource) : undefined;
    if (keys === undefined) {
      keys = new Set();
      if (typeof keySource === 'function') KEYS_OF_FUNCTION.set(keySource, keys);
    }
    this.#keys = keys;
  }

  /** Notes a key the client sends with: one of its account's keys from now on. Never throws. */
  noteKey(apiKey: string): void {
    if (apiKey === this.#lastKey) return;
    this.#lastKey = apiKey;
    this.#noting = this.#noting.then(async () => {
      try {
        const identity = await keyIdentity(apiKey);
        this.#keys.delete(identity);
        this.#keys.add(identity);
        if (this.#keys.size > MAX_REMEMBERED_KEYS) this.#keys.delete(this.#keys.values().next().value as string);
        if (this.#lastKey === apiKey) this.#latest = identity;
      } catch {
        // No Web Crypto: no key is recognized beyond what `account` / `formerAccounts` declare.
      }
    });
  }

  /** The identity of the key the client sends with now (the key function is asked). */
  async #currentKeyIdentity(): Promise<string | undefined> {
    this.noteKey(await this.#resolveKey());
    await this.#noting;
    return this.#latest;
  }

  /** What `initiate` writes into a new record: where its push goes. */
  async current(): Promise<PaymentDeployment> {
    const account = this.account ?? (await this.#currentKeyIdentity());
    if (account === undefined)
      throw new ConfigurationError('CollectionsClient: the API key has no identity (Web Crypto is unavailable); set the option account');
    return { baseUrl: this.baseUrl, account };
  }

  /**
   * What `initiate` writes when the key cannot be read now (a slow vault, no `account`): this base URL with the
   * account not read. No push leaves from such a record until an attempt writes the account (an empty account is not known).
   */
  unread(): PaymentDeployment {
    return { baseUrl: this.baseUrl, account: '' };
  }

  #accepts(account: string): boolean {
    return account === this.account || this.#former.has(account) || this.#keys.has(account);
  }

  /**
   * Whether an answer of this client's deployment is evidence about `record`: `undefined` when it is (the record's
   * push went to this base URL and account, or the record predates deployments), else the error to reject with.
   * Asks the key function at most once (a key not sent with yet may be the record's).
   */
  async mismatch(record: Pick<PaymentRecord, 'referenceId' | 'state' | 'deployment'>): Promise<DeploymentMismatchError | undefined> {
    const theirs = record.deployment;
    if (theirs === undefined) return undefined;
    const sameBaseUrl = theirs.baseUrl === this.baseUrl;
    // An account not read: nothing was pushed from the record under it, and its base URL is the whole evidence.
    if (sameBaseUrl && (!isDeploymentKnown(theirs) || this.#accepts(theirs.account))) return undefined;
    await this.#noting;
    if (sameBaseUrl && this.#accepts(theirs.account)) return undefined;
    const current = await this.#currentKeyIdentity();
    if (sameBaseUrl && this.#accepts(theirs.account)) return undefined;
    return new DeploymentMismatchError(record, theirs, { baseUrl: this.baseUrl, account: this.account ?? current ?? 'unknown' });
  }
}

/**
 * A record whose push went to another deployment than the client's: a {@link ConfigurationError} to callers (its
 * `name` says so too); the class lets `recover()` and the settlement worker report it per payment. Names both base
 * URLs and both account identities, never a key.
 */
export class DeploymentMismatchError extends ConfigurationError {
  /** Where the record's push went. */
  readonly recorded: PaymentDeployment;
  /** Where this client's requests go. */
  readonly configured: PaymentDeployment;

  constructor(record: Pick<PaymentRecord, 'referenceId' | 'state'>, recorded: PaymentDeployment, configured: PaymentDeployment) {
    const sameBaseUrl = recorded.baseUrl === configured.baseUrl;
    const remedy = sameBaseUrl
      ? `If this is the same account under a rotated API key, declare it: CollectionsClient option formerAccounts: ['${recorded.account}'] (COLLECTIONS_FORMER_ACCOUNTS for the CLI), or name the account with the option account; otherwise settle it with that account's key.`
      : 'Settle it with a client configured for that deployment (baseUrl / COLLECTIONS_BASE_URL and its API key).';
    super(
      `CollectionsClient: payment ${record.referenceId} was pushed to ${recorded.baseUrl} (account ${recorded.account === '' ? 'not read' : recorded.account}), but this client is configured for ${configured.baseUrl} (account ${configured.account}): an answer from here is no evidence about it, so nothing was asked and the record stays ${record.state}. ${remedy}`,
    );
    this.name = 'ConfigurationError';
    this.recorded = recorded;
    this.configured = configured;
  }
}
