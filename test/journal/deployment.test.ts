/**
 * Evidence only from the deployment the push went to (docs/guide/journal.md, "A record remembers its deployment"): a record
 * written by a production client is never asked about, nor moved, by a client configured for another deployment (the
 * sandbox's base URL and key from a copied .env), whose 404s are the envelope of a real Collections service and whose
 * `/health` answers 200. Key rotation is recognized (one key function) or declared (`formerAccounts`, `account`).
 * Also: the `not-sent` event keeps the deciding 404's request id, and one watch per journal in a process.
 * Fake timers drive `setTimeout`, `Date` and `performance.now()`; msw answers in process.
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { showLines } from '../../src/cli/journal.js';
import { clientFromEnvironment } from '../../src/cli/shared.js';
import { ClientDeployment, DeploymentMismatchError, keyIdentity } from '../../src/collections/deployment.js';
import {
  type CollectionsClient,
  type CollectionsClientOptions,
  ConfigurationError,
  MemoryJournal,
  type PaymentRecord,
  UnknownOutcomeError,
} from '../../src/index.js';
import {
  acceptCollection,
  advanceTime,
  advanceUntilSettled,
  CHECK_URL,
  collectionInput,
  collectionsClient,
  HEALTH_URL,
  INITIATE_URL,
  json,
  REFERENCE_ID,
  serviceNotFound,
  statusBody,
  track,
  useFakeClock,
} from '../helpers/collections.js';
import { API_KEY, COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

beforeEach(() => useFakeClock());
afterEach(() => vi.useRealTimers());

const PRODUCTION = COLLECTIONS_BASE_URL;
const SANDBOX = 'https://sandbox.collections.test';
const SANDBOX_KEY = 'sandbox_test_key_7e1d3c5b9a';
/** One attempt of 30 s, no retries: the window a record of these clients carries. */
const WINDOW_MS = 30_000;
const GRACE_MS = 10_000;
const CLIENT = { maxRetries: 0, timeoutMs: WINDOW_MS } as const;

/** The sandbox: a real Collections service (its /health answers 200, its 404 is the envelope) that holds nothing. */
function sandboxAnswersLikeTheService(): void {
  server.use(
    http.get(`${SANDBOX}/health`, () => HttpResponse.json({ status: 'ok' })),
    http.get(`${SANDBOX}/v1/collections/check/:referenceId`, serviceNotFound),
  );
}

/** Production's answer to a status check, from now on. */
function productionAnswers(statusText: 'successful' | 'not-found'): void {
  server.use(
    http.get(CHECK_URL, () => (statusText === 'not-found' ? serviceNotFound() : HttpResponse.json(statusBody({ statusText })))),
    http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
  );
}

/** A till's push whose answer came too late (500, and production's read lagged): the record is `unknown`. */
async function unknownPush(journal: MemoryJournal, options: CollectionsClientOptions = {}): Promise<void> {
  server.use(http.post(INITIATE_URL, () => json(500, { success: false, code: 'E_INTERNAL' })));
  productionAnswers('not-found');
  const call = track(collectionsClient({ ...CLIENT, journal, ...options }).initiate(collectionInput()));
  await advanceUntilSettled(call, 5);
  expect(call.error).toBeInstanceOf(UnknownOutcomeError);
  expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
}

function sandboxClient(journal: MemoryJournal, options: CollectionsClientOptions = {}): CollectionsClient {
  return collectionsClient({ ...CLIENT, journal, baseUrl: SANDBOX, apiKey: SANDBOX_KEY, ...options });
}

const sandboxChecks = () => requests.filter((request) => request.path.startsWith('/v1/collections/check/')).length;

/** The error names both base URLs and both accounts, and never a key. */
function expectNamesBothDeployments(error: unknown): void {
  expect(error).toBeInstanceOf(ConfigurationError);
  const { message } = error as Error;
  expect(message).toContain(PRODUCTION);
  expect(message).toContain(SANDBOX);
  expect(message).toMatch(/account key:[0-9a-f]{16}\b.*account key:[0-9a-f]{16}\b/);
  expect(message).not.toContain(API_KEY);
  expect(message).not.toContain(SANDBOX_KEY);
}

describe('the incident: a process configured for the sandbox, on the journal of production', () => {
  it('a record remembers its deployment: the normalized base URL and an identity of the key that cannot reveal it', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal, { baseUrl: 'HTTPS://Collections.TEST:443/' });
    const record = await journal.get(REFERENCE_ID);
    expect(record?.deployment).toEqual({ baseUrl: PRODUCTION, account: expect.stringMatching(/^key:[0-9a-f]{16}$/) });
    expect(JSON.stringify(record)).not.toContain(API_KEY);
  });

  it('journal show prints where the push went: the base URL and the account identity to declare', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    const shown = showLines(record, await journal.history(REFERENCE_ID));
    expect(shown).toContain(`  ${'pushed to'.padEnd(17)} ${PRODUCTION}\n`);
    expect(shown).toContain(`  ${'account'.padEnd(17)} ${record.deployment?.account}\n`);
  });

  it('recover(): the record stays unknown, nothing is asked of the sandbox, and the error names both base URLs', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    productionAnswers('successful');
    sandboxAnswersLikeTheService();
    const errors: string[] = [];
    const sandbox = sandboxClient(journal, { logger: { ...silent, error: (line: string) => errors.push(line) }, logLevel: 'error' });
    // Long past the window and the grace, by both clocks: the old rule closed it not-sent here (a double charge).
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    requests.length = 0;
    for (let round = 0; round < 2; round++) {
      const recovering = track(sandbox.recover());
      await advanceUntilSettled(recovering, 5);
      expectNamesBothDeployments(recovering.error);
      expect((recovering.error as Error).message).toContain(`${REFERENCE_ID} (unknown)`);
      await advanceTime(WINDOW_MS + GRACE_MS, 1_000);
    }
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
    expect(sandboxChecks()).toBe(0);
    // Said per payment, naming both base URLs.
    expect(errors.some((line) => line.includes(REFERENCE_ID) && line.includes(PRODUCTION) && line.includes(SANDBOX))).toBe(true);
    // Production's own client settles it as production holds it.
    const [settled] = await collectionsClient({ ...CLIENT, journal }).recover();
    expect(settled?.state).toBe('successful');
  });

  it('checkStatus and pollUntilSettled reject with ConfigurationError naming both base URLs, and ask nothing', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    sandboxAnswersLikeTheService();
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    requests.length = 0;
    const sandbox = sandboxClient(journal);
    const checked = track(sandbox.checkStatus(REFERENCE_ID));
    await advanceUntilSettled(checked, 5);
    expectNamesBothDeployments(checked.error);
    const polled = track(sandbox.pollUntilSettled(REFERENCE_ID, { maxWaitMs: 60_000 }));
    await advanceUntilSettled(polled, 100);
    expectNamesBothDeployments(polled.error);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
    expect(sandboxChecks()).toBe(0);
  });

  it('initiate of the same payment on the sandbox client sends nothing and leaves the record as it is', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    sandboxAnswersLikeTheService();
    server.use(http.post(`${SANDBOX}/v1/collections/mobile-money`, () => HttpResponse.json({}, { status: 202 })));
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    requests.length = 0;
    const again = track(sandboxClient(journal).initiate(collectionInput()));
    await advanceUntilSettled(again, 5);
    expectNamesBothDeployments(again.error);
    expect(requests).toEqual([]);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it('the settlement worker: the record stays open, an error line names both base URLs, it reports the problem, no hot loop', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    sandboxAnswersLikeTheService();
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    requests.length = 0;
    const errors: string[] = [];
    let leases = 0;
    const lease = journal.lease.bind(journal);
    journal.lease = async (request) => {
      const records = await lease(request);
      leases += records.length;
      return records;
    };
    const settled: PaymentRecord[] = [];
    const logger = { ...silent, error: (line: string) => errors.push(line) };
    const worker = sandboxClient(journal, { logger, logLevel: 'error' }).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 500,
      maxIntervalMs: 500,
      onSettled: (record) => void settled.push(record),
    });
    try {
      await advanceTime(3 * 60_000, 500);
      expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
      expect(settled).toEqual([]);
      expect(sandboxChecks()).toBe(0);
      expectNamesBothDeployments(worker.configurationProblem);
      const said = errors.filter((line) => line.includes(PRODUCTION) && line.includes(SANDBOX));
      expect(said).toHaveLength(1);
      // Set aside a minute at a time, not leased again at once: a handful of leases in three minutes.
      expect(leases).toBeGreaterThanOrEqual(1);
      expect(leases).toBeLessThanOrEqual(4);
    } finally {
      await worker.stop();
    }
  });

  it('a record of an earlier release (no deployment) is still settled by the status the service finds', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    const { deployment: _, ...legacy } = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    const earlier = new MemoryJournal();
    await earlier.insert({ ...legacy, state: 'unknown' });
    productionAnswers('successful');
    const [record] = await collectionsClient({ ...CLIENT, journal: earlier }).recover();
    expect(record?.state).toBe('successful');
  });
});

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('no push leaves from a record that does not say where it went', () => {
  /** A journal holding this test's payment as a record of an unknown push, without a deployment unless `record` names one. */
  async function journalHolding(record: Pick<PaymentRecord, 'state'> & Partial<Pick<PaymentRecord, 'deployment'>>): Promise<MemoryJournal> {
    const scratch = new MemoryJournal();
    await unknownPush(scratch);
    const { deployment: _, ...payment } = (await scratch.get(REFERENCE_ID)) as PaymentRecord;
    const journal = new MemoryJournal();
    await journal.insert({ ...payment, ...record });
    return journal;
  }

  /** A sandbox that answers a status of its own for the reference (another payment of the same id, or a test's). */
  function sandboxAnswersFailed(): void {
    server.use(
      http.get(`${SANDBOX}/health`, () => HttpResponse.json({ status: 'ok' })),
      http.get(`${SANDBOX}/v1/collections/check/:referenceId`, () => HttpResponse.json(statusBody({ statusText: 'failed' }))),
    );
  }

  it('a key function that cannot answer when the record is written: its account is read and written before the push leaves', async () => {
    const journal = new MemoryJournal();
    let keyCalls = 0;
    // A secrets vault that times out once, then answers: the record is written with its base URL, the account unread.
    const apiKey = async () => {
      keyCalls++;
      if (keyCalls === 1) throw new Error('the vault did not answer in time');
      return API_KEY;
    };
    const writes: (string | undefined)[] = [];
    const watched = new Proxy(journal, {
      get(target, name, receiver) {
        if (name === 'insert')
          return (record: PaymentRecord) => {
            writes.push(record.deployment?.account);
            return target.insert(record);
          };
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await unknownPush(watched, { apiKey });
    expect(writes).toEqual(['']);
    const record = await journal.get(REFERENCE_ID);
    expect(record?.deployment).toEqual({ baseUrl: PRODUCTION, account: expect.stringMatching(/^key:[0-9a-f]{16}$/) });
    // The sandbox's answers are then no evidence about it.
    sandboxAnswersFailed();
    requests.length = 0;
    const checked = track(sandboxClient(journal).checkStatus(REFERENCE_ID));
    await advanceUntilSettled(checked, 5);
    expectNamesBothDeployments(checked.error);
    expect(sandboxChecks()).toBe(0);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it("a record whose account was not read (its closing write failed): the sandbox's answers move nothing; the base URL's own 404 may close it", async () => {
    const journal = await journalHolding({ state: 'initiating', deployment: { baseUrl: PRODUCTION, account: '' } });
    sandboxAnswersFailed();
    requests.length = 0;
    const checked = track(sandboxClient(journal).checkStatus(REFERENCE_ID));
    await advanceUntilSettled(checked, 5);
    expect(checked.error).toBeInstanceOf(ConfigurationError);
    expect((checked.error as Error).message).toContain('(account not read)');
    expect(sandboxChecks()).toBe(0);
    // Production's client (any account of that base URL) judges it: nothing was pushed from it, production holds nothing.
    productionAnswers('not-found');
    const production = collectionsClient({ ...CLIENT, journal, apiKey: 'another_production_key_1234' });
    await production.recover();
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    const [closed] = await production.recover();
    expect(closed?.state).toBe('not-sent');
  });

  it('a key function that cannot answer, for a payment the journal holds: reconciled as before, never "nothing was sent"', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    const failing = collectionsClient({
      ...CLIENT,
      journal,
      apiKey: async () => {
        throw new Error('the vault is down');
      },
    });
    const retry = track(failing.initiate(collectionInput()));
    await advanceUntilSettled(retry, 5);
    expect(retry.error).toBeInstanceOf(UnknownOutcomeError);
    expect((retry.error as UnknownOutcomeError).seen).toBe('unreachable');
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it('a record of an earlier release (no deployment) taken over by initiate: the takeover writes where its push goes', async () => {
    const journal = await journalHolding({ state: 'unknown' });
    productionAnswers('not-found');
    server.use(acceptCollection());
    const client = collectionsClient({ ...CLIENT, journal });
    // Too young to be sent again: the call says so and sends nothing; past its window and the grace, it takes over.
    const early = track(client.initiate(collectionInput()));
    await advanceUntilSettled(early, 5);
    expect(early.error).toBeInstanceOf(UnknownOutcomeError);
    await advanceTime(WINDOW_MS + GRACE_MS + 5_000, 1_000);
    const taken = track(client.initiate(collectionInput()));
    await advanceUntilSettled(taken, 5);
    expect(taken.error).toBeUndefined();
    expect(taken.value?.status).toBe('pending');
    const record = await journal.get(REFERENCE_ID);
    expect(record?.state).toBe('pending');
    expect(record?.deployment).toEqual({ baseUrl: PRODUCTION, account: expect.stringMatching(/^key:[0-9a-f]{16}$/) });
    // One write takes it over and says where the push goes.
    expect((await journal.history(REFERENCE_ID)).map((event) => `${event.from}→${event.to}`)).toEqual([
      'null→unknown',
      'unknown→initiating',
      'initiating→pending',
    ]);
    // The sandbox's "failed" for the same reference moves nothing (without the deployment, it marked it failed).
    sandboxAnswersFailed();
    const checked = track(sandboxClient(journal).checkStatus(REFERENCE_ID));
    await advanceUntilSettled(checked, 5);
    expectNamesBothDeployments(checked.error);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });
});

describe('key rotation: routine, never strands a record', () => {
  it("records of the old key are still decided by the client whose key function rotated; the new key's records carry its identity", async () => {
    const journal = new MemoryJournal();
    let key = API_KEY;
    const apiKey = () => key;
    await unknownPush(journal, { apiKey });
    const oldAccount = (await journal.get(REFERENCE_ID))?.deployment?.account;
    key = 'tap_test_key_rotated_0a1b2c3d';
    productionAnswers('successful');
    // A client made per request, with the same key function: the rotation is recognized.
    const [record] = await collectionsClient({ ...CLIENT, journal, apiKey }).recover();
    expect(record?.state).toBe('successful');
    expect(record?.deployment?.account).toBe(oldAccount);
    // The new key's identity differs (records written from now on are tied to it).
    const next = new MemoryJournal();
    await unknownPush(next, { apiKey });
    expect((await next.get(REFERENCE_ID))?.deployment?.account).not.toBe(oldAccount);
  });

  it('a new process with only the new key and no account: stranded, with an error that says how to declare the rotation', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal, { apiKey: () => API_KEY });
    const oldAccount = (await journal.get(REFERENCE_ID))?.deployment?.account as string;
    productionAnswers('successful');
    const rotated = 'tap_test_key_rotated_0a1b2c3d';
    requests.length = 0;
    const stranded = await collectionsClient({ ...CLIENT, journal, apiKey: () => rotated })
      .recover()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(stranded).toBeInstanceOf(ConfigurationError);
    const cause = (stranded as Error).cause as Error;
    expect(cause.message).toContain(`formerAccounts: ['${oldAccount}']`);
    expect(cause.message).not.toContain(rotated);
    expect(sandboxChecks()).toBe(0);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
    // Declared: settled.
    const [record] = await collectionsClient({ ...CLIENT, journal, apiKey: () => rotated, formerAccounts: [oldAccount] }).recover();
    expect(record?.state).toBe('successful');
  });

  it('the CLI reads COLLECTIONS_FORMER_ACCOUNTS (comma-separated) and COLLECTIONS_ACCOUNT', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    const oldAccount = (await journal.get(REFERENCE_ID))?.deployment?.account as string;
    productionAnswers('successful');
    vi.stubEnv('COLLECTIONS_API_KEY', 'tap_test_key_rotated_0a1b2c3d');
    vi.stubEnv('COLLECTIONS_BASE_URL', PRODUCTION);
    try {
      await expect((await clientFromEnvironment(journal)).recover()).rejects.toThrow(ConfigurationError);
      vi.stubEnv('COLLECTIONS_ACCOUNT', 'acme\nproduction');
      await expect(clientFromEnvironment(journal)).rejects.toThrow(/account must not contain control characters/);
      vi.stubEnv('COLLECTIONS_ACCOUNT', '');
      vi.stubEnv('COLLECTIONS_FORMER_ACCOUNTS', ` key:0123456789abcdef , ${oldAccount} `);
      const [record] = await (await clientFromEnvironment(journal)).recover();
      expect(record?.state).toBe('successful');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('with account set, a record is tied to the account: another key of it settles the record', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal, { account: 'acme-production' });
    expect((await journal.get(REFERENCE_ID))?.deployment).toEqual({ baseUrl: PRODUCTION, account: 'acme-production' });
    productionAnswers('successful');
    const [record] = await collectionsClient({
      ...CLIENT,
      journal,
      apiKey: 'tap_test_key_rotated_0a1b2c3d',
      account: 'acme-production',
    }).recover();
    expect(record?.state).toBe('successful');
  });

  it.each([
    [{ account: '' }, /account must be a non-empty string/],
    [{ account: '   ' }, /account must be a non-empty string/],
    [{ account: 7 as unknown as string }, /account must be a non-empty string/],
    [{ account: 'acme\nproduction' }, /account must not contain control characters/],
    [{ account: 'a'.repeat(101) }, /account must be at most 100 characters long/],
    [{ formerAccounts: ['key:0123456789abcdef', '\u202eevil'] }, /formerAccounts\[1\] must not contain control characters/],
    [{ formerAccounts: 'key:0123456789abcdef' as unknown as string[] }, /formerAccounts must be an array of strings/],
  ])('a bad option %j is a ConfigurationError naming it, before any request', (options, message) => {
    expect(() => collectionsClient(options)).toThrow(message);
    expect(() => collectionsClient(options)).toThrow(ConfigurationError);
  });

  it('an account of exactly 100 characters is accepted', () => {
    expect(() => collectionsClient({ account: 'a'.repeat(100) })).not.toThrow();
  });
});

describe('the not-sent event and the watch', () => {
  it('the not-sent event keeps the request id of the 404 that decided it', async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    server.use(
      http.get(CHECK_URL, () =>
        json(404, { success: false, data: null, code: 'E_NOT_FOUND', message: 'Collection not found', requestId: 'req-deciding-404' }),
      ),
    );
    const client = collectionsClient({ ...CLIENT, journal });
    await advanceTime(WINDOW_MS + GRACE_MS + 1_000, 1_000);
    const [record] = await client.recover();
    expect(record?.state).toBe('not-sent');
    const history = await journal.history(REFERENCE_ID);
    expect(history.at(-1)).toMatchObject({ to: 'not-sent', requestId: 'req-deciding-404' });
  });

  it("one watch per journal: a second client's verdict counts from the first client's sighting", async () => {
    const journal = new MemoryJournal();
    // The first client wrote the record: its watch starts there.
    await unknownPush(journal);
    await advanceTime(WINDOW_MS + GRACE_MS + 1_000, 1_000);
    // A client built later (one per request) on the same journal decides at once.
    const [record] = await collectionsClient({ ...CLIENT, journal }).recover();
    expect(record?.state).toBe('not-sent');
  });
});

describe('a wrong base URL (not the service at all)', () => {
  it("the worker's error line names the base URL", async () => {
    const journal = new MemoryJournal();
    await unknownPush(journal);
    const wrong = 'https://collections.test/api/v9';
    server.use(
      http.get(`${wrong}/health`, () => new HttpResponse(null, { status: 404 })),
      http.get(`${wrong}/v1/collections/check/:referenceId`, () => new HttpResponse(null, { status: 404 })),
    );
    const errors: string[] = [];
    const worker = collectionsClient({
      ...CLIENT,
      journal,
      baseUrl: wrong,
      logger: { ...silent, error: (line) => errors.push(line) },
      logLevel: 'error',
    }).startSettlementWorker({ initialDelayMs: 0, intervalMs: 500, maxIntervalMs: 500 });
    try {
      await advanceTime(5_000, 250);
      expect(errors.some((line) => line.includes(wrong))).toBe(true);
      expect(worker.configurationProblem?.message).toContain(wrong);
    } finally {
      await worker.stop();
    }
  });
});

/** The deployment check itself (one per client): the identities it remembers, when it asks the key function. */
describe('ClientDeployment', () => {
  const record = (account: string, baseUrl = PRODUCTION) => ({
    referenceId: REFERENCE_ID,
    state: 'unknown' as const,
    deployment: { baseUrl, account },
  });
  const keys = Array.from({ length: 66 }, (_, index) => `tap_test_key_rotation_${String(index).padStart(3, '0')}`);

  it('a key reads as the same account identity in every release: records written earlier stay recognized by their key', async () => {
    // A fixed vector, computed outside the SDK (HMAC-SHA-256 under the key of the label 'tap-collections-sdk/account/v1',
    // first 16 hex digits). A change of the label or the derivation would strand every record an earlier release wrote.
    expect(await keyIdentity('tap_test_key_identity_vector_2026')).toBe('key:5a5f0b01f4bf40b1');
  });

  it('remembers the last 64 keys a key function returned, the one used last the newest: older ones are another account', async () => {
    const source = () => keys[0] as string;
    let current = keys[0] as string;
    const deployment = new ClientDeployment(PRODUCTION, {}, source, async () => current);
    const identities = await Promise.all(keys.map((key) => keyIdentity(key)));
    // keys 0..63: 64 identities, the first still remembered.
    for (const key of keys.slice(0, 64)) deployment.noteKey(key);
    current = keys[63] as string;
    expect(await deployment.mismatch(record(identities[0] as string))).toBeUndefined();
    // Key 0 used again, then a 65th key: the one not used for longest (key 1) is forgotten, not key 0.
    deployment.noteKey(keys[0] as string);
    deployment.noteKey(keys[64] as string);
    current = keys[64] as string;
    // What the client writes now waits for the keys noted before: the 65th is the current one.
    expect(await deployment.current()).toEqual({ baseUrl: PRODUCTION, account: identities[64] });
    expect(await deployment.mismatch(record(identities[0] as string))).toBeUndefined();
    expect(await deployment.mismatch(record(identities[1] as string))).toBeInstanceOf(DeploymentMismatchError);
  });

  it('a record of a key being noted is recognized without asking the key function', async () => {
    let asked = 0;
    const deployment = new ClientDeployment(PRODUCTION, {}, API_KEY, async () => {
      asked++;
      return API_KEY;
    });
    deployment.noteKey(API_KEY);
    expect(await deployment.mismatch(record(await keyIdentity(API_KEY)))).toBeUndefined();
    expect(asked).toBe(0);
  });

  it('names the remedy by the mismatch: another base URL is settled there; the same one with another key, by declaring it', async () => {
    const deployment = new ClientDeployment(SANDBOX, {}, API_KEY, async () => API_KEY);
    const elsewhere = await deployment.mismatch(record('key:0123456789abcdef'));
    expect(elsewhere).toBeInstanceOf(ConfigurationError);
    expect(elsewhere?.name).toBe('ConfigurationError');
    expect(elsewhere?.message).toContain(
      'Settle it with a client configured for that deployment (baseUrl / COLLECTIONS_BASE_URL and its API key).',
    );
    expect(elsewhere?.message).not.toContain('formerAccounts');
    const rotated = await deployment.mismatch(record('key:0123456789abcdef', SANDBOX));
    expect(rotated?.message).toContain("formerAccounts: ['key:0123456789abcdef']");
    expect(rotated?.message).not.toContain('Settle it with a client configured for that deployment');
  });
});
