/**
 * Scrapes are cheap: every shipped store counts its records by state from counters it keeps with each write
 * (memory, SQLite, PostgreSQL), including records written before the counters existed, and a worker's open-payments
 * gauge (the CLI's /metrics) reads those counts, never the records.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  CollectionsClient,
  MemoryJournal,
  type PaymentFilter,
  type PaymentJournal,
  type PaymentState,
  type SettlementWorkerView,
} from '../../src/index.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { COLLECTIONS_API_KEYS, PHONES } from '../../src/testing/index.ts';
import { insertAll, openRecord } from '../worker/journal-records.ts';

const directory = mkdtempSync(join(tmpdir(), 'journal-counts-'));
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
  rmSync(directory, { recursive: true, force: true });
});

type Store = { journal: PaymentJournal; reopen: () => Promise<PaymentJournal> };

const stores: [string, () => Promise<Store>][] = [
  ['memory', async () => ({ journal: new MemoryJournal(), reopen: async () => new MemoryJournal() })],
  [
    'SQLite',
    async () => {
      const file = join(directory, `${randomUUID()}.db`);
      const journal = new SqliteJournal(file);
      closers.push(() => journal.close());
      return {
        journal,
        reopen: async () => {
          await journal.close();
          // A file written before the counters existed: they are built from its records when it is next opened.
          const db = new DatabaseSync(file);
          for (const suffix of ['insert', 'update', 'delete']) db.exec(`DROP TRIGGER tap_payment_journal_counts_${suffix}`);
          db.exec('DROP TABLE tap_payment_journal_counts');
          db.close();
          const again = new SqliteJournal(file);
          closers.push(() => again.close());
          return again;
        },
      };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const url = inject('postgresUrl');
      const tableName = `counts_${process.pid}_${closers.length}`;
      const journal = new PostgresJournal({ connectionString: url, tableName });
      closers.push(() => journal.close());
      return {
        journal,
        reopen: async () => {
          const pool = new pg.Pool({ connectionString: url });
          await pool.query(`DROP TRIGGER "${tableName}_counted" ON "${tableName}"; DROP TABLE "${tableName}_counts"`);
          await pool.end();
          const again = new PostgresJournal({ connectionString: url, tableName });
          closers.push(() => again.close());
          return again;
        },
      };
    },
  ],
];

async function byListing(journal: PaymentJournal): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const record of await journal.list()) counts[record.state] = (counts[record.state] ?? 0) + 1;
  return counts;
}

const nonZero = (counts: Record<PaymentState, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));

describe.each(stores)('counts() (%s)', (_name, open) => {
  it('names every state and follows inserts and transitions; built from the records already there', async () => {
    const { journal, reopen } = await open();
    expect(await journal.counts?.()).toEqual({
      initiating: 0,
      pending: 0,
      unknown: 0,
      rejected: 0,
      'not-sent': 0,
      successful: 0,
      failed: 0,
    });
    const records = Array.from({ length: 40 }, (_, index) => openRecord(PHONES.succeeds, index % 3 === 0 ? 'initiating' : 'pending'));
    await insertAll(journal, records);
    for (const [index, record] of records.entries()) {
      const current = await journal.get(record.referenceId);
      if (current === undefined) throw new Error('missing');
      const to: PaymentState = index % 4 === 0 ? 'successful' : index % 4 === 1 ? 'failed' : index % 4 === 2 ? 'unknown' : current.state;
      if (to !== current.state) await journal.transition(record.referenceId, current.version, { state: to, by: 'test' });
    }
    // A refused transition (stale version) changes nothing.
    const first = records[0] as (typeof records)[0];
    await journal.transition(first.referenceId, 1, { state: 'pending', by: 'test' });
    const expected = await byListing(journal);
    expect(nonZero((await journal.counts?.()) as Record<PaymentState, number>)).toEqual(expected);
    if (journal instanceof MemoryJournal) return;
    const reopened = await reopen();
    expect(nonZero((await reopened.counts?.()) as Record<PaymentState, number>)).toEqual(expected);
  });
});

describe("a worker's open-payments gauge", () => {
  it('reads the journal counts, never its records; a journal without counts() is read and warned about once', async () => {
    class Watched extends MemoryJournal {
      lists = 0;
      override list(filter?: PaymentFilter) {
        this.lists += 1;
        return super.list(filter);
      }
    }
    const journal = new Watched();
    await insertAll(journal, [
      openRecord(PHONES.succeeds),
      openRecord(PHONES.succeeds, 'unknown'),
      openRecord(PHONES.succeeds, 'initiating'),
    ]);
    const warn: string[] = [];
    const views: SettlementWorkerView[] = [];
    const clientOf = (store: PaymentJournal) =>
      new CollectionsClient({
        journal: store,
        apiKey: COLLECTIONS_API_KEYS.primary,
        // Nothing answers here: the worker's checks fail, which is not what this test reads.
        baseUrl: 'http://127.0.0.1:59999',
        logger: { debug() {}, info() {}, warn: (line: string) => warn.push(line), error() {} },
        logLevel: 'warn',
        instrumentation: { settlementWorker: (view) => void views.push(view) },
      });
    const worker = clientOf(journal).startSettlementWorker({ initialDelayMs: 60_000, scanIntervalMs: 60_000 });
    const listsByWorker = journal.lists;
    try {
      expect(await views[0]?.openPayments()).toBe(3);
      expect(await views[0]?.openPayments()).toBe(3);
      expect(journal.lists).toBe(listsByWorker);
    } finally {
      await worker.stop();
    }

    // A store of one's own without counts(): still counted, by its records, and said once.
    const uncounted = new MemoryJournal();
    Object.defineProperty(uncounted, 'counts', { value: undefined });
    await insertAll(uncounted, [openRecord(PHONES.succeeds)]);
    const second = clientOf(uncounted).startSettlementWorker({ initialDelayMs: 60_000, scanIntervalMs: 60_000 });
    try {
      expect(await views[1]?.openPayments()).toBe(1);
      expect(await views[1]?.openPayments()).toBe(1);
      expect(warn.filter((line) => line.includes('no counts()'))).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});
