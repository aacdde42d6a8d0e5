/** recover(), the statuses checkStatus and pollUntilSettled record, and saleOutcome. */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  ConfigurationError,
  JournalError,
  MemoryJournal,
  type PaymentRecord,
  type PaymentState,
  RequestValidationError,
  saleOutcome,
} from '../../src/index.js';
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
  serviceNotFound,
  statusBody,
  useFakeMonotonicClock,
  watchFor,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const notFound = serviceNotFound;

// This process's monotonic clock is faked alone (its own watch of open records); `/health` proves the base URL.
beforeEach(() => {
  useFakeMonotonicClock();
  server.use(healthy());
});
afterEach(() => {
  vi.useRealTimers();
});

/** The journal's clock, moved back while an aged record is written: the journal stamps its own times. */
const clock = { offsetMs: 0 };
const clockedJournal = () => new MemoryJournal({ now: () => Date.now() + clock.offsetMs });

/** A record as `initiate` writes it, with a sender's window of 0 (its age alone decides). */
function record(referenceId: string, state: PaymentState): PaymentRecord {
  return {
    referenceId,
    state,
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'v1:abc',
    sendWindowMs: 0,
  } as PaymentRecord;
}

/** Writes `record(referenceId, state)` `ageMs` ago by the journal's clock. */
async function insertAged(journal: MemoryJournal, referenceId: string, state: PaymentState, ageMs: number): Promise<void> {
  clock.offsetMs = -ageMs;
  try {
    await journal.insert(record(referenceId, state));
  } finally {
    clock.offsetMs = 0;
  }
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A status endpoint answering per reference: a statusText, 404, or 503. */
function statuses(answers: Record<string, string | 404 | 503 | 401>) {
  return http.get(CHECK_URL, ({ params }) => {
    const answer = answers[String(params.referenceId)];
    if (answer === 404 || answer === undefined) return notFound();
    if (answer === 503) return json(503, { success: false });
    if (answer === 401) return json(401, { success: false, message: 'Unauthorized' });
    return HttpResponse.json(
      statusBody({ referenceId: String(params.referenceId), statusText: answer, transactionCode: answer === 'pending' ? null : 'TX' }),
    );
  });
}

describe('recover', () => {
  it('moves every open record to what the service knows, and resolves with them in their new states, oldest first', async () => {
    const journal = clockedJournal();
    const cases: [PaymentState, string | 404 | 503, number, PaymentState][] = [
      ['initiating', 'successful', 60_000, 'successful'],
      ['unknown', 'failed', 60_000, 'failed'],
      ['pending', 'pending', 60_000, 'pending'],
      ['initiating', 'pending', 60_000, 'pending'],
      ['initiating', 404, 60_000, 'not-sent'],
      ['unknown', 404, 60_000, 'not-sent'],
      ['initiating', 404, 1_000, 'initiating'], // within the grace period: its push may still arrive
      ['pending', 404, 60_000, 'pending'], // accepted once: a 404 now proves nothing
      ['unknown', 503, 60_000, 'unknown'], // unreachable: left as it was
    ];
    for (const [index, [state, , ageMs]] of cases.entries()) await insertAged(journal, id(index), state, ageMs);
    await insertAged(journal, id(99), 'successful', 60_000); // final: not looked at
    server.use(statuses(Object.fromEntries(cases.map(([, answer], index) => [id(index), answer]))));
    const oldestFirst = (await journal.list({ states: ['initiating', 'pending', 'unknown'] })).map((item) => item.referenceId);
    const client = collectionsClient({ journal, maxRetries: 0 });
    // Just started: a 404 waits until this process itself has watched the record for its window and the grace.
    const first = await client.recover();
    expect(first.filter((item) => item.state === 'not-sent')).toEqual([]);
    const stillOpen = new Set(
      first.filter((item) => ['initiating', 'pending', 'unknown'].includes(item.state)).map((item) => item.referenceId),
    );
    watchFor(10_000);
    const recovered = await client.recover();
    const expected = new Map(cases.map(([, , , state], index) => [id(index), state]));
    expect(recovered.map((item) => [item.referenceId, item.state])).toEqual(
      oldestFirst.filter((referenceId) => stillOpen.has(referenceId)).map((referenceId) => [referenceId, expected.get(referenceId)]),
    );
    for (const [referenceId, state] of expected) expect((await journal.get(referenceId))?.state, referenceId).toBe(state);
    expect(first.find((item) => item.referenceId === id(0))).toMatchObject({ statusText: 'successful', transactionCode: 'TX' });
    // Records still open carry the later decidableAt (this process's own watch), the journal's the store's own bound.
    for (const item of recovered) expect({ ...(await journal.get(item.referenceId)), decidableAt: 0 }).toEqual({ ...item, decidableAt: 0 });
    expect(requests.some((request) => request.path.endsWith(id(99)))).toBe(false);
  });

  it('notFoundGraceMs sets when a 404 proves a push never arrived', async () => {
    const journal = clockedJournal();
    await insertAged(journal, id(1), 'initiating', 1_000);
    server.use(statuses({}));
    const client = collectionsClient({ journal });
    expect((await client.recover({ notFoundGraceMs: 5_000 }))[0]?.state).toBe('initiating');
    // Old enough by the journal's clock for a 500 ms grace, but watched by this process for less: still open.
    expect((await client.recover({ notFoundGraceMs: 500 }))[0]?.state).toBe('initiating');
    watchFor(500);
    expect((await client.recover({ notFoundGraceMs: 500 }))[0]?.state).toBe('not-sent');
    expect(await client.recover()).toEqual([]);
  });

  it('runs at most `concurrency` checks at once', async () => {
    const journal = clockedJournal();
    for (let index = 0; index < 12; index++) await insertAged(journal, id(index), 'pending', 1_000);
    let running = 0;
    let most = 0;
    server.use(
      http.get(CHECK_URL, async ({ params }) => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return HttpResponse.json(statusBody({ referenceId: String(params.referenceId), statusText: 'successful' }));
      }),
    );
    const recovered = await collectionsClient({ journal }).recover({ concurrency: 3 });
    expect(recovered).toHaveLength(12);
    expect(most).toBe(3);
    expect((await collectionsClient({ journal }).recover()).length).toBe(0);
    // By default, 8 at once.
    for (let index = 12; index < 32; index++) await insertAged(journal, id(index), 'pending', 1_000);
    most = 0;
    expect(await collectionsClient({ journal }).recover()).toHaveLength(20);
    expect(most).toBe(8);
  });

  it('leaves the payments this client is sending right now to their initiate', async () => {
    const journal = clockedJournal();
    const client = collectionsClient({ journal });
    let recoveredMeanwhile: PaymentRecord[] | undefined;
    server.use(
      http.post(INITIATE_URL, async () => {
        recoveredMeanwhile = await client.recover({ notFoundGraceMs: 0 });
        return json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } });
      }),
      statuses({}),
    );
    await client.initiate(collectionInput());
    expect(recoveredMeanwhile).toEqual([]);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it('rejects on a key that cannot check statuses, on bad options, without a journal, and on a journal that cannot be read', async () => {
    const journal = clockedJournal();
    await insertAged(journal, id(1), 'pending', 1_000);
    server.use(statuses({ [id(1)]: 401 }));
    await expect(collectionsClient({ journal }).recover()).rejects.toBeInstanceOf(AuthenticationError);
    const bad = await rejectionOf(collectionsClient({ journal }).recover({ concurrency: 0, notFoundGraceMs: -1 }));
    expect(bad).toBeInstanceOf(RequestValidationError);
    expect((bad as RequestValidationError).issues.map((issue) => issue.path).sort()).toEqual(['concurrency', 'notFoundGraceMs']);
    await expect(collectionsClient().recover()).rejects.toBeInstanceOf(ConfigurationError);
    journal.list = () => Promise.reject(new Error('locked'));
    await expect(collectionsClient({ journal }).recover()).rejects.toBeInstanceOf(JournalError);
  });

  it('an aborted recover rejects with the reason', async () => {
    const journal = clockedJournal();
    await insertAged(journal, id(1), 'pending', 1_000);
    const controller = new AbortController();
    server.use(
      http.get(CHECK_URL, async () => {
        controller.abort(new Error('till closing'));
        await new Promise((resolve) => setTimeout(resolve, 20));
        return HttpResponse.json(statusBody({ referenceId: id(1), statusText: 'pending' }));
      }),
    );
    await expect(collectionsClient({ journal }).recover({ signal: controller.signal })).rejects.toThrow('till closing');
  });
});

describe('checkStatus and pollUntilSettled record what they see', () => {
  it('checkStatus records a settled status with its code and reason; a record not in the journal is left alone', async () => {
    const journal = clockedJournal();
    await insertAged(journal, REFERENCE_ID, 'pending', 0);
    server.use(
      http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'failed', transactionCode: 'E1', reason: 'declined' }))),
    );
    const client = collectionsClient({ journal });
    await client.checkStatus(REFERENCE_ID);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({
      state: 'failed',
      statusText: 'failed',
      transactionCode: 'E1',
      reason: 'declined',
    });
    await client.checkStatus(id(5));
    expect(await journal.get(id(5))).toBeUndefined();
  });

  it('pollUntilSettled records pending once, then the settled status', async () => {
    const journal = clockedJournal();
    await insertAged(journal, REFERENCE_ID, 'unknown', 0);
    const writes: string[] = [];
    const transition = journal.transition.bind(journal);
    journal.transition = (referenceId, version, change) => {
      writes.push(change.state);
      return transition(referenceId, version, change);
    };
    let polls = 0;
    server.use(
      http.get(CHECK_URL, () =>
        HttpResponse.json(statusBody({ statusText: ++polls < 4 ? 'pending' : 'successful', transactionCode: polls < 4 ? null : 'OK' })),
      ),
    );
    const status = await collectionsClient({ journal }).pollUntilSettled(REFERENCE_ID, {
      initialDelayMs: 0,
      intervalMs: 1,
      maxIntervalMs: 1,
    });
    expect(status.statusText).toBe('successful');
    expect(writes).toEqual(['pending', 'successful']);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'successful', transactionCode: 'OK' });
  });

  it('a journal that fails while recording does not fail the status check (logged)', async () => {
    const journal = clockedJournal();
    await insertAged(journal, REFERENCE_ID, 'pending', 0);
    journal.transition = () => Promise.reject(new Error('disk full'));
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'successful' }))));
    const logger = { debug() {}, info() {}, warn() {}, error: (message: string) => errors.push(message) };
    const errors: string[] = [];
    await expect(collectionsClient({ journal, logger, logLevel: 'error' }).checkStatus(REFERENCE_ID)).resolves.toMatchObject({
      statusText: 'successful',
    });
    expect(errors).toEqual([expect.stringMatching(/could not record status for referenceId/)]);
  });
});

describe('saleOutcome', () => {
  it('says what a till shows for each state', () => {
    const outcomes = (['successful', 'failed', 'not-sent', 'rejected', 'initiating', 'pending', 'unknown'] as const).map((state) =>
      saleOutcome({ state }),
    );
    expect(outcomes).toEqual(['paid', 'not-paid', 'not-sent', 'not-sent', 'unknown', 'unknown', 'unknown']);
  });
});
