/**
 * PostgresJournal against the run's real PostgreSQL server (started by test/postgres/global-setup.ts).
 * Each test uses a table of its own.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { NewPaymentRecord, PaymentRecord, PaymentState } from '../../src/journal/journal.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { listQuery } from '../../src/postgres/schema.ts';
import { checkPaymentJournal } from '../../src/testing/index.ts';

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

function record(overrides: Partial<NewPaymentRecord> = {}): NewPaymentRecord {
  return {
    referenceId: randomUUID(),
    state: 'initiating',
    productId: '7f1b0c55-5b8e-4b0e-9d6f-2f6f4f1e9c11',
    amount: 25.5,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'f1',
    ...overrides,
  };
}

/** Inserts `item` and moves it to `state` by one transition (as the SDK does). */
async function insertIn(journal: PostgresJournal, item: NewPaymentRecord, state: PaymentState): Promise<PaymentRecord> {
  const stored = await journal.insert(item);
  if (stored === undefined) throw new Error('duplicate');
  if (state === 'initiating') return stored;
  const moved = await journal.transition(item.referenceId, 1, { state, by: 'test' });
  return moved.record as PaymentRecord;
}

describe('PostgresJournal', () => {
  it('writes by the server clock, reads back through another pool, refuses a duplicate, never reopens a final record', async () => {
    const name = table();
    const writer = journalOn(name);
    const first = record({ narration: 'Lunch', error: { name: 'TimeoutError' }, sendWindowMs: 106_000 });
    const before = await writer.now();
    const stored = await writer.insert(first);
    expect(stored).toMatchObject({ ...first, version: 1 });
    expect(stored?.createdAt).toBe(stored?.updatedAt);
    expect(stored && stored.createdAt >= before).toBe(true);
    expect(stored?.decidableAt).toBe(new Date(Date.parse(stored?.updatedAt as string) + 116_000).toISOString());
    expect(await writer.insert({ ...first, amount: 99 })).toBeUndefined();
    const reader = journalOn(name);
    expect(await reader.get(first.referenceId)).toEqual(stored);
    expect(await reader.get(randomUUID())).toBeUndefined();

    const settled = await writer.transition(first.referenceId, 1, {
      state: 'successful',
      by: 'worker:w1',
      statusText: 'successful',
      transactionCode: 'SUCCESS',
      requestId: 'req-9',
    });
    expect(settled.applied).toBe(true);
    const { decidableAt: _decidable, ...open } = stored as PaymentRecord;
    expect(settled.record).toEqual({
      ...open,
      state: 'successful',
      updatedAt: settled.record?.updatedAt,
      version: 2,
      statusText: 'successful',
      transactionCode: 'SUCCESS',
    });
    expect(await reader.transition(first.referenceId, 2, { state: 'pending', by: 'poll' })).toEqual({
      applied: false,
      record: settled.record,
    });
    expect(await reader.transition(randomUUID(), 1, { state: 'pending', by: 'poll' })).toEqual({ applied: false, record: undefined });
    expect(await reader.history(first.referenceId)).toEqual([
      { at: stored?.createdAt, from: null, to: 'initiating', by: 'initiate' },
      {
        at: settled.record?.updatedAt,
        from: 'initiating',
        to: 'successful',
        statusText: 'successful',
        transactionCode: 'SUCCESS',
        requestId: 'req-9',
        by: 'worker:w1',
      },
    ]);
  });

  it('lists oldest first, by state, with a limit', async () => {
    const journal = journalOn(table());
    const records: PaymentRecord[] = [];
    for (const state of ['unknown', 'pending', 'failed'] as const) {
      records.push(await insertIn(journal, record(), state));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect((await journal.list()).map((item) => item.referenceId)).toEqual(records.map((item) => item.referenceId));
    expect((await journal.list({ states: ['pending', 'failed'] })).map((item) => item.state)).toEqual(['pending', 'failed']);
    expect(await journal.list({ limit: 1 })).toEqual([records[0]]);
  });

  it('grants each open record to one owner at a time, even to owners claiming at once', async () => {
    const name = table();
    const setup = journalOn(name);
    for (let index = 0; index < 200; index++) await setup.insert(record());
    await insertIn(setup, record(), 'successful');
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
    const open = record();
    const other = record();
    // `open` is the newer: of two leases that ran out together, the newer payment is due first.
    await journal.insert(other);
    await new Promise((resolve) => setTimeout(resolve, 2));
    await journal.insert(open);
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
    expect((await journal.transition(other.referenceId, 1, { state: 'failed', by: 'test' })).applied).toBe(true);
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
    await Promise.all(starters.map((journal) => journal.insert(record())));
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${schema}.${name}`);
    expect(rows[0].n).toBe(6);
    await starters[0]?.close(); // a pool passed in is not ended by the journal
    await pool.query('SELECT 1');
  });

  it('list({ contradictions: true }) reads the partial index of marked records: 3 rows read of 20 000 records', async () => {
    const name = table();
    const journal = journalOn(name);
    const marked: string[] = [];
    for (let index = 0; index < 3; index++) {
      const stored = await journal.insert(record({ sendWindowMs: 1000 }));
      if (stored === undefined) throw new Error('insert refused');
      await journal.transition(stored.referenceId, 1, { state: 'failed', by: 'test' });
      await journal.transition(stored.referenceId, 2, { state: 'failed', by: 'test', contradiction: { statusText: 'successful' } });
      marked.push(stored.referenceId);
    }
    const pool = new pg.Pool({ connectionString: url });
    pools.push(pool);
    // 20 000 final records nobody contradicted, written as this release writes them (each notifies: a few seconds).
    await pool.query(
      `INSERT INTO "${name}" (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
       SELECT gen_random_uuid()::text, 'failed', 'p', 1, 'ZMW', '260*******56', 'f', now(), now(), 1000, 1 FROM generate_series(1, 20000)`,
    );
    await pool.query(`ANALYZE "${name}"`);
    for (const filter of [
      { contradictions: true },
      { contradictions: true, states: ['failed', 'successful'] },
      { contradictions: true, limit: 2 },
    ] as const) {
      const { sql, values } = listQuery(`"${name}"`, filter);
      const explained = await pool.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
      const plan = JSON.stringify(explained.rows[0]['QUERY PLAN']);
      expect(plan, JSON.stringify(filter)).toContain(`"Index Name":"${name}_contra_idx"`);
      expect(plan, JSON.stringify(filter)).not.toContain('Seq Scan');
      // Every row the scans read, summed over the plan's nodes that read the table.
      const read = [...plan.matchAll(/"Node Type":"(?:Index|Bitmap Heap|Bitmap Index) Scan"[^{}]*?"Actual Rows":(\d+)/g)].map((match) =>
        Number(match[1]),
      );
      expect(read.length, `a scan of the table in ${plan}`).toBeGreaterThan(0);
      expect(Math.max(...read), JSON.stringify(filter)).toBeLessThanOrEqual(3);
    }
    expect((await journal.list({ contradictions: true })).map((item) => item.referenceId).sort()).toEqual(marked.sort());
    expect(await journal.list({ contradictions: true, states: ['successful'] })).toEqual([]);
  }, 60_000);

  it('refuses a table name that is not a plain identifier, before any connection', () => {
    expect(() => new PostgresJournal({ connectionString: url, tableName: 'x"; DROP TABLE y; --' })).toThrow(TypeError);
    expect(() => new PostgresJournal({ connectionString: url, schema: 'a.b' })).toThrow(/schema/);
    expect(() => new PostgresJournal({} as never)).toThrow(/connectionString/);
  });
});

describe('PostgresJournal upgrades a table of the previous release in place', () => {
  it('numeric amounts, timestamptz times, a version and a history; every record kept with its amount and times', async () => {
    const pool = new pg.Pool({ connectionString: url });
    pools.push(pool);
    const name = table();
    // The previous release's DDL, verbatim (src/postgres/index.ts before the version column).
    await pool.query(`DO $$ BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('tap-collections-sdk journal'));
        CREATE TABLE IF NOT EXISTS "${name}" (
          reference_id text COLLATE "C" PRIMARY KEY,
          state text NOT NULL,
          product_id text NOT NULL,
          amount double precision NOT NULL,
          currency text NOT NULL,
          phone_number text NOT NULL,
          narration text,
          fingerprint text NOT NULL,
          created_at text COLLATE "C" NOT NULL,
          updated_at text NOT NULL,
          status_text text,
          transaction_code text,
          reason text,
          error jsonb,
          lease_owner text,
          lease_expires_at timestamptz
        );
        CREATE INDEX IF NOT EXISTS "${name}_open_idx" ON "${name}" (created_at, reference_id) WHERE state IN ('initiating', 'pending', 'unknown');
      END $$`);
    const rows = [
      ['0b7f5a52-7f0e-4d5e-9d7a-3f7f3c1b2a01', 'pending', 10.05, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.250Z', null],
      ['0b7f5a52-7f0e-4d5e-9d7a-3f7f3c1b2a02', 'successful', 9999.99, '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z', null],
      [
        '0b7f5a52-7f0e-4d5e-9d7a-3f7f3c1b2a03',
        'unknown',
        0.01,
        '2026-01-01T00:00:04.000Z',
        '2026-01-01T00:00:04.001Z',
        { name: 'TimeoutError' },
      ],
    ] as const;
    for (const [referenceId, state, amount, createdAt, updatedAt, error] of rows) {
      await pool.query(
        `INSERT INTO "${name}" (reference_id, state, product_id, amount, currency, phone_number, narration, fingerprint,
           created_at, updated_at, status_text, error, lease_owner, lease_expires_at)
         VALUES ($1, $2, 'p', $3, 'ZMW', '260*******56', 'Lunch 🍔', 'v1:x', $4, $5, $2, $6, 'old-worker', now() + interval '1 hour')`,
        [referenceId, state, amount, createdAt, updatedAt, error],
      );
    }

    const journal = new PostgresJournal({ pool, tableName: name });
    await journal.migrate();
    const types = await pool.query(
      `SELECT attname, format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = $1::regclass AND attname IN ('amount', 'created_at', 'updated_at', 'version') ORDER BY attname`,
      [`"${name}"`],
    );
    expect(types.rows).toEqual([
      { attname: 'amount', type: 'numeric' },
      { attname: 'created_at', type: 'timestamp with time zone' },
      { attname: 'updated_at', type: 'timestamp with time zone' },
      { attname: 'version', type: 'integer' },
    ]);
    for (const [referenceId, state, amount, createdAt, updatedAt, error] of rows) {
      const read = await journal.get(referenceId);
      expect(read).toMatchObject({
        referenceId,
        state,
        amount,
        createdAt,
        updatedAt,
        version: 1,
        narration: 'Lunch 🍔',
        statusText: state,
      });
      expect(read?.error).toEqual(error ?? undefined);
      expect(await journal.history(referenceId)).toEqual([]); // no history before the upgrade
    }
    expect((await journal.list()).map((item) => item.referenceId)).toEqual(rows.map(([referenceId]) => referenceId));
    // The upgrade wrote the longest window possible into the open records: no age proves a push of the first release unsent.
    const windows = await pool.query(`SELECT reference_id, send_window_ms FROM "${name}" ORDER BY reference_id`);
    expect(windows.rows).toEqual([
      { reference_id: rows[0][0], send_window_ms: Number.POSITIVE_INFINITY },
      { reference_id: rows[1][0], send_window_ms: null },
      { reference_id: rows[2][0], send_window_ms: Number.POSITIVE_INFINITY },
    ]);
    expect((await journal.get(rows[2][0]))?.decidableAt).toBeUndefined();
    // A lease taken before the upgrade still holds after it.
    expect(await journal.lease({ owner: 'new-worker', leaseMs: 60_000, limit: 10 })).toEqual([]);
    // Records written before the upgrade move on by the new rules; a second migrate() changes nothing.
    const moved = await journal.transition(rows[0][0], 1, { state: 'successful', by: 'recover', statusText: 'successful' });
    expect(moved.applied).toBe(true);
    expect(moved.record?.amount).toBe(10.05);
    await new PostgresJournal({ pool, tableName: name }).migrate();
    expect(await journal.get(rows[0][0])).toEqual(moved.record);
    await journal.release('old-worker', [rows[2][0]]);
    await journal.transition(rows[2][0], 1, { state: 'failed', by: 'recover' });

    const results = await checkPaymentJournal(() => new PostgresJournal({ pool, tableName: name }));
    expect(results.filter((result) => !result.ok)).toEqual([]);
  });

  it('keeps amounts exact as numeric (no binary rounding on the way in or out)', async () => {
    const journal = journalOn(table());
    for (const amount of [10.05, 9999.99, 0.01, 1234567.89, 0.1, 19.99]) {
      const stored = await journal.insert(record({ amount }));
      expect(stored?.amount).toBe(amount);
      expect((await journal.get(stored?.referenceId as string))?.amount).toBe(amount);
    }
  });
});
