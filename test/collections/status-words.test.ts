/**
 * The client option `statusWords`: one mapping of the service's status words used by the poll, a status check
 * with a journal, `recover()` and the settlement worker alike, through the public API against the simulator on
 * loopback; the `status` field read when `statusText` is absent; an unknown word warned once per payment and word;
 * the simulator speaking another vocabulary.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CollectionsClient,
  type CollectionsClientOptions,
  ConfigurationError,
  MemoryJournal,
  PollTimeoutError,
  RequestValidationError,
  saleOutcome,
} from '../../src/index.js';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { rejectionOf } from '../helpers/collections.js';
import { WordingSimulator } from '../helpers/simulator.js';

/** The simulator, its status checks answering each reference's word (set in `answers`) in the field given. */
const simulator = new WordingSimulator();
const answers = simulator.answers;
let service: RunningSimulator;

beforeAll(async () => {
  service = await startSimulator({ simulator });
});
afterAll(() => service.close());

const fakeLogger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() });
const warnLines = (logger: ReturnType<typeof fakeLogger>) => logger.warn.mock.calls.map((call) => String(call[0]));
const FAST_POLL = { initialDelayMs: 5, intervalMs: 5, maxIntervalMs: 10 } as const;
const FAST_WORKER = { initialDelayMs: 0, intervalMs: 10, maxIntervalMs: 20, scanIntervalMs: 10 } as const;

function client(options: CollectionsClientOptions = {}): CollectionsClient {
  return new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: service.collectionsBaseUrl, logLevel: 'off', ...options });
}

/** A payment initiated through a client with `journal`; the service then answers `word` for it. */
async function paymentAnswering(journal: MemoryJournal, word: string, field?: 'statusText' | 'status'): Promise<string> {
  const { referenceId } = await client({ journal }).initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 });
  answers.set(referenceId, { word, ...(field === undefined ? {} : { field }) });
  return referenceId;
}

const WORDS = [
  { word: 'completed', state: 'successful', outcome: 'paid' },
  { word: 'cancelled', state: 'failed', outcome: 'not-paid' },
  { word: 'expired', state: 'failed', outcome: 'not-paid' },
  { word: 'SUCCESSFUL', state: 'successful', outcome: 'paid' },
  { word: 'processing', state: 'pending', outcome: 'unknown' },
] as const;

describe.each(WORDS)('the service answers "$word": every path records $state', ({ word, state, outcome }) => {
  const settled = state !== 'pending';

  it('pollUntilSettled', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, word);
    const polling = client({ journal }).pollUntilSettled(referenceId, { ...FAST_POLL, maxWaitMs: settled ? 5_000 : 60 });
    if (settled) {
      expect((await polling).statusText).toBe(word);
    } else {
      const error = await rejectionOf(polling);
      expect(error).toBeInstanceOf(PollTimeoutError);
      // A known pending word is no unknown word.
      expect((error as PollTimeoutError).unrecognizedStatuses).toEqual([]);
    }
    const record = await journal.get(referenceId);
    expect(record).toMatchObject({ state, statusText: word });
    expect(record && saleOutcome(record)).toBe(outcome);
  });

  it('checkStatus with a journal', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, word);
    expect((await client({ journal }).checkStatus(referenceId)).statusText).toBe(word);
    expect(await journal.get(referenceId)).toMatchObject({ state, statusText: word });
  });

  it('recover()', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, word);
    const [record] = await client({ journal }).recover();
    expect(record).toMatchObject({ referenceId, state, statusText: word });
    expect(await journal.get(referenceId)).toMatchObject({ state, statusText: word });
  });

  it('the settlement worker', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, word);
    const delivered: string[] = [];
    const worker = client({ journal }).startSettlementWorker({ ...FAST_WORKER, onSettled: (record) => void delivered.push(record.state) });
    try {
      if (settled) {
        await vi.waitFor(() => expect(delivered).toEqual([state]), { timeout: 5_000, interval: 10 });
      } else {
        // Checked again and again, and still open.
        await vi.waitFor(() => expect(simulator.requests.filter((r) => r.path.endsWith(referenceId)).length).toBeGreaterThan(3), {
          timeout: 5_000,
          interval: 10,
        });
        expect(delivered).toEqual([]);
      }
    } finally {
      await worker.stop();
    }
    expect(await journal.get(referenceId)).toMatchObject({ state, statusText: word });
  });
});

describe('an answer with `status` instead of `statusText`', () => {
  it('is read from `status`, and statusText carries it for the caller', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, 'completed', 'status');
    const status = await client({ journal }).checkStatus(referenceId);
    expect(status).toMatchObject({ statusText: 'completed', status: 'completed' });
    expect(await journal.get(referenceId)).toMatchObject({ state: 'successful', statusText: 'completed' });
  });
});

describe('a word in none of the lists', () => {
  it('keeps the poll waiting, is warned once per payment and word, and PollTimeoutError names it', async () => {
    const journal = new MemoryJournal();
    const first = await paymentAnswering(journal, 'on-hold');
    const logger = fakeLogger();
    const sdk = client({ journal, logger, logLevel: 'warn' });
    const error = await rejectionOf(sdk.pollUntilSettled(first, { ...FAST_POLL, maxWaitMs: 80 }));
    expect(error).toBeInstanceOf(PollTimeoutError);
    expect((error as PollTimeoutError).unrecognizedStatuses).toEqual(['on-hold']);
    expect((error as Error).message).toContain('"on-hold"');
    // A second poll of the same payment, and the same word in another case: no second line, but its PollTimeoutError
    // still names the word.
    answers.set(first, { word: 'ON-HOLD' });
    const again = await rejectionOf(sdk.pollUntilSettled(first, { ...FAST_POLL, maxWaitMs: 80 }));
    expect((again as PollTimeoutError).unrecognizedStatuses).toEqual(['ON-HOLD']);
    expect(warnLines(logger)).toEqual([expect.stringContaining('"on-hold"')]);
    expect(warnLines(logger)[0]).toContain(first);
    expect(await journal.get(first)).toMatchObject({ state: 'pending' });
    // Another payment, or another word of the same payment: a line each.
    const second = await paymentAnswering(journal, 'on-hold');
    await rejectionOf(sdk.pollUntilSettled(second, { ...FAST_POLL, maxWaitMs: 40 }));
    answers.set(first, { word: 'queued' });
    await rejectionOf(sdk.pollUntilSettled(first, { ...FAST_POLL, maxWaitMs: 40 }));
    expect(warnLines(logger)).toHaveLength(3);
  });

  it('is warned once per payment and word by the worker, which keeps checking it', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, 'on-hold');
    const logger = fakeLogger();
    const worker = client({ journal, logger, logLevel: 'warn' }).startSettlementWorker(FAST_WORKER);
    try {
      await vi.waitFor(() => expect(simulator.requests.filter((r) => r.path.endsWith(referenceId)).length).toBeGreaterThan(5), {
        timeout: 5_000,
        interval: 10,
      });
      answers.set(referenceId, { word: 'completed' });
      await vi.waitFor(async () => expect((await journal.get(referenceId))?.state).toBe('successful'), { timeout: 5_000, interval: 10 });
    } finally {
      await worker.stop();
    }
    expect(warnLines(logger)).toEqual([expect.stringContaining('"on-hold"')]);
  });
});

describe('the option statusWords', () => {
  it('adds words to each list: a custom word settles every path; the defaults still hold', async () => {
    const journal = new MemoryJournal();
    const statusWords = { successful: ['Done'], failed: ['refused'], pending: ['on-hold'] };
    const done = await paymentAnswering(journal, ' DONE ');
    const refused = await paymentAnswering(journal, 'refused');
    const held = await paymentAnswering(journal, 'on-hold');
    const logger = fakeLogger();
    const sdk = client({ journal, statusWords, logger, logLevel: 'warn' });
    expect((await sdk.pollUntilSettled(done, FAST_POLL)).statusText).toBe(' DONE ');
    const recovered = await sdk.recover();
    expect(recovered.map((record) => [record.referenceId, record.state])).toEqual([
      [refused, 'failed'],
      [held, 'pending'],
    ]);
    expect(warnLines(logger)).toEqual([]);
    const another = await paymentAnswering(journal, 'successful');
    expect((await sdk.pollUntilSettled(another, FAST_POLL)).statusText).toBe('successful');
    expect(await journal.get(another)).toMatchObject({ state: 'successful' });
  });

  it.for([
    [null, 'statusWords must be an object'],
    [['done'], 'statusWords must be an object'],
    [{ successful: 'done' }, 'statusWords successful must be an array'],
    [{ failed: [''] }, 'statusWords failed must be an array of non-blank strings'],
    [{ finished: ['done'] }, 'unknown list "finished"'],
    [{ successful: ['done'], failed: ['DONE'] }, '"DONE" is in both successful and failed'],
    [{ pending: ['completed'] }, '"completed" is in both successful and pending'],
  ] as const)('refuses %j at construction', ([statusWords, message]) => {
    const construct = () => client({ statusWords: statusWords as never });
    expect(construct).toThrow(ConfigurationError);
    expect(construct).toThrow(message);
  });
});

describe('settledStatuses with a journal', () => {
  it('refuses a word the journal could not record as settled, before any request', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, 'done');
    const before = simulator.requests.length;
    const error = await rejectionOf(client({ journal }).pollUntilSettled(referenceId, { settledStatuses: ['done', 'processing'] }));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([
      { path: 'options.settledStatuses', message: expect.stringContaining('"done", "processing"') },
    ]);
    expect(simulator.requests.length).toBe(before);
  });

  it('accepts words the client maps as settled, and the journal agrees', async () => {
    const journal = new MemoryJournal();
    const referenceId = await paymentAnswering(journal, 'done');
    const sdk = client({ journal, statusWords: { successful: ['done'] } });
    expect((await sdk.pollUntilSettled(referenceId, { ...FAST_POLL, settledStatuses: ['DONE'] })).statusText).toBe('done');
    expect(await journal.get(referenceId)).toMatchObject({ state: 'successful', statusText: 'done' });
  });
});

describe('the simulator speaking another vocabulary', () => {
  let running: RunningSimulator;
  beforeAll(async () => {
    running = await startSimulator({
      statusWords: { pending: 'processing', successful: 'COMPLETED', failed: 'cancelled', statusField: 'status' },
    });
  });
  afterAll(() => running.close());

  it('answers its words in `status`; the client maps them, and the journal and the worker agree', async () => {
    const journal = new MemoryJournal();
    const logger = fakeLogger();
    const sdk = new CollectionsClient({
      apiKey: COLLECTIONS_API_KEYS.primary,
      baseUrl: running.collectionsBaseUrl,
      journal,
      logger,
      logLevel: 'warn',
    });
    const paid = await sdk.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 });
    expect(paid.status).toBe('processing');
    const declined = await sdk.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.declined, amount: 25 });
    expect(await sdk.pollUntilSettled(paid.referenceId, FAST_POLL)).toMatchObject({ statusText: 'COMPLETED', status: 'COMPLETED' });
    const delivered: string[] = [];
    const worker = sdk.startSettlementWorker({ ...FAST_WORKER, onSettled: (record) => void delivered.push(record.state) });
    await vi.waitFor(() => expect(delivered).toEqual(['failed']), { timeout: 5_000, interval: 10 });
    await worker.stop();
    expect(await journal.get(paid.referenceId)).toMatchObject({ state: 'successful', statusText: 'COMPLETED' });
    expect(await journal.get(declined.referenceId)).toMatchObject({ state: 'failed', statusText: 'cancelled' });
    expect(warnLines(logger)).toEqual([]);
    // The stored records keep the document's words.
    expect(running.simulator.collections().map((collection) => collection.status)).toEqual(['successful', 'failed']);
  });

  it('refuses a malformed vocabulary', async () => {
    await expect(startSimulator({ statusWords: { successful: '' } })).rejects.toThrow(TypeError);
    await expect(startSimulator({ statusWords: { statusField: 'state' as never } })).rejects.toThrow('statusField');
  });
});
