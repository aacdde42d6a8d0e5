/**
 * `recover()` rule by rule, beyond test/journal/recover.test.ts: which options are refused, which records it leaves
 * alone (foreign ids, payments the service accepted but no longer finds, those it cannot check), and which errors
 * stop it at once rather than leave every record "unreachable".
 */
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  JournalError,
  MemoryJournal,
  PaymentContradictionError,
  type PaymentRecord,
  type PaymentState,
  PermissionDeniedError,
  RequestValidationError,
} from '../../src/index.js';
import {
  CHECK_URL,
  collectionsClient,
  healthy,
  json,
  PRODUCT_ID,
  rejectionOf,
  serviceNotFound,
  statusBody,
  useFakeMonotonicClock,
  watchFor,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const fakeLogger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() });
const warnLines = (logger: ReturnType<typeof fakeLogger>) =>
  logger.warn.mock.calls.map((call) => String(call[0]).replace('[tap-collections-sdk] ', ''));

/** A journal holding `records` (reference id → state), each written an hour ago by the journal's clock. */
async function journalHolding(records: Record<string, PaymentState>, fields: Partial<PaymentRecord> = {}): Promise<MemoryJournal> {
  const clock = { offsetMs: -3_600_000 };
  const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
  for (const [referenceId, state] of Object.entries(records)) {
    await journal.insert({
      referenceId,
      state,
      productId: PRODUCT_ID,
      amount: 25,
      currency: 'ZMW',
      phoneNumber: '260*******56',
      fingerprint: 'v1:abc',
      ...fields,
    } as PaymentRecord);
  }
  clock.offsetMs = 0;
  return journal;
}

/** The status endpoint: per reference, a statusText or an HTTP status. */
function answering(answers: Record<string, string | number>) {
  return http.get(CHECK_URL, ({ params }) => {
    const answer = answers[String(params.referenceId)] ?? 404;
    // The Collections service's own error envelope (a 404 without it proves nothing: not-found-evidence.test.ts).
    if (typeof answer === 'number') return json(answer, { success: false, code: `E_${answer}`, message: `status ${answer}` });
    return HttpResponse.json(statusBody({ referenceId: String(params.referenceId), statusText: answer }));
  });
}

describe('recover() options', () => {
  it.for([
    [{ notFoundGraceMs: '5000' }, ['notFoundGraceMs']],
    [{ notFoundGraceMs: Number.NaN }, ['notFoundGraceMs']],
    [{ notFoundGraceMs: Number.POSITIVE_INFINITY }, ['notFoundGraceMs']],
    [{ concurrency: 2.5 }, ['concurrency']],
    [{ concurrency: -1 }, ['concurrency']],
  ] as const)('refuses %j before any request', async ([options, paths]) => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    server.use(answering({ [id(1)]: 'pending' }), healthy());
    const error = await rejectionOf(collectionsClient({ journal }).recover(options as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual(paths);
    expect(requests).toEqual([]);
  });

  it('names each field refused and what is wrong with it', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    const error = await rejectionOf(collectionsClient({ journal }).recover({ notFoundGraceMs: -1, concurrency: 0 }));
    expect((error as RequestValidationError).issues).toEqual([
      { path: 'notFoundGraceMs', message: 'must be a finite number ≥ 0' },
      { path: 'concurrency', message: 'must be an integer ≥ 1' },
    ]);
    expect((error as Error).message).toBe(
      'Invalid recover options: notFoundGraceMs: must be a finite number ≥ 0; concurrency: must be an integer ≥ 1',
    );
    expect(requests).toEqual([]);
  });

  it('accepts notFoundGraceMs 0 and concurrency 1 (the smallest values)', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending', [id(2)]: 'pending' });
    server.use(answering({ [id(1)]: 'failed', [id(2)]: 'successful' }), healthy());
    const recovered = await collectionsClient({ journal }).recover({ notFoundGraceMs: 0, concurrency: 1 });
    expect(recovered.map((record) => record.state)).toEqual(['failed', 'successful']);
  });

  it('an already aborted signal rejects with its reason before any request', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    server.use(answering({ [id(1)]: 'pending' }), healthy());
    const reason = new Error('till closing');
    const error = await rejectionOf(collectionsClient({ journal }).recover({ signal: AbortSignal.abort(reason) }));
    expect(error).toBe(reason);
    expect(requests).toEqual([]);
  });
});

describe('records recover() leaves as they are', () => {
  it('a record whose referenceId is not a UUID: never requested, reported (cut to 100 characters), the others go on', async () => {
    const foreign = `legacy-${'x'.repeat(200)}`;
    const journal = await journalHolding({ [foreign]: 'pending', [id(1)]: 'pending' });
    server.use(answering({ [id(1)]: 'failed' }), healthy());
    const logger = fakeLogger();
    const recovered = await collectionsClient({ journal, logger, logLevel: 'warn' }).recover();
    expect(recovered.map((record) => [record.referenceId, record.state])).toEqual([[id(1), 'failed']]);
    expect(requests.map((request) => request.path)).toEqual([`/v1/collections/check/${id(1)}`]);
    expect(warnLines(logger)).toEqual(['recover: skipped a journal record whose referenceId is not a UUID']);
    expect(logger.warn.mock.calls[0]?.[1]).toEqual({ referenceId: JSON.stringify(foreign.slice(0, 100)) });
  });

  it('a pending payment the service no longer finds: left pending, said loudly, never closed', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    server.use(answering({}), healthy());
    const logger = fakeLogger();
    const [record] = await collectionsClient({ journal, logger, logLevel: 'warn' }).recover({ notFoundGraceMs: 0 });
    expect(record?.state).toBe('pending');
    expect((await journal.get(id(1)))?.state).toBe('pending');
    expect(warnLines(logger)).toEqual([`recover: the service no longer finds referenceId ${id(1)}, which it accepted; left pending`]);
  });

  it('a payment it cannot check (503 after retries): left as it was, reported with the reason; the others are settled', async () => {
    const journal = await journalHolding({ [id(1)]: 'unknown', [id(2)]: 'pending' });
    server.use(answering({ [id(1)]: 503, [id(2)]: 'successful' }), healthy());
    const logger = fakeLogger();
    const recovered = await collectionsClient({ journal, logger, logLevel: 'warn', maxRetries: 0 }).recover();
    expect(recovered.map((record) => [record.referenceId, record.state])).toEqual([
      [id(1), 'unknown'],
      [id(2), 'successful'],
    ]);
    expect(warnLines(logger)).toContain(`recover: could not check referenceId ${id(1)}; left unknown`);
    const details = logger.warn.mock.calls.find((call) => String(call[0]).includes('recover: could not check'))?.[1];
    expect(details).toEqual({ reason: expect.stringContaining('503') });
  });
});

describe('a 404 on an old unknown record', () => {
  it('a collection that appears on the recheck is recorded as the service says, not closed as not-sent', async () => {
    useFakeMonotonicClock();
    try {
      const journal = await journalHolding({ [id(1)]: 'unknown' }, { sendWindowMs: 1_000 });
      let checks = 0;
      server.use(
        http.get(CHECK_URL, () => {
          checks++;
          if (checks <= 2) return serviceNotFound();
          return HttpResponse.json(statusBody({ referenceId: id(1), statusText: 'pending' }));
        }),
        healthy(),
      );
      const client = collectionsClient({ journal });
      // First sight of the record in this process: its watch starts, so no verdict and no recheck yet.
      expect((await client.recover({ notFoundGraceMs: 0 }))[0]?.state).toBe('unknown');
      expect(checks).toBe(1);
      watchFor(1_000);
      const [record] = await client.recover({ notFoundGraceMs: 0 });
      expect(checks).toBe(3);
      expect(record?.state).toBe('pending');
      expect((await journal.get(id(1)))?.state).toBe('pending');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('errors that stop recover() at once', () => {
  it('a key without the permission (403): rejects, and no further check starts', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending', [id(2)]: 'pending', [id(3)]: 'pending' });
    server.use(answering({ [id(1)]: 403, [id(2)]: 'successful', [id(3)]: 'successful' }), healthy());
    const error = await rejectionOf(collectionsClient({ journal }).recover({ concurrency: 1 }));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(requests).toHaveLength(1);
    expect((await journal.get(id(2)))?.state).toBe('pending');
  });

  it('a journal that cannot list the open payments: JournalError saying so, before any request', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    journal.list = () => Promise.reject(new Error('locked'));
    const error = await rejectionOf(collectionsClient({ journal }).recover());
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe('Payment journal: could not list the open payments: locked');
    expect(requests).toEqual([]);
  });

  it('a journal that cannot record what the service said: rejects with JournalError', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending' });
    server.use(answering({ [id(1)]: 'successful' }), healthy());
    journal.transition = () => Promise.reject(new Error('disk full'));
    const error = await rejectionOf(collectionsClient({ journal }).recover());
    expect(error).toBeInstanceOf(JournalError);
  });
});

describe('what recover() writes and says', () => {
  it('the history names recover() as the writer of a status it recorded and of a not-sent close', async () => {
    useFakeMonotonicClock();
    try {
      const journal = await journalHolding({ [id(1)]: 'pending', [id(2)]: 'unknown' }, { sendWindowMs: 1_000 });
      server.use(answering({ [id(1)]: 'successful' }), healthy());
      const client = collectionsClient({ journal });
      // The first call starts this process's watch of the unknown record; the second, a window later, closes it.
      await client.recover({ notFoundGraceMs: 0 });
      watchFor(1_000);
      await client.recover({ notFoundGraceMs: 0 });
      for (const [referenceId, state] of [
        [id(1), 'successful'],
        [id(2), 'not-sent'],
      ]) {
        expect((await journal.history(referenceId as string)).at(-1), referenceId).toMatchObject({ to: state, by: 'recover' });
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('every contradiction is logged at error; the call rejects with the first once the others are recovered', async () => {
    const journal = await journalHolding({ [id(1)]: 'pending', [id(2)]: 'pending', [id(3)]: 'pending' });
    // Another process settles the first two `failed` while this one's checks are in flight; the service says otherwise.
    server.use(
      http.get(CHECK_URL, async ({ params }) => {
        const referenceId = String(params.referenceId);
        if (referenceId !== id(3)) await journal.transition(referenceId, 1, { state: 'failed', by: 'another-till', statusText: 'failed' });
        return HttpResponse.json(statusBody({ referenceId, statusText: 'successful' }));
      }),
      healthy(),
    );
    const logger = fakeLogger();
    const error = await rejectionOf(collectionsClient({ journal, logger, logLevel: 'warn' }).recover({ concurrency: 1 }));
    expect(error).toBeInstanceOf(PaymentContradictionError);
    expect((error as PaymentContradictionError).referenceId).toBe(id(1));
    const errorLines = logger.error.mock.calls.map((call) => String(call[0]).replace('[tap-collections-sdk] ', ''));
    expect(errorLines).toHaveLength(2);
    expect(errorLines[0]).toBe(`recover: ${(error as Error).message}`);
    expect(errorLines[1]).toMatch(new RegExp(`^recover: .*${id(2)}`));
    expect((await journal.get(id(3)))?.state).toBe('successful');
  });
});

describe('a base URL that does not answer as the Collections API', () => {
  /** Every status check answers a bare 404 (a web server's, not the service's). */
  const bareNotFound = () => http.get(CHECK_URL, () => new HttpResponse(null, { status: 404 }));
  const expectedMessage = (count: number, named: string, more = '') =>
    `recover(): ${count} payment(s) left open because the base URL does not answer as the Collections API (check baseUrl / COLLECTIONS_BASE_URL and any proxy): ${named}${more}`;

  it('names every payment left open, by reference and state; the first 404 is the cause', async () => {
    const journal = await journalHolding({ [id(1)]: 'unknown', [id(2)]: 'initiating' });
    server.use(bareNotFound(), healthy());
    const logger = fakeLogger();
    const error = await rejectionOf(collectionsClient({ journal, logger, logLevel: 'warn' }).recover({ concurrency: 1 }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toBe(expectedMessage(2, `${id(1)} (unknown), ${id(2)} (initiating)`));
    expect((error as Error).cause).toBeInstanceOf(ConfigurationError);
    expect(((error as Error).cause as Error).message).toContain('the base URL does not answer as the Collections API');
    expect(logger.error).toHaveBeenCalledTimes(2);
    expect(await journal.list({ states: ['unknown', 'initiating'] })).toHaveLength(2);
  });

  it.for([
    [20, ''],
    [21, ' and 1 more (each is in the log)'],
  ] as const)('%i payments left open: the error names the first 20%s', async ([count, more]) => {
    const records = Object.fromEntries(Array.from({ length: count }, (_, index) => [id(index + 1), 'unknown' as const]));
    const journal = await journalHolding(records);
    server.use(bareNotFound(), healthy());
    const error = await rejectionOf(collectionsClient({ journal, logLevel: 'off' }).recover({ concurrency: 1 }));
    const named = Array.from({ length: 20 }, (_, index) => `${id(index + 1)} (unknown)`).join(', ');
    expect((error as Error).message).toBe(expectedMessage(count, named, more));
  });
});
