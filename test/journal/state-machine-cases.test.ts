/**
 * The eight ways the journal lost or doubled a payment before it had one state machine (issue: "A payment is
 * never doubled and never lost"), each through the public API: a record is closed as `not-sent` only when the
 * journal's own clock and this process's own watch of the record prove no attempt can still arrive, every close is
 * a compare-and-set, and what is stored is what a log line may carry.
 *
 * The process's monotonic clock is faked alone (`watchFor` moves it; where a settlement worker runs, it also runs with
 * real time); timers and `Date` are real.
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  MemoryJournal,
  type PaymentRecord,
  type PaymentState,
  RequestValidationError,
  saleOutcome,
  UnknownOutcomeError,
} from '../../src/index.js';
import { paymentFingerprint } from '../../src/journal/fingerprint.js';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  healthy,
  INITIATE_URL,
  json,
  PRODUCT_ID,
  REFERENCE_ID,
  rejectionOf,
  sentBody,
  serviceNotFound,
  statusBody,
  useFakeMonotonicClock,
  useRunningMonotonicClock,
  watchFor,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const API_KEY_ECHO = 'sk_test_collections_0123456789';
const notFound = serviceNotFound;
/** Status checks only (the client also asks `/health` once, before its first verdict on a 404). */
const checks = () => requests.filter((request) => request.path.startsWith('/v1/collections/check/'));

beforeEach(() => {
  useFakeMonotonicClock();
  server.use(healthy());
});
afterEach(() => {
  vi.useRealTimers();
});
const accepted = () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } });
const posts = () => requests.filter((request) => request.method === 'POST').length;
/** The default window of a client's push: 3 attempts of 30 s and 2 backoffs of up to 8 s. */
const DEFAULT_WINDOW_MS = 3 * 30_000 + 2 * 8_000;

/** A journal whose clock is `offsetMs` from this machine's (a database server's clock, or another machine's). */
function journalAt(clock: { offsetMs: number }): MemoryJournal {
  return new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
}

/** Writes the record a till left for `collectionInput()` (as its `initiate` writes it), then moves the journal's clock on by `ageMs`. */
async function leftByTill(journal: MemoryJournal, clock: { offsetMs: number }, state: PaymentState, ageMs: number): Promise<PaymentRecord> {
  const fingerprint = await paymentFingerprint({
    referenceId: REFERENCE_ID,
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260977123456',
  });
  const written = await journal.insert({
    referenceId: REFERENCE_ID,
    state,
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint,
    sendWindowMs: DEFAULT_WINDOW_MS,
  });
  clock.offsetMs += ageMs;
  return written as PaymentRecord;
}

/** A till's resend: the write every attempt makes before it leaves (a compare-and-set, as initiate does). */
async function resendTouch(journal: MemoryJournal): Promise<void> {
  const current = (await journal.get(REFERENCE_ID)) as PaymentRecord;
  const touched = await journal.transition(REFERENCE_ID, current.version, {
    state: 'initiating',
    sendWindowMs: DEFAULT_WINDOW_MS,
    by: 'another till',
  });
  expect(touched.applied).toBe(true);
}

describe('1. recover() after a crash, default options, while the push is still on its way', () => {
  it("leaves the record open until the sender's window and the grace have passed by the journal's clock; then closes it", async () => {
    const clock = { offsetMs: 0 };
    const journal = journalAt(clock);
    // Killed 1 s into a push the service takes 15 s to process; the till restarts 11 s later (past the old 10 s grace).
    await leftByTill(journal, clock, 'initiating', 11_000);
    server.use(http.get(CHECK_URL, notFound));
    const client = collectionsClient({ journal });
    const [record] = await client.recover();
    expect(record?.state).toBe('initiating');
    expect(saleOutcome(record as PaymentRecord)).toBe('unknown');
    // The later of the two bounds: this process first saw the record now (11 s after its write), so its own watch
    // ends the window and the grace from now, past the journal's bound.
    const decidableIn = Date.parse(record?.decidableAt ?? '') - Date.parse(record?.updatedAt ?? '');
    expect(decidableIn).toBeGreaterThanOrEqual(11_000 + DEFAULT_WINDOW_MS + 10_000);
    expect(decidableIn).toBeLessThan(11_000 + DEFAULT_WINDOW_MS + 10_000 + 1_000);
    // The push lands at 15 s: the next recover() finds it.
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'pending' }))));
    expect((await client.recover())[0]?.state).toBe('pending');
  });

  it('a push that never arrives is closed as not-sent once the window and the grace are over, after a second check', async () => {
    const clock = { offsetMs: 0 };
    const journal = journalAt(clock);
    await leftByTill(journal, clock, 'initiating', DEFAULT_WINDOW_MS + 10_000);
    server.use(http.get(CHECK_URL, notFound));
    const client = collectionsClient({ journal });
    // Old enough by the journal's clock, but this process (just started) has not watched it yet: not yet.
    const [first] = await client.recover();
    expect(first?.state).toBe('initiating');
    watchFor(DEFAULT_WINDOW_MS + 10_000);
    const [record] = await client.recover();
    expect(record?.state).toBe('not-sent');
    // The 404 that decides is asked for after both clocks said the record was old enough.
    expect(checks().map((request) => request.method)).toEqual(['GET', 'GET', 'GET']);
  });
});

describe('2. the same payment initiated from two clients while the first POST is slow', () => {
  it('the second sends nothing and says unknown; the first records pending; a 409 is never journaled rejected', async () => {
    const journal = new MemoryJournal();
    let answerFirstPost: (() => void) | undefined;
    const firstPostAnswered = new Promise<void>((resolve) => {
      answerFirstPost = resolve;
    });
    let postsSeen = 0;
    server.use(
      http.post(INITIATE_URL, async () => {
        postsSeen++;
        if (postsSeen === 1) {
          await firstPostAnswered;
          return accepted();
        }
        return json(409, { success: false, code: 'E_DUPLICATE', message: 'referenceId already exists' });
      }),
      http.get(CHECK_URL, notFound),
    );
    const first = collectionsClient({ journal }).initiate(collectionInput());
    while (postsSeen === 0) await new Promise((resolve) => setImmediate(resolve));
    const second = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(second).toBeInstanceOf(UnknownOutcomeError);
    expect((second as UnknownOutcomeError).decidableAt).toBeDefined();
    expect(postsSeen).toBe(1);
    answerFirstPost?.();
    await expect(first).resolves.toMatchObject({ status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it('a 409 on the first attempt of a journaled create reconciles by a status check: pending, never rejected', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => json(409, { success: false, code: 'E_DUPLICATE', message: 'referenceId already exists' })),
      http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'pending' }))),
    );
    await expect(collectionsClient({ journal }).initiate(collectionInput())).resolves.toMatchObject({ status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it('a 409 that the status check cannot see yet ends unknown, never rejected', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => json(409, { success: false, code: 'E_DUPLICATE', message: 'referenceId already exists' })),
      http.get(CHECK_URL, notFound),
    );
    expect(await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });
});

describe('3 and 5. a close is a compare-and-set: a resend written meanwhile wins', () => {
  it("recover(): a till's resend that lands between the verdict's read and its write keeps the record open", async () => {
    const clock = { offsetMs: 0 };
    const journal = journalAt(clock);
    await leftByTill(journal, clock, 'unknown', DEFAULT_WINDOW_MS + 60_000);
    let checked = 0;
    server.use(
      http.get(CHECK_URL, async () => {
        checked++;
        // The third check is the one the verdict rests on; the till resends just before it is answered.
        if (checked === 3) await resendTouch(journal);
        return notFound();
      }),
    );
    const client = collectionsClient({ journal });
    await client.recover();
    watchFor(DEFAULT_WINDOW_MS + 10_000);
    const [record] = await client.recover();
    expect(record?.state).toBe('initiating');
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
  });

  it('the settlement worker: a resend written while its check is in flight is never closed as not-sent', async () => {
    useRunningMonotonicClock();
    const clock = { offsetMs: 0 };
    const journal = journalAt(clock);
    await leftByTill(journal, clock, 'initiating', DEFAULT_WINDOW_MS + 60_000);
    let checked = 0;
    server.use(
      http.get(CHECK_URL, async () => {
        checked++;
        if (checked === 1) await resendTouch(journal);
        // The worker has watched the record long enough by now (only the journal's bound keeps it open).
        watchFor(DEFAULT_WINDOW_MS + 10_000);
        return notFound();
      }),
    );
    const worker = collectionsClient({ journal }).startSettlementWorker({ initialDelayMs: 0, intervalMs: 20, maxIntervalMs: 20 });
    while (checked < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.stop();
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
  });
});

describe('4. clocks that disagree', () => {
  it("a process two minutes ahead of the journal does not close an in-flight push: ages are the journal's", async () => {
    useRunningMonotonicClock();
    // The journal's clock (a database server) runs two minutes behind this process.
    const clock = { offsetMs: -120_000 };
    const journal = journalAt(clock);
    await leftByTill(journal, clock, 'initiating', 20_000);
    server.use(http.get(CHECK_URL, notFound));
    const client = collectionsClient({ journal });
    expect((await client.recover())[0]?.state).toBe('initiating');
    // This process has watched the record long enough: only the journal's clock keeps it open.
    watchFor(DEFAULT_WINDOW_MS + 10_000);
    const worker = client.startSettlementWorker({ initialDelayMs: 0, intervalMs: 20, maxIntervalMs: 20 });
    while (checks().length < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.stop();
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
  });
});

describe('6. reference ids are compared without regard to case', () => {
  it('a retry with the same UUID upper-cased is the same payment: one push, one record, lower case everywhere', async () => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, accepted));
    const client = collectionsClient({ journal });
    await client.initiate(collectionInput({ referenceId: REFERENCE_ID.toUpperCase() }));
    await client.initiate(collectionInput({ referenceId: REFERENCE_ID }));
    expect(posts()).toBe(1);
    expect((await journal.list()).map((record) => record.referenceId)).toEqual([REFERENCE_ID]);
    expect(sentBody(requests).referenceId).toBe(REFERENCE_ID);
  });
});

describe('7. a poll or status check that reaches a definitive 404 records it', () => {
  it('pollUntilSettled past its grace, on a record old enough by the journal: not-sent; checkStatus alike', async () => {
    for (const method of ['poll', 'checkStatus'] as const) {
      requests.length = 0;
      const clock = { offsetMs: 0 };
      const journal = journalAt(clock);
      await leftByTill(journal, clock, 'initiating', DEFAULT_WINDOW_MS + 10_000);
      server.use(http.get(CHECK_URL, notFound));
      const client = collectionsClient({ journal });
      // First sight: not provable yet by this process's own watch.
      await expect(client.checkStatus(REFERENCE_ID)).rejects.toBeInstanceOf(UnknownOutcomeError);
      watchFor(DEFAULT_WINDOW_MS + 10_000);
      const call =
        method === 'poll'
          ? client.pollUntilSettled(REFERENCE_ID, { notFoundGraceMs: 0, intervalMs: 1, maxWaitMs: 5_000 })
          : client.checkStatus(REFERENCE_ID);
      await expect(call).rejects.toMatchObject({ status: 404 });
      expect((await journal.get(REFERENCE_ID))?.state, method).toBe('not-sent');
      expect((await journal.history(REFERENCE_ID)).at(-1)).toMatchObject({ from: 'initiating', to: 'not-sent', by: method });
    }
  });

  it("a 404 while the sender's window is open leaves the record initiating", async () => {
    const clock = { offsetMs: 0 };
    const journal = journalAt(clock);
    await leftByTill(journal, clock, 'initiating', 1_000);
    server.use(http.get(CHECK_URL, notFound));
    // One 404 rule: with a journal, a 404 before decidableAt is UnknownOutcomeError carrying it, never a bare 404.
    const error = await rejectionOf(collectionsClient({ journal }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).decidableAt).toBeDefined();
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
  });
});

describe('8. stored text is scrubbed like log text; unreadable text is refused before anything is stored', () => {
  it('a phone number in the narration and the key echoed in a reason never reach the journal', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, accepted),
      http.get(CHECK_URL, () =>
        HttpResponse.json(
          statusBody({ statusText: 'failed', transactionCode: 'DECLINED', reason: `Declined for 260977123456 (key ${API_KEY_ECHO})` }),
        ),
      ),
    );
    const client = collectionsClient({ journal, apiKey: API_KEY_ECHO });
    await client.initiate(collectionInput({ narration: 'Call 0977 123 456 when ready' }));
    await client.checkStatus(REFERENCE_ID);
    const stored = JSON.stringify([await journal.get(REFERENCE_ID), await journal.history(REFERENCE_ID)]);
    expect(stored).not.toMatch(/977123|977 123|0123456789/);
    expect(stored).not.toContain(API_KEY_ECHO);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'failed', reason: expect.stringContaining('[redacted]') });
  });

  it.each([
    ['a lone surrogate', 'Till \ud800 3'],
    ['NUL', 'Till \u0000 3'],
  ])('a narration with %s: RequestValidationError naming narration, nothing sent, nothing stored', async (_, narration) => {
    const journal = new MemoryJournal();
    server.use(http.post(INITIATE_URL, accepted));
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput({ narration })));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual(['narration']);
    expect(requests).toHaveLength(0);
    expect(await journal.list()).toEqual([]);
  });
});
