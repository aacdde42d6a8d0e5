/**
 * `initiate` with a journal when another writer moves the payment between two attempts of one call (the resend after
 * a 429 first writes the record as a compare-and-set on this call's last write): the call stops sending, and ends
 * with what the journal says. And a journal that fails that write: the call ends "unknown", never "not created".
 * Once a call has ended, its payment is no longer "being sent by this client": `recover()` takes it up again.
 */
import { http } from 'msw';
import { describe, expect, it } from 'vitest';
import { attemptWindowMs } from '../../src/core/retry.ts';
import { JournalError, MemoryJournal, type PaymentRecord, type PaymentState, UnknownOutcomeError } from '../../src/index.js';
import { DEFAULT_NOT_FOUND_GRACE_MS } from '../../src/journal/journal.ts';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  INITIATE_URL,
  json,
  REFERENCE_ID,
  rejectionOf,
  statusBody,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const rateLimited = () => json(429, { success: false, message: 'slow down' }, { 'retry-after': '0' });
const posts = () => requests.filter((request) => request.method === 'POST').length;

/**
 * The first POST answers 429; while it is answered, another process writes the record as `state`. Whether each write
 * applied is recorded, not asserted in the handler: a failed `expect` there would reach the client as an HTTP 500 and
 * fail the test somewhere else. The test asserts `applied` after the call.
 */
function overtakenBy(journal: MemoryJournal, state: PaymentState, statusText?: string, sendWindowMs = 60_000) {
  const applied: boolean[] = [];
  server.use(
    http.post(INITIATE_URL, async () => {
      const current = (await journal.get(REFERENCE_ID)) as PaymentRecord;
      const written = await journal.transition(REFERENCE_ID, current.version, {
        state,
        by: 'another process',
        ...(statusText === undefined ? {} : { statusText }),
        ...(state === 'initiating' ? { sendWindowMs } : {}),
      });
      applied.push(written.applied);
      return rateLimited();
    }),
  );
  return { applied };
}

describe('another writer between two attempts of one initiate', () => {
  it.for([
    ['pending', 'pending'],
    ['successful', 'successful'],
    ['failed', 'failed'],
  ] as const)('wrote %s: the call resolves with the journal’s word and sends no second POST', async ([state, statusText]) => {
    const journal = new MemoryJournal();
    const overtaken = overtakenBy(journal, state, statusText);
    // Settled either way first, so that a write that did not apply fails on its own line below.
    const result = await collectionsClient({ journal, maxRetries: 2 })
      .initiate(collectionInput())
      .catch((error: unknown) => error);
    expect(overtaken.applied).toEqual([true]);
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: statusText });
    expect(posts()).toBe(1);
    expect((await journal.get(REFERENCE_ID))?.state).toBe(state);
  });

  it('took it over to send it (initiating again): UnknownOutcomeError with the new decidableAt, and no second POST', async () => {
    const journal = new MemoryJournal();
    const overtaken = overtakenBy(journal, 'initiating');
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 2 }).initiate(collectionInput()));
    expect(overtaken.applied).toEqual([true]);
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    // The latest bound of the records this call read or wrote (the other writer's, and this call's own first write,
    // whose attempt may still arrive), each the later of the journal's clock and this process's own watch: never
    // earlier than the record says, never later than a full wait of the longer window from now.
    const decidableAt = Date.parse((error as UnknownOutcomeError).decidableAt ?? '');
    expect(decidableAt).toBeGreaterThanOrEqual(Date.parse(record.decidableAt ?? ''));
    const longerWindowMs = Math.max(record.sendWindowMs ?? 0, attemptWindowMs(2, 30_000));
    expect(decidableAt).toBeLessThanOrEqual(Date.now() + longerWindowMs + DEFAULT_NOT_FOUND_GRACE_MS);
    const cause = (error as UnknownOutcomeError).cause;
    expect(cause).toBeInstanceOf(JournalError);
    expect((cause as JournalError).message).toBe(
      'Payment journal: the payment was written by another process meanwhile (now initiating); not resending',
    );
    expect(posts()).toBe(1);
  });

  it.for([
    ['longer', 600_000],
    ['shorter', 1_000],
  ] as const)(
    'took it over with a %s window than this call’s: decidableAt is the later of the two records’ bounds',
    async ([, windowMs]) => {
      const journal = new MemoryJournal();
      const overtaken = overtakenBy(journal, 'initiating', undefined, windowMs);
      const calledAt = Date.now();
      const error = await rejectionOf(collectionsClient({ journal, maxRetries: 2 }).initiate(collectionInput()));
      expect(overtaken.applied).toEqual([true]);
      expect(error).toBeInstanceOf(UnknownOutcomeError);
      const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
      const decidableAt = Date.parse((error as UnknownOutcomeError).decidableAt ?? '');
      // The other writer's attempt may arrive until its window ends; this call's own first attempt until its own does.
      expect(decidableAt).toBeGreaterThanOrEqual(Date.parse(record.updatedAt) + windowMs + DEFAULT_NOT_FOUND_GRACE_MS);
      expect(decidableAt).toBeGreaterThanOrEqual(calledAt + attemptWindowMs(2, 30_000) + DEFAULT_NOT_FOUND_GRACE_MS);
    },
  );

  it('closed it as not-sent (a recover() elsewhere): UnknownOutcomeError, never a resend of a closed payment', async () => {
    const journal = new MemoryJournal();
    const overtaken = overtakenBy(journal, 'not-sent');
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 2 }).initiate(collectionInput()));
    expect(overtaken.applied).toEqual([true]);
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(((error as UnknownOutcomeError).cause as Error).message).toContain('(now not-sent)');
    expect(posts()).toBe(1);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('not-sent');
  });
});

describe('a journal that fails the write before a resend', () => {
  it('ends the call UnknownOutcomeError with the journal error as cause, and sends nothing more', async () => {
    const memory = new MemoryJournal();
    let transitions = 0;
    // The second write of the call (the resend's compare-and-set) fails; the others go through.
    const journal = new Proxy(memory, {
      get(target, property, receiver) {
        if (property === 'transition') {
          return (...args: Parameters<MemoryJournal['transition']>) => {
            transitions++;
            if (transitions === 1) return Promise.reject(new Error('database connection lost'));
            return target.transition(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    server.use(http.post(INITIATE_URL, rateLimited));
    const error = await rejectionOf(collectionsClient({ journal, maxRetries: 2 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(REFERENCE_ID);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(JournalError);
    expect(posts()).toBe(1);
  });
});

describe('after initiate ends, the payment is recover()’s again', () => {
  it('an initiate that ended unknown leaves the record to the next recover() of the same client', async () => {
    const journal = new MemoryJournal();
    server.use(
      http.post(INITIATE_URL, () => json(503, { success: false }, { 'retry-after': '0' })),
      http.get(CHECK_URL, () => json(404, { success: false, message: 'Collection not found' })),
    );
    const client = collectionsClient({ journal, maxRetries: 0 });
    expect(await rejectionOf(client.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    server.use(http.get(CHECK_URL, () => json(200, statusBody({ statusText: 'successful' }))));
    const recovered = await client.recover();
    expect(recovered.map((record) => [record.referenceId, record.state])).toEqual([[REFERENCE_ID, 'successful']]);
  });

  it('a journal that refuses the record as a duplicate and then does not have it: JournalError, nothing sent', async () => {
    const journal = new MemoryJournal();
    journal.insert = () => Promise.resolve(undefined);
    const error = await rejectionOf(collectionsClient({ journal }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(JournalError);
    expect((error as JournalError).message).toContain('refused the record as a duplicate, then did not find it (nothing was sent)');
    expect(requests).toEqual([]);
  });
});
