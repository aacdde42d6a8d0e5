/**
 * The words that end a poll (`settledStatuses`, added to the client's `statusWords`), the warn line for a word
 * in none of the lists (once per payment and word), and what a PollTimeoutError says when no collection was ever
 * seen. Every path reading the words alike: test/collections/status-words.test.ts.
 */
import { HttpResponse, http } from 'msw';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PollTimeoutError } from '../../src/index.js';
import { CHECK_URL, collectionsClient, healthy, inOrder, json, REFERENCE_ID, rejectionOf, statusBody } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server } = useMswServer();
// `/health` proves the base URL (the client asks it once, before it takes a 404 as the service's answer).
beforeEach(() => server.use(healthy()));
const FAST = { initialDelayMs: 5, intervalMs: 5, maxIntervalMs: 10 } as const;
const status = (statusText: string) => () => HttpResponse.json(statusBody({ statusText }));
const fakeLogger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() });
const warnLines = (logger: ReturnType<typeof fakeLogger>) => logger.warn.mock.calls.map((call) => String(call[0]));

describe('settledStatuses', () => {
  it('ends the wait on a word the caller names (completed)', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('completed'))));
    const settled = await collectionsClient().pollUntilSettled(REFERENCE_ID, {
      ...FAST,
      settledStatuses: ['successful', 'failed', 'completed'],
    });
    expect(settled.statusText).toBe('completed');
  });

  it('ends the wait on a word only the caller names (no journal), compared without regard to case', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('Done'))));
    const logger = fakeLogger();
    const settled = await collectionsClient({ logger, logLevel: 'warn' }).pollUntilSettled(REFERENCE_ID, {
      ...FAST,
      settledStatuses: ['done'],
    });
    expect(settled.statusText).toBe('Done');
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('adds to the client’s settled words: a default settled word the caller left out still ends the wait', async () => {
    // The journal, recover() and the worker record `failed` as final: a poll waiting on past it would disagree.
    server.use(http.get(CHECK_URL, inOrder(status('failed'), status('successful'))));
    const logger = fakeLogger();
    const settled = await collectionsClient({ logger, logLevel: 'warn' }).pollUntilSettled(REFERENCE_ID, {
      ...FAST,
      settledStatuses: ['successful'],
    });
    expect(settled.statusText).toBe('failed');
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it.for([[], [''], 'successful', [1]])('refuses %j', async (settledStatuses) => {
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { settledStatuses: settledStatuses as never }));
    expect((error as { issues: { path: string }[] }).issues.map((issue) => issue.path)).toEqual(['options.settledStatuses']);
  });
});

describe('a status in none of the status word lists', () => {
  it('is logged at warn once per payment and word, and keeps the poll waiting', async () => {
    server.use(
      http.get(
        CHECK_URL,
        inOrder(status('on-hold'), status('on-hold'), status('queued'), status('on-hold'), status('queued'), status('successful')),
      ),
    );
    const logger = fakeLogger();
    const settled = await collectionsClient({ logger, logLevel: 'warn' }).pollUntilSettled(REFERENCE_ID, FAST);
    expect(settled.statusText).toBe('successful');
    const lines = warnLines(logger);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('"on-hold"');
    expect(lines[1]).toContain('"queued"');
    expect(lines[0]).toContain(REFERENCE_ID);
  });

  it('is not warned about again by the next poll of the same payment', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('on-hold'), status('successful'), status('on-hold'), status('successful'))));
    const logger = fakeLogger();
    const client = collectionsClient({ logger, logLevel: 'warn' });
    await client.pollUntilSettled(REFERENCE_ID, FAST);
    await client.pollUntilSettled(REFERENCE_ID, FAST);
    expect(warnLines(logger)).toHaveLength(1);
  });

  it('pending and processing are not warned about', async () => {
    server.use(http.get(CHECK_URL, inOrder(status('pending'), status('processing'), status('successful'))));
    const logger = fakeLogger();
    await collectionsClient({ logger, logLevel: 'warn' }).pollUntilSettled(REFERENCE_ID, FAST);
    expect(logger.warn).not.toHaveBeenCalled();
  });
});

describe('PollTimeoutError when nothing was ever seen', () => {
  it('says no collection with this referenceId was seen, lastStatus undefined (maxWaitMs below notFoundGraceMs)', async () => {
    server.use(http.get(CHECK_URL, () => json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' })));
    const error = await rejectionOf(
      collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 60, notFoundGraceMs: 10_000 }),
    );
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect((error as PollTimeoutError).lastStatus).toBeUndefined();
    expect((error as Error).message).toContain('no collection with this referenceId was seen');
    expect((error as Error).message).not.toContain('it may still settle');
  });

  it('says it may still settle once a status was seen', async () => {
    server.use(
      http.get(
        CHECK_URL,
        inOrder(() => json(404, { success: false, code: 'E_NOT_FOUND' }), status('pending')),
      ),
    );
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 60 }));
    expect((error as PollTimeoutError).lastStatus).toMatchObject({ statusText: 'pending' });
    expect((error as Error).message).toContain('it may still settle');
  });

  it('says it may still settle when the checks only failed (nothing was learned)', async () => {
    server.use(http.get(CHECK_URL, () => json(503, { success: false }, { 'retry-after': '0' })));
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { ...FAST, maxWaitMs: 60 }));
    expect((error as Error).message).toContain('it may still settle');
  });
});
