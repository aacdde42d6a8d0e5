/**
 * PostgresJournal against the run's real PostgreSQL server (started by test/postgres/global-setup.ts).
 * Each test uses a table of its own.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { PaymentRecord } from '../../src/journal/journal.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';

const url = inject('postgresUrl');
const pools: pg.Pool[] = [];
const journals: PostgresJournal[] = [];
afterAll(async () => {
  await Promise.all(journals.map((journal) => journal.close()));
  await Promise.all(pools.map((pool) => pool.end()));
});

let tables = 0;
function table(): string {
  tables += 1;
  return `journal_test_${process.pid}_${tables}`;
}
function journalOn(tableName: string): PostgresJournal {
  const journal = new PostgresJournal({ connectionString: url, tableName });
  journals.push(journal);
  return journal;
}

function record(createdAt: string, overrides: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    referenceId: randomUUID(),
    state: 'pending',
    productId: '7f1b0c55-5b8e-4b0e-9d6f-2f6f4f1e9c11',
    amount: 25.5,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'f1',
    createdAt,
    updatedAt: createdAt,
    ...overrides,
  };
}

describe('PostgresJournal', () => {
  it('writes, reads back through another pool, refuses a duplicate, never reopens a final record', async () => {
    const name = table();
    const writer = journalOn(name);
    const first = record('2026-01-01T00:00:00.000Z', { narration: 'Lunch', error: { name: 'TimeoutError' } });
    expect(await writer.insert(first)).toBe(true);
    expect(await writer.insert({ ...first, amount: 99 })).toBe(false);
    const reader = journalOn(name);
    expect(await reader.get(first.referenceId)).toEqual(first);
    expect(await reader.get(randomUUID())).toBeUndefined();

    const settled = await writer.update(first.referenceId, {
      state: 'successful',
      updatedAt: '2026-01-01T00:00:05.000Z',
      statusText: 'successful',
      transactionCode: 'SUCCESS',
    });
    expect(settled).toEqual({
      ...first,
      state: 'successful',
      updatedAt: '2026-01-01T00:00:05.000Z',
      statusText: 'successful',
      transactionCode: 'SUCCESS',
    });
    const again = await reader.update(first.referenceId, { state: 'pending', updatedAt: '2026-01-01T00:00:09.000Z' });
    expect(again).toEqual(settled);
    expect(await reader.update(randomUUID(), { state: 'pending', updatedAt: '2026-01-01T00:00:09.000Z' })).toBeUndefined();
  });

  it('lists oldest first, by state, with a limit', async () => {
    const journal = journalOn(table());
    const records = [
      record('2026-01-01T00:00:02.000Z'),
      record('2026-01-01T00:00:01.000Z', { state: 'unknown' }),
      record('2026-01-01T00:00:03.000Z', { state: 'failed' }),
    ];
    for (const item of records) await journal.insert(item);
    expect((await journal.list()).map((item) => item.createdAt)).toEqual([
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:03.000Z',
    ]);
    expect((await journal.list({ states: ['pending', 'failed'] })).map((item) => item.state)).toEqual(['pending', 'failed']);
    expect(await journal.list({ limit: 1 })).toEqual([records[1]]);
  });

  it('grants each open record to one owner at a time, even to owners claiming at once', async () => {
    const name = table();
    const setup = journalOn(name);
    for (let index = 0; index < 200; index++) {
      await setup.insert(record(`2026-01-01T00:00:${String(index % 60).padStart(2, '0')}.${String(index).padStart(3, '0')}Z`));
    }
    await setup.insert(record('2026-01-01T00:00:00.000Z', { state: 'successful' }));
    const owners = Array.from({ length: 5 }, (_, index) => ({ owner: `w${index}`, journal: journalOn(name) }));
    const batches = await Promise.all(owners.map(({ owner, journal }) => journal.lease({ owner, leaseMs: 60_000, limit: 60 })));
    const granted = batches.flat().map((item) => item.referenceId);
    expect(new Set(granted).size).toBe(granted.length);
    expect(granted.length).toBe(200);
    for (const batch of batches) {
      const keys = batch.map((item) => `${item.createdAt}/${item.referenceId}`);
      expect(keys).toEqual([...keys].sort());
    }
    // Held leases are not granted again, to anyone.
    expect(await owners[0]?.journal.lease({ owner: 'w0', leaseMs: 60_000, limit: 500 })).toEqual([]);
    expect(await owners[1]?.journal.lease({ owner: 'late', leaseMs: 60_000, limit: 500 })).toEqual([]);
  });

  it('takes over a lease that ran out by the server clock; the old owner cannot renew it; release frees at once', async () => {
    const name = table();
    const journal = journalOn(name);
    const open = record('2026-01-01T00:00:00.000Z');
    const other = record('2026-01-01T00:00:01.000Z');
    await journal.insert(open);
    await journal.insert(other);
    expect((await journal.lease({ owner: 'dead', leaseMs: 50, limit: 10 })).length).toBe(2);
    expect(await journal.lease({ owner: 'alive', leaseMs: 60_000, limit: 10 })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await journal.lease({ owner: 'alive', leaseMs: 60_000, limit: 1 })).map((item) => item.referenceId)).toEqual([
      open.referenceId,
    ]);
    expect(await journal.renew('dead', [open.referenceId, other.referenceId], 60_000)).toEqual([other.referenceId]);
    expect(await journal.renew('alive', [open.referenceId], 60_000)).toEqual([open.referenceId]);
    await journal.release('alive', [open.referenceId]);
    await journal.release('alive', [other.referenceId]); // not its lease: ignored
    expect((await journal.lease({ owner: 'next', leaseMs: 60_000, limit: 10 })).map((item) => item.referenceId)).toEqual([
      open.referenceId,
    ]);
    // A record that turned final is no longer leased: renewing says so.
    await journal.update(other.referenceId, { state: 'failed', updatedAt: '2026-01-01T00:00:09.000Z' });
    expect(await journal.renew('dead', [other.referenceId], 60_000)).toEqual([]);
  });

  it('creates its schema once when many processes start together, in a schema and table of your naming', async () => {
    const pool = new pg.Pool({ connectionString: url });
    pools.push(pool);
    const schema = `s_${process.pid}`;
    await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    const name = table();
    const starters = Array.from({ length: 6 }, () => new PostgresJournal({ pool, schema, tableName: name }));
    await Promise.all(starters.map((journal) => journal.migrate()));
    await Promise.all(starters.map((journal, index) => journal.insert(record(`2026-01-01T00:00:0${index}.000Z`))));
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${schema}.${name}`);
    expect(rows[0].n).toBe(6);
    await starters[0]?.close(); // a pool passed in is not ended by the journal
    await pool.query('SELECT 1');
  });

  it('refuses a table name that is not a plain identifier, before any connection', () => {
    expect(() => new PostgresJournal({ connectionString: url, tableName: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
    expect(() => new PostgresJournal({ connectionString: url, schema: 'a.b' })).toThrow(/schema/);
    expect(() => new PostgresJournal({} as never)).toThrow(/connectionString/);
  });
});
