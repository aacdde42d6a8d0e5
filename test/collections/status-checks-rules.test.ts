/**
 * The status check's 404 rule where the journal fails: `checkStatus` with a journal that answers the two reads made
 * before the 404 is judged and then cannot be read. Through the public client (msw in process).
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CollectionsClientOptions,
  ConnectionError,
  JournalError,
  type Logger,
  MemoryJournal,
  NotFoundError,
  type PaymentRecord,
  RequestValidationError,
  UnknownOutcomeError,
} from '../../src/index.js';
import { COLLECTIONS_API_KEYS, createSimulator, createSimulatorHandlers, type Simulator } from '../../src/testing/index.js';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  HEALTH_URL,
  INITIATE_PATH,
  json,
  REFERENCE_ID,
  rejectionOf,
  useFakeMonotonicClock,
  watchFor,
} from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();
// The mutation run shares one module graph across files: a faked monotonic clock must not outlive its test.
afterEach(() => {
  vi.useRealTimers();
});

/** A memory journal whose reads fail once `allowed` reads were answered. */
class FailingAfter extends MemoryJournal {
  reads = 0;
  constructor(readonly allowed: number) {
    super();
  }
  override async get(referenceId: string) {
    if (++this.reads > this.allowed) throw new Error('database gone');
    return super.get(referenceId);
  }
}

it('a journal that fails while a 404 is judged: the 404 stands as no proof, said at warn with the reason, nothing closed', async () => {
  const journal = new FailingAfter(2);
  const warnings: [string, unknown][] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message, details) => warnings.push([message, details]),
    error: () => undefined,
  };
  server.use(
    http.get(CHECK_URL, () => json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' })),
    http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
  );
  const error = await rejectionOf(collectionsClient({ journal, logger, logLevel: 'warn' }).checkStatus(REFERENCE_ID));
  expect(error).toBeInstanceOf(NotFoundError);
  expect((error as Error).message).toMatch(/no proof the push was never sent/);
  expect(warnings).toEqual([
    [
      `[tap-collections-sdk] payment journal: could not judge a 404 for referenceId ${REFERENCE_ID}`,
      { reason: 'Payment journal: could not record a payment the service does not hold: database gone' },
    ],
  ]);
});

describe("the 404 rule in the duplicate-refusing mode (duplicateReferences: 'refused'), against the simulator", () => {
  let simulator: Simulator;
  beforeEach(async () => {
    simulator = createSimulator({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY } });
    server.use(...(await createSimulatorHandlers(simulator, { tapBaseUrl: TAP_BASE_URL, collectionsBaseUrl: COLLECTIONS_BASE_URL })));
  });
  const refused = (options: CollectionsClientOptions = {}) =>
    collectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, duplicateReferences: 'refused', ...options });

  /** A payment whose create and status check were both cut: `unknown`, nothing at the service. */
  async function unknownPayment(journal: MemoryJournal): Promise<PaymentRecord> {
    simulator.injectFault({ route: `POST ${INITIATE_PATH}`, drop: 'before', times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before', times: 1 });
    expect(await rejectionOf(refused({ journal, maxRetries: 0 }).initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    return (await journal.get(REFERENCE_ID)) as PaymentRecord;
  }

  it('a record left initiating that a resend can still answer is never closed not-sent on a 404, however old', async () => {
    useFakeMonotonicClock();
    const clock = { offsetMs: 0 };
    const record = await unknownPayment(new MemoryJournal());
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await journal.insert({ ...record, state: 'initiating' } as PaymentRecord);
    clock.offsetMs = 10 * 60_000;
    watchFor(10 * 60_000);
    const error = await rejectionOf(refused({ journal }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    // No time at which the 404 would decide it: the resend decides it (the 'unknown' rule's wait does not apply).
    expect((error as UnknownOutcomeError).decidableAt).toBeUndefined();
    expect((await journal.get(REFERENCE_ID))?.state).toBe('initiating');
  });

  /** A payment the service stored while its create's answer and the status check were cut: `unknown`, judged old. */
  async function oldUnknownPayment(): Promise<{ journal: MemoryJournal; till: ReturnType<typeof collectionsClient> }> {
    useFakeMonotonicClock();
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    const till = collectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, journal, maxRetries: 0 });
    simulator.injectFault({ route: `POST ${INITIATE_PATH}`, drop: 'after', times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before', times: 1 });
    expect(await rejectionOf(till.initiate(collectionInput()))).toBeInstanceOf(UnknownOutcomeError);
    // Well past the window and the grace, by the journal's clock and by this process's own watch.
    clock.offsetMs = 10 * 60_000;
    watchFor(10 * 60_000);
    return { journal, till };
  }

  it('a 404 the recheck contradicts: checkStatus resolves with the status the recheck found, and records it', async () => {
    const { journal, till } = await oldUnknownPayment();
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 404, times: 1 });
    const status = await till.checkStatus(REFERENCE_ID);
    expect(status).toMatchObject({ referenceId: REFERENCE_ID, statusText: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it("a recheck that fails itself (the service unreachable) rejects with that failure, not as the 404's no proof", async () => {
    const { journal, till } = await oldUnknownPayment();
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 404, times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before', times: 1 });
    const error = await rejectionOf(till.checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it('a 404 for a payment the journal does not hold is no proof, not an unknown outcome', async () => {
    const error = await rejectionOf(refused({ journal: new MemoryJournal() }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toMatch(/no proof the push was never sent/);
  });

  it('a journal that cannot read the payment before the resend rule: JournalError naming what it could not do', async () => {
    const record = await unknownPayment(new MemoryJournal());
    const journal = new FailingAfter(2);
    await journal.insert(record);
    journal.reads = 0;
    const error = await rejectionOf(refused({ journal }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(JournalError);
    expect((error as Error).message).toBe('Payment journal: could not read the payment: database gone');
  });

  it('a status checkStatus records is written by checkStatus in the history', async () => {
    const journal = new MemoryJournal();
    await refused({ journal }).initiate(collectionInput());
    simulator.settle(REFERENCE_ID, 'successful');
    await refused({ journal }).checkStatus(REFERENCE_ID);
    const history = await journal.history(REFERENCE_ID);
    expect(history.at(-1)?.by).toBe('checkStatus');
  });
});

describe('the status request', () => {
  it('a reference id that is not text is refused before sending, even one that reads as a UUID, naming the field and the rule', async () => {
    const lookalike = { toString: () => REFERENCE_ID };
    const error = await rejectionOf(collectionsClient().checkStatus(lookalike as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([{ path: 'referenceId', message: 'must be a UUID' }]);
  });

  it('a status answered proves the base URL: a later 404 is judged without asking /health', async () => {
    const other = '5b0f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b';
    server.use(
      http.get(CHECK_URL, ({ params }) =>
        params.referenceId === other
          ? json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' })
          : HttpResponse.json({ success: true, data: { referenceId: REFERENCE_ID, statusText: 'pending' } }),
      ),
      http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
    );
    const client = collectionsClient();
    await client.checkStatus(REFERENCE_ID);
    expect(await rejectionOf(client.checkStatus(other))).toBeInstanceOf(NotFoundError);
    expect(requests.map((request) => request.path)).toEqual([`/v1/collections/check/${REFERENCE_ID}`, `/v1/collections/check/${other}`]);
  });

  it('a word the poll settles on by its own settledStatuses is not warned about; checkStatus warns about it once', async () => {
    server.use(http.get(CHECK_URL, () => HttpResponse.json({ success: true, data: { referenceId: REFERENCE_ID, statusText: 'Cleared' } })));
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (message: string) => warnings.push(message), error() {} };
    const client = collectionsClient({ logger, logLevel: 'warn' });
    expect(await client.pollUntilSettled(REFERENCE_ID, { settledStatuses: ['cleared'] })).toMatchObject({ statusText: 'Cleared' });
    expect(warnings).toEqual([]);
    await client.checkStatus(REFERENCE_ID);
    await client.checkStatus(REFERENCE_ID);
    expect(warnings).toEqual([expect.stringContaining('answered status "Cleared", which statusWords does not name')]);
  });
});
