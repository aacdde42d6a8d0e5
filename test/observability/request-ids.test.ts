/**
 * A payment can be found by the service's request id: every history event that came from a response keeps the
 * `x-request-id` of that response, in every shipped store (memory, SQLite, PostgreSQL), whoever wrote it: the
 * create's 202, a status check, a poll, `recover()` and the settlement worker.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CollectionsClient, MemoryJournal, type PaymentEvent, type PaymentJournal } from '../../src/index.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { insertAll, openRecord } from '../worker/journal-records.ts';

let running: RunningSimulator;
const directory = mkdtempSync(join(tmpdir(), 'request-ids-'));
const closers: (() => Promise<void>)[] = [];
beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 1 } }) });
});
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  await running.close();
  rmSync(directory, { recursive: true, force: true });
});

const stores: [string, () => PaymentJournal][] = [
  ['memory', () => new MemoryJournal()],
  [
    'SQLite',
    () => {
      const journal = new SqliteJournal(join(directory, `${randomUUID()}.db`));
      closers.push(() => journal.close());
      return journal;
    },
  ],
  [
    'PostgreSQL',
    () => {
      const journal = new PostgresJournal({
        connectionString: inject('postgresUrl'),
        tableName: `request_ids_${process.pid}_${closers.length}`,
      });
      closers.push(() => journal.close());
      return journal;
    },
  ],
];

function client(journal: PaymentJournal): CollectionsClient {
  return new CollectionsClient({ journal, apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl, logLevel: 'off' });
}

/** The request ids the simulator answered for this payment's requests, in order. */
function answeredFor(referenceId: string): string[] {
  return running.simulator.requests
    .filter(
      (request) =>
        request.path.endsWith(referenceId) || (request.body as { referenceId?: string } | undefined)?.referenceId === referenceId,
    )
    .map((request) => request.requestId);
}

/** Every event after the first insert came from a response: each names one the simulator gave for this payment. */
function expectEveryEventFromAResponse(events: PaymentEvent[], referenceId: string, writers: string[]) {
  const answered = answeredFor(referenceId);
  const fromResponses = events.filter((event) => event.from !== null && writers.includes(event.by));
  expect(fromResponses.length).toBeGreaterThan(0);
  for (const event of fromResponses) {
    expect(event.requestId, `${event.by}: ${event.from} → ${event.to}`).toBeDefined();
    expect(answered).toContain(event.requestId);
  }
}

describe.each(stores)('request ids in the history (%s)', (_name, open) => {
  it('initiate (the 202), checkStatus and pollUntilSettled keep the request id of the response they recorded', async () => {
    const journal = open();
    const collections = client(journal);
    const { referenceId } = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 });
    await collections.checkStatus(referenceId);
    await collections.pollUntilSettled(referenceId, { initialDelayMs: 0, intervalMs: 10, maxIntervalMs: 10 });
    const events = await journal.history(referenceId);
    expect(events.map((event) => event.to)).toContain('successful');
    expectEveryEventFromAResponse(events, referenceId, ['initiate', 'checkStatus', 'poll']);
  });

  it('recover() and the settlement worker keep the request id of the status they recorded', async () => {
    const journal = open();
    const recovered = openRecord(PHONES.succeeds, 'unknown');
    const settled = openRecord(PHONES.declined, 'pending');
    await insertAll(journal, [recovered, settled]);
    const collections = client(journal);
    // The simulator holds what the journal says was sent.
    await collections.request('POST', '/v1/collections/mobile-money', {
      body: { referenceId: recovered.referenceId, productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25, currency: 'ZMW' },
    });
    await collections.request('POST', '/v1/collections/mobile-money', {
      body: { referenceId: settled.referenceId, productId: PRODUCTS.primary, phoneNumber: PHONES.declined, amount: 25, currency: 'ZMW' },
    });
    await collections.recover();
    expectEveryEventFromAResponse(await journal.history(recovered.referenceId), recovered.referenceId, ['recover']);

    const worker = collections.startSettlementWorker({ initialDelayMs: 0, intervalMs: 10, maxIntervalMs: 10, scanIntervalMs: 20 });
    try {
      await collections.waitForSettlement(settled.referenceId, { maxWaitMs: 5000 });
    } finally {
      await worker.stop();
    }
    const events = await journal.history(settled.referenceId);
    expect(events.at(-1)?.to).toBe('failed');
    const workerWriters = [...new Set(events.map((event) => event.by))].filter(
      (by) => by !== 'recover' && by !== 'test' && by !== 'insert',
    );
    expectEveryEventFromAResponse(events, settled.referenceId, ['recover', ...workerWriters]);
  });
});
