/**
 * Contradictions are loud: when the service answers something that contradicts a final record, the record keeps its
 * state and is marked, the call that saw it rejects with PaymentContradictionError, and the worker reports it (its
 * callback or an error line; its metrics count it).
 */
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { WorkerMetrics } from '../../src/cli/metrics.js';
import {
  type Logger,
  MemoryJournal,
  PaymentContradictionError,
  type PaymentRecord,
  type PaymentState,
  TapCollectionsError,
} from '../../src/index.js';
import { CHECK_URL, collectionInput, collectionsClient, PRODUCT_ID, statusBody } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server } = useMswServer();
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** A record written as `initiate` writes it, then moved to `state` as a writer would. */
async function recordIn(journal: MemoryJournal, referenceId: string, state: PaymentState): Promise<PaymentRecord> {
  const inserted = await journal.insert({
    referenceId,
    state: 'initiating',
    productId: PRODUCT_ID,
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'v1:abc',
    sendWindowMs: 0,
  });
  if (inserted === undefined) throw new Error('not inserted');
  if (state === 'initiating') return inserted;
  const moved = await journal.transition(referenceId, 1, { state, by: 'test', statusText: state });
  return moved.record as PaymentRecord;
}

/** The status endpoint answering `statusText` for every reference, after `before` ran (another process's write). */
function answering(statusText: string, before: (referenceId: string) => Promise<unknown> = async () => {}) {
  return http.get(CHECK_URL, async ({ params }) => {
    const referenceId = String(params.referenceId);
    await before(referenceId);
    return HttpResponse.json(statusBody({ referenceId, statusText, transactionCode: 'TX1' }), { headers: { 'x-request-id': 'req-42' } });
  });
}

async function expectMarked(journal: MemoryJournal, referenceId: string, state: PaymentState, statusText: string) {
  const record = await journal.get(referenceId);
  expect(record?.state, 'the record keeps its state').toBe(state);
  expect(record?.contradiction).toMatchObject({ statusText });
  expect(record?.contradiction?.at).toBe(record?.updatedAt);
  expect((await journal.history(referenceId)).at(-1)).toMatchObject({ from: state, to: state, statusText });
}

describe('a service answer that contradicts a final record', () => {
  const cases: [PaymentState, string][] = [
    ['not-sent', 'pending'],
    ['not-sent', 'successful'],
    ['rejected', 'failed'],
    ['failed', 'successful'],
    ['successful', 'failed'],
  ];
  for (const [state, statusText] of cases) {
    it(`checkStatus: a ${state} record and "${statusText}" reject with PaymentContradictionError naming both; the record is marked`, async () => {
      const journal = new MemoryJournal();
      await recordIn(journal, id(1), state);
      server.use(answering(statusText));
      const error = await collectionsClient({ journal })
        .checkStatus(id(1))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(PaymentContradictionError);
      expect(error).toBeInstanceOf(TapCollectionsError);
      expect(error).toMatchObject({ referenceId: id(1), recordState: state, statusText });
      expect((error as Error).message).toContain(state);
      expect((error as Error).message).toContain(`"${statusText}"`);
      await expectMarked(journal, id(1), state, statusText);
    });
  }

  it('the same outcome again, or pending for a settled record, is no contradiction', async () => {
    const journal = new MemoryJournal();
    await recordIn(journal, id(1), 'successful');
    await recordIn(journal, id(2), 'failed');
    const client = collectionsClient({ journal });
    server.use(answering('successful'));
    await expect(client.checkStatus(id(1))).resolves.toMatchObject({ statusText: 'successful' });
    server.use(answering('pending'));
    await expect(client.checkStatus(id(2))).resolves.toMatchObject({ statusText: 'pending' });
    expect((await journal.get(id(1)))?.contradiction).toBeUndefined();
    expect((await journal.get(id(2)))?.version).toBe(2);
  });

  it('pollUntilSettled rejects; a second sight of the same word writes nothing more, and still rejects', async () => {
    const journal = new MemoryJournal();
    await recordIn(journal, id(1), 'rejected');
    server.use(answering('successful'));
    const client = collectionsClient({ journal });
    await expect(client.pollUntilSettled(id(1), { initialDelayMs: 1, intervalMs: 1 })).rejects.toBeInstanceOf(PaymentContradictionError);
    const marked = await journal.get(id(1));
    await expect(client.pollUntilSettled(id(1), { initialDelayMs: 1, intervalMs: 1 })).rejects.toBeInstanceOf(PaymentContradictionError);
    expect((await journal.get(id(1)))?.version).toBe(marked?.version);
  });

  it('waitForSettlement rejects on a marked record', async () => {
    const journal = new MemoryJournal();
    await recordIn(journal, id(1), 'not-sent');
    server.use(answering('successful'));
    const client = collectionsClient({ journal });
    await client.checkStatus(id(1)).catch(() => undefined);
    await expect(client.waitForSettlement(id(1), { maxWaitMs: 1_000 })).rejects.toMatchObject({
      name: 'PaymentContradictionError',
      recordState: 'not-sent',
      statusText: 'successful',
    });
  });

  it('recover(): a record closed by another process while it was checked is marked; the others are recovered first', async () => {
    const journal = new MemoryJournal();
    await recordIn(journal, id(1), 'unknown');
    await recordIn(journal, id(2), 'initiating');
    // Another process closes the first as not-sent while this one's check is in flight.
    server.use(
      answering('successful', async (referenceId) => {
        if (referenceId !== id(1)) return;
        const current = await journal.get(referenceId);
        await journal.transition(referenceId, current?.version as number, { state: 'not-sent', by: 'another-till' });
      }),
    );
    await expect(collectionsClient({ journal, logLevel: 'off' }).recover()).rejects.toMatchObject({
      name: 'PaymentContradictionError',
      referenceId: id(1),
      recordState: 'not-sent',
    });
    await expectMarked(journal, id(1), 'not-sent', 'successful');
    expect((await journal.get(id(2)))?.state, 'the other payment was recovered').toBe('successful');
  });

  it('initiate of the same payment, reconciling a record closed meanwhile, rejects', async () => {
    const journal = new MemoryJournal();
    const input = collectionInput({ referenceId: id(7) });
    const client = collectionsClient({ journal, logLevel: 'off' });
    // The first initiate's push had an unknown outcome: the record is `unknown`.
    server.use(
      http.post(/mobile-money$/, () => HttpResponse.error()),
      http.get(CHECK_URL, () => HttpResponse.json({ success: false, message: 'Collection not found', code: 'NOT_FOUND' }, { status: 404 })),
    );
    await client.initiate(input, { maxRetries: 0 }).catch(() => undefined);
    expect((await journal.get(id(7)))?.state).toBe('unknown');
    server.use(
      answering('pending', async (referenceId) => {
        const current = await journal.get(referenceId);
        await journal.transition(referenceId, current?.version as number, { state: 'not-sent', by: 'another-till' });
      }),
    );
    await expect(client.initiate(input)).rejects.toBeInstanceOf(PaymentContradictionError);
    await expectMarked(journal, id(7), 'not-sent', 'pending');
  });
});

describe('the settlement worker and a record closed while it was leased', () => {
  /** A worker whose check of `referenceId` finds it closed as `closedAs` by another process, answered `statusText`. */
  async function run(options: { onContradiction?: (record: PaymentRecord) => void; logger?: Logger }) {
    const journal = new MemoryJournal();
    await recordIn(journal, id(1), 'pending');
    server.use(
      answering('successful', async (referenceId) => {
        const current = await journal.get(referenceId);
        if (current?.state === 'pending') await journal.transition(referenceId, current.version, { state: 'failed', by: 'another-till' });
      }),
    );
    const metrics = new WorkerMetrics();
    const client = collectionsClient({
      journal,
      instrumentation: metrics.instrumentation,
      ...(options.logger === undefined ? { logLevel: 'off' as const } : { logger: options.logger, logLevel: 'error' as const }),
    });
    const worker = client.startSettlementWorker({
      initialDelayMs: 0,
      scanIntervalMs: 5,
      ...(options.onContradiction === undefined ? {} : { onContradiction: options.onContradiction }),
    });
    await vi.waitFor(async () => expect((await journal.get(id(1)))?.contradiction).toBeDefined(), { timeout: 5_000 });
    await vi.waitFor(async () => expect(await metrics.render()).toContain('tap_collections_worker_contradictions_total{state="failed"} 1'));
    await worker.stop();
    await expectMarked(journal, id(1), 'failed', 'successful');
    return journal;
  }

  it('calls onContradiction with the marked record, and /metrics counts it', async () => {
    const seen: PaymentRecord[] = [];
    await run({ onContradiction: (record) => seen.push(record) });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ referenceId: id(1), state: 'failed', contradiction: { statusText: 'successful' } });
  });

  it('without onContradiction, says so in an error line', async () => {
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message: string) => errors.push(message) };
    await run({ logger });
    expect(errors.some((line) => line.includes(id(1)) && line.includes('contradicts') && line.includes('failed'))).toBe(true);
  });
});
