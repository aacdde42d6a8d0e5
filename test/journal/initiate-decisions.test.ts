/**
 * The decisions of a journaled `initiate` (src/collections/journaled-initiate.ts) that no other test pinned down:
 * which failed create closes a payment `rejected`, `not-sent` or `unknown`; what `UnknownOutcomeError.decidableAt`
 * says when the journal's write after an attempt fails; how a payment already in the journal is reconciled (a
 * recheck that finds it, an abort during the status check, a record purged during the takeover); and that a second
 * call for the same payment keeps it away from `recover()` until it ends. Each test was written against a mutation of
 * that file that no test noticed (see docs/internals/mutation-testing.md).
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  BadRequestError,
  ConfigurationError,
  JournalError,
  MemoryJournal,
  type PaymentRecord,
  RequestValidationError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../../src/index.js';
import { DEFAULT_NOT_FOUND_GRACE_MS } from '../../src/journal/journal.ts';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  flushUntil,
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
const unavailable = () => json(503, { success: false }, { 'retry-after': '0' });
const rateLimited = () => json(429, { success: false }, { 'retry-after': '0' });
const posts = () => requests.filter((request) => request.method === 'POST').length;
const checks = () => requests.filter((request) => request.method === 'GET' && request.path !== '/health').length;
/** The sender's window of a call with `maxRetries: 0` and the default 30 s limit, plus the grace. */
const ONE_ATTEMPT_WAIT_MS = 30_000 + DEFAULT_NOT_FOUND_GRACE_MS;

describe('a failed create closes the payment by what its error proves', () => {
  it('a 400 (the lower bound of a refusal) → rejected, the error thrown as the service gave it', async () => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, () => json(400, { success: false, code: 'E_BAD_REQUEST', message: 'bad request' })));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'rejected', error: { name: 'BadRequestError', status: 400 } });
  });

  it('a refusal on the resend (429, then 422): rejected, and the refusal thrown (never "unknown": it proves both)', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(
        INITIATE_URL,
        inOrder(rateLimited, () => json(422, validationProblem('/v1/collections/mobile-money'))),
      ),
    );
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 1 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(posts()).toBe(2);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'rejected', error: { status: 422 } });
  });

  it('aborted after the journal write, before any attempt left: the signal’s reason, and the payment closed not-sent', async () => {
    const controller = new AbortController();
    const reason = new Error('till closed');
    const journal = new MemoryJournal();
    const insert = journal.insert.bind(journal);
    journal.insert = async (record) => {
      const stored = await insert(record);
      controller.abort(reason);
      return stored;
    };
    server.use(http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput(), { signal: controller.signal }));
    expect(error).toBe(reason);
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'not-sent', error: { name: 'Error' } });
  });

  it('aborted while the attempt was at the service: the signal’s reason, and the payment left unknown (never not-sent)', async () => {
    const controller = new AbortController();
    const reason = new Error('till closed');
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => {
        controller.abort(reason);
        return new Promise<Response>(() => undefined);
      }),
    );
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput(), { signal: controller.signal }));
    expect(error).toBe(reason);
    // msw records an aborted request a few turns late.
    await flushUntil(() => posts() === 1);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'unknown', error: { name: 'Error' } });
  });

  it('the write before a resend fails: the record says unknown (the first attempt left under it), never not-sent', async () => {
    const journal = new MemoryJournal();
    const transition = journal.transition.bind(journal);
    let transitions = 0;
    // The call's second write (the resend's compare-and-set) fails; the write of the outcome goes through.
    journal.transition = (...args) => {
      transitions++;
      return transitions === 1 ? Promise.reject(new Error('database connection lost')) : transition(...args);
    };
    server.use(http.post(INITIATE_URL, rateLimited));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 2 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(JournalError);
    expect(posts()).toBe(1);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'unknown', error: { name: 'JournalError' } });
  });
});

describe('where the push goes, before it leaves', () => {
  it('a key that cannot be read for the record nor just before the attempt: nothing sent, even if it answers after', async () => {
    const journal = new MemoryJournal();
    let reads = 0;
    // The vault fails the record's read and the attempt's, then answers: no push may leave from a record that does not
    // say where it went.
    const apiKey = () => {
      if (++reads <= 2) throw new Error('vault unavailable');
      return 'tap_test_key_vault_0001';
    };
    server.use(http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal, apiKey, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'not-sent', deployment: { account: '' } });
  });
});

describe('UnknownOutcomeError.decidableAt after a create', () => {
  it('an outcome the create could not establish: the error says from when a verdict is possible (the record’s bound)', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => HttpResponse.error()),
      http.get(CHECK_URL, unavailable),
    );
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    expect(record.state).toBe('unknown');
    expect((error as UnknownOutcomeError).decidableAt).toBeDefined();
    expect(Date.parse((error as UnknownOutcomeError).decidableAt ?? '')).toBeGreaterThanOrEqual(Date.parse(record.decidableAt ?? ''));
  });

  it('the write of that outcome fails too: decidableAt counts from the call’s first write, watched since it was written', async () => {
    // Both clocks faked: the attempt takes 20 s by the wall clock and by this process's monotonic clock.
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-25T10:00:00Z') });
    const journal = new MemoryJournal();
    const transition = journal.transition.bind(journal);
    let failWrites = false;
    journal.transition = (...args) => (failWrites ? Promise.reject(new Error('database connection lost')) : transition(...args));
    server.use(
      http.post(INITIATE_URL, () => {
        vi.advanceTimersByTime(20_000);
        failWrites = true;
        return HttpResponse.error();
      }),
      http.get(CHECK_URL, unavailable),
    );
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    const written = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    expect(written.state).toBe('initiating');
    // This process watched its own write from the moment it was acknowledged: the bound is the write's, not 20 s later.
    expect((error as UnknownOutcomeError).decidableAt).toBe(new Date(Date.parse(written.updatedAt) + ONE_ATTEMPT_WAIT_MS).toISOString());
  });
});

describe('a payment already in the journal', () => {
  it.for([
    ['processing', 'processing'],
    [undefined, 'pending'],
  ] as const)('pending with the status word %s: resolves with %s, nothing sent', async ([statusText, status]) => {
    const { journal } = await journalWithEarlier('pending', 0, statusText === undefined ? {} : { statusText });
    const result = await collectionsClient({ journal }).initiate(collectionInput());
    expect(result).toEqual({ referenceId: REFERENCE_ID, status });
    expect(requests).toEqual([]);
  });

  it.for([
    ['rejected', { error: { name: 'BadRequestError', status: 400, code: 'E_BAD_REQUEST' } }, 'rejected (BadRequestError)'],
    ['not-sent', {}, 'not-sent'],
  ] as const)('closed as %s: RequestValidationError naming the state (and the refusal), nothing sent', async ([state, fields, said]) => {
    const { journal } = await journalWithEarlier(state, 0, fields);
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([
      { path: 'referenceId', message: `is in the payment journal as ${said}: start the sale over with a new referenceId` },
    ]);
    expect(requests).toEqual([]);
  });

  it('a journal that refuses the record as a duplicate and then cannot read it: JournalError saying nothing was sent', async () => {
    const { journal } = await journalWithEarlier('unknown', 60_000);
    journal.get = async () => {
      throw new Error('connection to the database lost');
    };
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe(
      'Payment journal: could not read the payment (nothing was sent): connection to the database lost',
    );
    expect(requests).toEqual([]);
  });

  it.for([
    ['an earlier release’s record (no deployment)', {}],
    ['a record of this client’s deployment', { deployment: { baseUrl: COLLECTIONS_BASE_URL, account: 'acme-production' } }],
  ] as const)(
    'open and old enough, a 404, then the recheck finds it pending: resolves with it, records it, never sends (%s)',
    async ([, fields]) => {
      useFakeMonotonicClock();
      const { journal } = await journalWithEarlier('unknown', 60_000, { sendWindowMs: 45_000, ...fields });
      const replies = [serviceNotFound, serviceNotFound, () => json(200, statusBody({ statusText: 'pending' }))];
      server.use(
        http.get(CHECK_URL, () => (replies.shift() ?? serviceNotFound)()),
        http.post(INITIATE_URL, accepted),
      );
      const client = collectionsClient({ journal, account: 'acme-production' });
      // The first call starts this process's watch of the record; then it has watched it past the window and the grace.
      const young = await rejectionOf(client.initiate(collectionInput()));
      expect(young).toBeInstanceOf(UnknownOutcomeError);
      // What it saw is said as what it is: a 404, no proof yet.
      expect((young as UnknownOutcomeError).seen).toBe('not-found');
      watchFor(45_000 + DEFAULT_NOT_FOUND_GRACE_MS);
      await expect(client.initiate(collectionInput())).resolves.toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
      expect(posts()).toBe(0);
      expect(checks()).toBe(3);
      expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'pending', statusText: 'pending' });
    },
  );

  it('its status check failing: UnknownOutcomeError saying no check got through, nothing sent, the record as it was', async () => {
    const { journal, record } = await journalWithEarlier('unknown', 60_000);
    server.use(http.get(CHECK_URL, unavailable), http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).seen).toBe('unreachable');
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toEqual(record);
  });

  it('aborted during the status check: the signal’s reason (the caller stopped it), not UnknownOutcomeError', async () => {
    const { journal, record } = await journalWithEarlier('unknown', 60_000);
    const controller = new AbortController();
    const reason = new Error('till closed');
    server.use(
      http.get(CHECK_URL, () => {
        controller.abort(reason);
        return new Promise<Response>(() => undefined);
      }),
      http.post(INITIATE_URL, accepted),
    );
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput(), { signal: controller.signal }));
    expect(error).toBe(reason);
    // msw records an aborted request a few turns late.
    await flushUntil(() => checks() === 1);
    expect(posts()).toBe(0);
    expect(await journal.get(REFERENCE_ID)).toEqual(record);
  });

  it.for(['initiating', 'unknown'] as const)(
    '%s, purged from the journal while the call takes it over: UnknownOutcomeError, nothing sent, nothing asked again',
    async (state) => {
      useFakeMonotonicClock();
      const { journal } = await journalWithEarlier(state, 60_000, { sendWindowMs: 45_000 });
      // An operator purges the record between the recheck and the takeover's write.
      let purged = false;
      const get = journal.get.bind(journal);
      const transition = journal.transition.bind(journal);
      Object.assign(journal, {
        get: async (referenceId: string) => (purged ? undefined : get(referenceId)),
        transition: async (...args: Parameters<MemoryJournal['transition']>) =>
          purged ? { record: undefined, applied: false } : transition(...args),
      });
      let checksOfSecondCall = 0;
      let second = false;
      server.use(
        http.get(CHECK_URL, () => {
          if (second && ++checksOfSecondCall === 2) purged = true;
          return serviceNotFound();
        }),
        http.post(INITIATE_URL, accepted),
      );
      const client = collectionsClient({ journal });
      expect(await rejectionOf(client.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
      watchFor(45_000 + DEFAULT_NOT_FOUND_GRACE_MS);
      second = true;
      expect(await rejectionOf(client.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
      expect(posts()).toBe(0);
      // The check and the recheck; a record the journal no longer holds is not reconciled again.
      expect(checksOfSecondCall).toBe(2);
    },
  );
});

describe('a different payment under the same referenceId whose fingerprint matches', () => {
  // The fingerprint keeps 12 bits (src/journal/fingerprint.ts): one different payment in 4096 shares it. Product,
  // amount, currency, narration and the masked number are compared field by field, and each comparison alone refuses.
  it.for([
    ['product', { productId: '0d7c6b5a-4938-4271-8a6b-5c4d3e2f1a0b' }],
    ['amount', { amount: 30 }],
    ['currency', { currency: 'USD' }],
    ['narration', { narration: 'Till 9' }],
    ['masked number', { phoneNumber: '260*******57' }],
  ] as const)('another %s: RequestValidationError on referenceId, nothing sent', async ([, fields]) => {
    // The record of collectionInput() (its fingerprint computed for it), with one field of another payment.
    const { journal, record } = await journalWithEarlier('pending', 0, fields);
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([
      {
        path: 'referenceId',
        message: 'is already in the payment journal for a different payment (product, amount, number or narration differ)',
      },
    ]);
    expect(requests).toEqual([]);
    expect(await journal.get(REFERENCE_ID)).toEqual(record);
  });

  it('the same product in upper case is the same payment: resolves with it', async () => {
    const { journal } = await journalWithEarlier('pending', 0, { productId: PRODUCT_ID.toUpperCase() });
    await expect(collectionsClient({ journal }).initiate(collectionInput())).resolves.toEqual({
      referenceId: REFERENCE_ID,
      status: 'pending',
    });
  });
});

describe('two overlapping calls for one payment', () => {
  it('the second waits for the first and answers from its record: no status check, no second push', async () => {
    const journal = new MemoryJournal();
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    // The first push is held at the service until a status check arrives (a second call that did not wait would ask
    // while the first is out), or a tenth of a second at most: a call that waits is right however long that takes.
    const atMost = setTimeout(answer, 100);
    server.use(
      http.post(INITIATE_URL, async () => {
        await answered;
        return accepted();
      }),
      http.get(CHECK_URL, () => {
        answer();
        return serviceNotFound();
      }),
    );
    const client = collectionsClient({ journal });
    const first = client.initiate(collectionInput());
    const second = client.initiate(collectionInput());
    await expect(first).resolves.toMatchObject({ status: 'pending' });
    await expect(second).resolves.toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    clearTimeout(atMost);
    expect([posts(), checks()]).toEqual([1, 0]);
  });

  it('the first ending does not hand the payment to recover() while the second still runs', async () => {
    const journal = new MemoryJournal();
    const insert = journal.insert.bind(journal);
    let inserts = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let secondWriteBegun: () => void = () => undefined;
    const secondWrite = new Promise<void>((resolve) => {
      secondWriteBegun = resolve;
    });
    // The second call's write is held until the test releases it.
    journal.insert = async (record) => {
      if (++inserts === 2) {
        secondWriteBegun();
        await held;
      }
      return insert(record);
    };
    server.use(
      http.post(INITIATE_URL, accepted),
      http.get(CHECK_URL, () => json(200, statusBody({ statusText: 'pending' }))),
    );
    const client = collectionsClient({ journal });
    const first = client.initiate(collectionInput());
    const second = client.initiate(collectionInput());
    await expect(first).resolves.toMatchObject({ status: 'pending' });
    // Waits for the event itself, not a number of event-loop turns (the fingerprint's digest runs on the thread pool,
    // slow on a loaded machine).
    await secondWrite;
    // The payment is the second call's: recover() leaves it alone and asks the service nothing.
    expect(await client.recover()).toEqual([]);
    expect(checks()).toBe(0);
    release();
    await expect(second).resolves.toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(posts()).toBe(1);
  });
});
