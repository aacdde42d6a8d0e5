/** initiate with a journal: every state change, the write before the first byte, and a referenceId already in the journal. */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  JournalError,
  MemoryJournal,
  type PaymentJournal,
  type PaymentRecord,
  RequestValidationError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../../src/index.js';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  healthy,
  INITIATE_URL,
  inOrder,
  journalWithEarlier,
  json,
  PRODUCT_ID,
  REFERENCE_ID,
  rejectionOf,
  serviceNotFound,
  statusBody,
  useFakeMonotonicClock,
  validationProblem,
  watchFor,
} from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();
afterEach(() => vi.useRealTimers());
// `/health` proves the base URL before a verdict on a 404.
beforeEach(() => server.use(healthy()));

const accepted = () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } });
const notFound = serviceNotFound;
/** The status checks and creates sent (not the one `/health` the client asks before its first verdict). */
const sent = () => requests.filter((request) => request.path !== '/health').map((request) => request.method);
const unavailable = () => json(503, { success: false }, { 'retry-after': '0' });
const posts = () => requests.filter((request) => request.method === 'POST').length;

describe('initiate writes the journal', () => {
  it('writes initiating before the request leaves, then pending on the 202; the number masked, nothing else of it kept', async () => {
    const journal = new MemoryJournal();
    let seenByServer: PaymentRecord | undefined;
    server.use(
      http.post(INITIATE_URL, async () => {
        seenByServer = await journal.get(REFERENCE_ID);
        return accepted();
      }),
    );
    const result = await collectionsClient({ journal }).initiate(collectionInput({ narration: 'Till 3' }));
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(seenByServer).toMatchObject({
      referenceId: REFERENCE_ID,
      state: 'initiating',
      amount: 25,
      currency: 'ZMW',
      narration: 'Till 3',
    });
    const record = await journal.get(REFERENCE_ID);
    expect(record).toMatchObject({ state: 'pending', statusText: 'pending', phoneNumber: '260*******56', productId: PRODUCT_ID });
    expect(record?.fingerprint).toMatch(/^v1:[0-9a-f]{3}$/);
    expect(JSON.stringify(record)).not.toMatch(/977123|0977|9771/);
    expect(Date.parse(record?.updatedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(record?.createdAt ?? ''));
  });

  it('a journal that cannot write rejects with JournalError and sends nothing', async () => {
    const journal = new MemoryJournal();
    journal.insert = () => Promise.reject(new Error('disk full'));
    server.use(http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(JournalError);
    expect(error).toMatchObject({ referenceId: REFERENCE_ID, message: expect.stringMatching(/nothing was sent.*disk full/) });
    expect((error as JournalError).cause).toBeInstanceOf(Error);
    expect(requests).toHaveLength(0);
  });

  it('input rejected locally is not recorded', async () => {
    const journal = new MemoryJournal();
    await expect(collectionsClient({ journal }).initiate(collectionInput({ amount: 0 }))).rejects.toBeInstanceOf(RequestValidationError);
    expect(await journal.list()).toEqual([]);
  });

  it('a refusal by the service (422) → rejected, with the error as plain data', async () => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, () => json(422, validationProblem('/v1/collections/mobile-money'))));
    await expect(collectionsClient({ journal }).initiate(collectionInput())).rejects.toBeInstanceOf(UnprocessableEntityError);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({
      state: 'rejected',
      error: { name: 'UnprocessableEntityError', status: 422, code: 'E_VALIDATION_ERROR' },
    });
  });

  it('an outcome that cannot be established → unknown', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => HttpResponse.error()),
      http.get(CHECK_URL, unavailable),
    );
    await expect(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput())).rejects.toBeInstanceOf(UnknownOutcomeError);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'unknown', error: { name: 'UnknownOutcomeError' } });
  });

  it('one attempt that provably created nothing (429, no retries left) → not-sent', async () => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, () => json(429, { success: false }, { 'retry-after': '1' })));
    await expect(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput())).rejects.toMatchObject({ status: 429 });
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'not-sent', error: { name: 'RateLimitError', status: 429 } });
  });

  it('a key that cannot be resolved (nothing sent) → not-sent', async () => {
    const journal = new MemoryJournal();
    const client = collectionsClient({
      journal,
      apiKey: () => {
        throw new Error('vault down');
      },
    });
    await expect(client.initiate(collectionInput())).rejects.toBeInstanceOf(ConfigurationError);
    // It names the base URL its push would have gone to; the account could not be read.
    expect(await journal.get(REFERENCE_ID)).toMatchObject({
      state: 'not-sent',
      error: { name: 'ConfigurationError' },
      deployment: { baseUrl: COLLECTIONS_BASE_URL, account: '' },
    });
    expect(requests).toHaveLength(0);
  });

  it('a write after the 202 that fails does not turn the accepted payment into an error (the record stays open)', async () => {
    const journal = new MemoryJournal();
    journal.transition = () => Promise.reject(new Error('disk full'));
    server.use(http.post(INITIATE_URL, accepted));
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    await expect(collectionsClient({ journal, logger, logLevel: 'error' }).initiate(collectionInput())).resolves.toMatchObject({
      status: 'pending',
    });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
    expect(logger.error).toHaveBeenCalledWith(expect.stringMatching(/could not record status/), expect.anything());
  });

  it('before a resend, the record is written again; a record closed meanwhile is not resent', async () => {
    const journal = new MemoryJournal();
    const writes: string[] = [];
    const transition = journal.transition.bind(journal);
    journal.transition = (referenceId, version, change) => {
      writes.push(change.state);
      return transition(referenceId, version, change);
    };
    const writesSeenBySecondPost: string[][] = [];
    server.use(
      http.post(
        INITIATE_URL,
        inOrder(
          // A 429 is a known outcome (nothing created): resent at once, without a check.
          () => json(429, { success: false }, { 'retry-after': '0' }),
          () => {
            writesSeenBySecondPost.push([...writes]);
            return accepted();
          },
        ),
      ),
      http.get(CHECK_URL, notFound),
    );
    await collectionsClient({ journal, maxRetries: 1 }).initiate(collectionInput());
    expect(posts()).toBe(2);
    expect(writesSeenBySecondPost).toEqual([['initiating']]);
    expect(writes).toEqual(['initiating', 'pending']);

    // Now a record that another process closes while this one waits to resend.
    requests.length = 0;
    const other = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => HttpResponse.error()),
      http.get(CHECK_URL, async () => {
        const current = await other.get(REFERENCE_ID);
        if (current !== undefined) await other.transition(REFERENCE_ID, current.version, { state: 'not-sent', by: 'another process' });
        return notFound();
      }),
    );
    const error = await rejectionOf(collectionsClient({ journal: other, maxRetries: 1 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(posts()).toBe(1);
    expect((await other.get(REFERENCE_ID))?.state).toBe('not-sent');
  });

  it('checks the journal option at construction', () => {
    expect(() => collectionsClient({ journal: {} as PaymentJournal })).toThrow(ConfigurationError);
  });
});

describe('a referenceId already in the journal', () => {
  it('the same payment, pending or settled: resolves with it, nothing sent', async () => {
    for (const [state, statusText] of [
      ['pending', 'pending'],
      ['successful', 'successful'],
      ['failed', 'failed'],
    ] as const) {
      const { journal } = await journalWithEarlier(state, 0, { statusText });
      // The same payment, its number written another way.
      const result = await collectionsClient({ journal }).initiate(collectionInput({ phoneNumber: '+260 97 712 3456' }));
      expect(result).toEqual({ referenceId: REFERENCE_ID, status: statusText });
    }
    expect(requests).toHaveLength(0);
  });

  it('a different payment under the same referenceId: RequestValidationError on referenceId, nothing sent', async () => {
    const { journal } = await journalWithEarlier('pending', 0);
    const client = collectionsClient({ journal });
    // 0977000056 shares the mask (260*******56) and differs only in the digits the journal does not show.
    for (const changed of [{ amount: 26 }, { narration: 'x' }, { phoneNumber: '0966123456' }, { phoneNumber: '0977000056' }]) {
      const error = await rejectionOf(client.initiate(collectionInput(changed)));
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues).toEqual([
        { path: 'referenceId', message: expect.stringMatching(/different payment/) },
      ]);
    }
    expect(requests).toHaveLength(0);
  });

  it('rejected or not-sent: refused locally, start over with a new referenceId', async () => {
    for (const state of ['rejected', 'not-sent'] as const) {
      const { journal } = await journalWithEarlier(state, 0);
      const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
      expect((error as RequestValidationError).issues?.[0]).toMatchObject({
        path: 'referenceId',
        message: expect.stringMatching(/new referenceId/),
      });
    }
    expect(requests).toHaveLength(0);
  });

  it('initiating from a crashed process, found at the service: resolves with it and records it, no second push', async () => {
    const { journal } = await journalWithEarlier('initiating', 60_000);
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'successful', transactionCode: 'TX1' }))));
    await expect(collectionsClient({ journal }).initiate(collectionInput())).resolves.toEqual({
      referenceId: REFERENCE_ID,
      status: 'successful',
    });
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'successful', transactionCode: 'TX1' });
  });

  it("unknown, untouched past its sender's window and the grace by the journal's clock, not at the service: checked again, then sent once", async () => {
    useFakeMonotonicClock();
    const { journal } = await journalWithEarlier('unknown', 60_000, { sendWindowMs: 45_000 });
    server.use(http.get(CHECK_URL, notFound), http.post(INITIATE_URL, accepted));
    const client = collectionsClient({ journal });
    // This process has not watched the record itself yet: old by the journal's clock is not enough.
    expect(await rejectionOf(client.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    watchFor(45_000 + 10_000);
    await expect(client.initiate(collectionInput())).resolves.toMatchObject({ status: 'pending' });
    expect(sent()).toEqual(['GET', 'GET', 'GET', 'POST']);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
    expect((await journal.history(REFERENCE_ID)).map((event) => `${event.from}→${event.to} by ${event.by}`)).toEqual([
      'null→unknown by initiate',
      'unknown→initiating by initiate',
      'initiating→pending by initiate',
    ]);
  });

  it("initiating, its sender's window not over by the journal's clock: UnknownOutcomeError with decidableAt, nothing sent (an attempt may still arrive)", async () => {
    // 50 s ago, with the default window (3 × 30 s + 2 × 8 s): a push of that call may still reach the service.
    useFakeMonotonicClock();
    const { journal, record, clock } = await journalWithEarlier('initiating', 50_000, { sendWindowMs: 106_000 });
    server.use(http.get(CHECK_URL, notFound), http.post(INITIATE_URL, accepted));
    const client = collectionsClient({ journal });
    const error = await rejectionOf(client.initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    // The later of the two bounds: this process first saw the record 50 s after its write, so its own watch of the
    // window and the grace ends 50 s after the journal's bound.
    const decidableIn = Date.parse((error as UnknownOutcomeError).decidableAt ?? '') - Date.parse(record.updatedAt);
    expect(decidableIn).toBeGreaterThanOrEqual(50_000 + 106_000 + 10_000);
    expect(decidableIn).toBeLessThan(50_000 + 106_000 + 10_000 + 1_000);
    expect(posts()).toBe(0);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
    // The journal's clock steps past the window and the grace (NTP, a VM resumed): that alone proves nothing.
    clock.offsetMs = 70_000;
    expect(await rejectionOf(client.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    expect(posts()).toBe(0);
    // Watched that long by this process too: the same call now proves the push never arrived and sends once.
    watchFor(106_000 + 10_000);
    await expect(client.initiate(collectionInput())).resolves.toMatchObject({ status: 'pending' });
    expect(posts()).toBe(1);
  });

  it('open, and the service unreachable: UnknownOutcomeError, nothing sent, the record left as it was', async () => {
    const { journal, record } = await journalWithEarlier('unknown', 60_000);
    server.use(http.get(CHECK_URL, unavailable), http.post(INITIATE_URL, accepted));
    await expect(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput())).rejects.toBeInstanceOf(UnknownOutcomeError);
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toEqual(record);
  });

  it('open with a known window, and the status check fails: UnknownOutcomeError carries decidableAt (the later of the two bounds)', async () => {
    useFakeMonotonicClock();
    const { journal, record } = await journalWithEarlier('initiating', 50_000, { sendWindowMs: 106_000 });
    server.use(http.get(CHECK_URL, unavailable), http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    // This process first saw the record 50 s after its write: its own watch ends 50 s after the journal's bound.
    const decidableIn = Date.parse((error as UnknownOutcomeError).decidableAt ?? '') - Date.parse(record.updatedAt);
    expect(decidableIn).toBeGreaterThanOrEqual(50_000 + 106_000 + 10_000);
    expect(decidableIn).toBeLessThan(50_000 + 106_000 + 10_000 + 1_000);
    expect(posts()).toBe(0);
  });

  it('the write before a resend fails: UnknownOutcomeError carries decidableAt from the record this call wrote last', async () => {
    useFakeMonotonicClock();
    const journal = new MemoryJournal();
    journal.transition = () => Promise.reject(new Error('connection lost'));
    // A 429 is resent; the write before the resend fails, so the call stops with the outcome unknown.
    server.use(http.post(INITIATE_URL, () => json(429, { success: false }, { 'retry-after': '0' })));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 1 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(JournalError);
    const written = await journal.get(REFERENCE_ID);
    expect(written?.state).toBe('initiating');
    const decidableAt = Date.parse((error as UnknownOutcomeError).decidableAt ?? '');
    expect(decidableAt).toBeGreaterThanOrEqual(Date.parse(written?.decidableAt ?? ''));
    expect(posts()).toBe(1);
  });

  it('two calls at once for one payment: one push, both resolve', async () => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, accepted));
    const client = collectionsClient({ journal });
    const results = await Promise.all([client.initiate(collectionInput()), client.initiate(collectionInput())]);
    expect(results).toEqual([
      { referenceId: REFERENCE_ID, status: 'pending' },
      { referenceId: REFERENCE_ID, status: 'pending' },
    ]);
    expect(posts()).toBe(1);
  });

  it('a journal that cannot be read: JournalError, nothing sent', async () => {
    const { journal } = await journalWithEarlier('pending', 0);
    journal.get = () => Promise.reject(new Error('locked'));
    await expect(collectionsClient({ journal }).initiate(collectionInput())).rejects.toBeInstanceOf(JournalError);
    expect(requests).toHaveLength(0);
  });
});

describe('a runtime without Web Crypto (crypto.subtle), as a browser page served over plain http', () => {
  afterEach(() => vi.unstubAllGlobals());

  const withoutSubtle = () => {
    const { randomUUID, getRandomValues } = globalThis.crypto;
    vi.stubGlobal('crypto', {
      randomUUID: randomUUID.bind(globalThis.crypto),
      getRandomValues: getRandomValues.bind(globalThis.crypto),
      subtle: undefined,
    });
  };

  it('a client given a journal refuses to construct, naming the option and why; nothing is sent or stored', () => {
    withoutSubtle();
    const journal = new MemoryJournal();
    let caught: unknown;
    try {
      collectionsClient({ journal, account: 'acme-production' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigurationError);
    expect((caught as Error).message).toBe(
      'Invalid CollectionsClient options: journal needs Web Crypto (globalThis.crypto.subtle), which this runtime does not offer; a browser offers it only to pages served over https or from localhost',
    );
    expect(requests).toHaveLength(0);
  });

  it('a client without a journal still pushes', async () => {
    withoutSubtle();
    server.use(http.post(INITIATE_URL, accepted));
    expect(await collectionsClient().initiate(collectionInput())).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
  });
});
