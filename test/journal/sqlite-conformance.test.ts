import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { listQuery } from '../../src/sqlite/schema.js';
import { checkPaymentJournal } from '../../src/testing/index.js';
import { INITIATING_RECORD } from '../helpers/fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'tap-journal-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('SqliteJournal', () => {
  it('passes every conformance check, each open a new connection to the same file', async () => {
    const file = join(directory, 'conformance.db');
    const results = await checkPaymentJournal(() => new SqliteJournal(file));
    expect(results.filter((result) => !result.ok)).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(13);
  });

  it('passes again on the same file (the schema is created once, the suite leaves nothing open)', async () => {
    const file = join(directory, 'twice.db');
    await checkPaymentJournal(() => new SqliteJournal(file));
    const results = await checkPaymentJournal(() => new SqliteJournal(file));
    expect(results.filter((result) => !result.ok)).toEqual([]);
  });

  it('opens the file in WAL mode and records the schema version', async () => {
    const file = join(directory, 'pragmas.db');
    const journal = new SqliteJournal(file, { busyTimeoutMs: 1234 });
    await journal.list();
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 4 });
    db.close();
    await journal.close();
  });

  it('opens a file written by the previous release (schema version 1): keeps its records, upgrades it, passes every check', async () => {
    const file = join(directory, 'release-1.db');
    const { DatabaseSync } = await import('node:sqlite');
    const old = new DatabaseSync(file);
    // The previous release's schema, verbatim (src/sqlite/index.ts at schema version 1).
    old.exec(`
CREATE TABLE IF NOT EXISTS tap_payment_journal (
  reference_id TEXT PRIMARY KEY NOT NULL,
  state TEXT NOT NULL,
  product_id TEXT NOT NULL,
  amount REAL NOT NULL,
  currency TEXT NOT NULL,
  phone_number TEXT NOT NULL,
  narration TEXT,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status_text TEXT,
  transaction_code TEXT,
  reason TEXT,
  error TEXT,
  lease_owner TEXT,
  lease_expires_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS tap_payment_journal_order ON tap_payment_journal (created_at, reference_id);
CREATE INDEX IF NOT EXISTS tap_payment_journal_open ON tap_payment_journal (created_at, reference_id) WHERE state IN ('initiating', 'pending', 'unknown');
PRAGMA journal_mode = WAL;
PRAGMA user_version = 1;
`);
    const insert = old.prepare(
      `INSERT INTO tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, narration, fingerprint,
         created_at, updated_at, status_text, transaction_code, reason, error, lease_owner, lease_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const pending = '0b7f5a52-7f0e-4d5e-9d7a-3f7f3c1b2a01';
    const settled = '0b7f5a52-7f0e-4d5e-9d7a-3f7f3c1b2a02';
    insert.run(
      pending,
      'pending',
      'p',
      10.05,
      'ZMW',
      '260*******56',
      'Lunch 🍔',
      'v1:a',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:01.000Z',
      'pending',
      null,
      null,
      null,
      'old-worker',
      0,
    );
    insert.run(
      settled,
      'successful',
      'p',
      9999.99,
      'ZMW',
      '260*******57',
      null,
      'v1:b',
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:03.000Z',
      'successful',
      'T1',
      'ok',
      null,
      null,
      0,
    );
    old.close();

    const journal = new SqliteJournal(file);
    expect(await journal.get(pending)).toEqual({
      referenceId: pending,
      state: 'pending',
      productId: 'p',
      amount: 10.05,
      currency: 'ZMW',
      phoneNumber: '260*******56',
      narration: 'Lunch 🍔',
      fingerprint: 'v1:a',
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:01.000Z',
      statusText: 'pending',
      version: 1,
    });
    expect((await journal.get(settled))?.amount).toBe(9999.99);
    // The upgrade wrote the longest window possible into the open record: no age proves a push of the first release unsent.
    const { DatabaseSync: Reader } = await import('node:sqlite');
    const raw = new Reader(file);
    expect(raw.prepare('SELECT reference_id, send_window_ms FROM tap_payment_journal ORDER BY reference_id').all()).toEqual([
      { reference_id: pending, send_window_ms: Number.POSITIVE_INFINITY },
      { reference_id: settled, send_window_ms: null },
    ]);
    raw.close();
    expect(await journal.history(pending)).toEqual([]); // no history before the upgrade
    // The record written before the upgrade moves on by the new rules, and its history starts there.
    const moved = await journal.transition(pending, 1, { state: 'successful', by: 'recover', statusText: 'successful' });
    expect(moved.applied).toBe(true);
    expect(moved.record?.version).toBe(2);
    expect(await journal.history(pending)).toEqual([
      { at: moved.record?.updatedAt, from: 'pending', to: 'successful', statusText: 'successful', by: 'recover' },
    ]);
    expect((await journal.transition(settled, 1, { state: 'failed', by: 'recover' })).applied).toBe(false);
    await journal.close();

    const results = await checkPaymentJournal(() => new SqliteJournal(file));
    expect(results.filter((result) => !result.ok)).toEqual([]);
    const db = new DatabaseSync(file);
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 4 });
    db.close();
  });

  it('a file that cannot be opened rejects the call, not the constructor', async () => {
    const journal = new SqliteJournal(join(directory, 'no-such-directory', 'x.db'));
    await expect(journal.get('3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0f')).rejects.toThrow();
  });

  it('refuses a file written by a newer schema', async () => {
    const file = join(directory, 'newer.db');
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    db.exec('PRAGMA user_version = 7');
    db.close();
    await expect(new SqliteJournal(file).list()).rejects.toThrow(/schema version 7/);
  });

  it('list({ contradictions: true }) reads the partial index of marked records: 3 of 100 000 records, whatever the states', async () => {
    const file = join(directory, 'contradictions.db');
    const journal = new SqliteJournal(file);
    const marked: string[] = [];
    for (let index = 0; index < 3; index++) {
      const stored = await journal.insert({
        referenceId: globalThis.crypto.randomUUID(),
        state: 'initiating',
        productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
        amount: 10,
        currency: 'ZMW',
        phoneNumber: '260*******56',
        fingerprint: `f${index}`,
      });
      if (stored === undefined) throw new Error('insert refused');
      await journal.transition(stored.referenceId, 1, { state: 'failed', by: 'test' });
      await journal.transition(stored.referenceId, 2, { state: 'failed', by: 'test', contradiction: { statusText: 'successful' } });
      marked.push(stored.referenceId);
    }
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    // 100 000 final records nobody contradicted, written as this release writes them.
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
      INSERT INTO tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
      SELECT printf('00000000-0000-4000-8000-%012d', i), 'failed', 'p', 1, 'ZMW', '260*******56', 'f', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1000, 1 FROM n`);
    for (const filter of [
      { contradictions: true },
      { contradictions: true, states: ['failed', 'successful'] },
      { contradictions: true, limit: 2 },
    ] as const) {
      const { sql, parameters } = listQuery(filter);
      const plan = db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...parameters)
        .map((row) => String(row.detail));
      expect(plan, JSON.stringify(filter)).toEqual(['SCAN tap_payment_journal USING INDEX tap_payment_journal_contradicted']);
    }
    db.close();
    expect((await journal.list({ contradictions: true })).map((record) => record.referenceId).sort()).toEqual(marked.sort());
    expect(await journal.list({ contradictions: true, states: ['successful'] })).toEqual([]);
    await journal.close();
  });

  it('keeps the deployment and the sealed number; a deployment column that cannot be read makes the row unreadable, never absent', async () => {
    const file = join(directory, 'deployment.db');
    const warnings: unknown[][] = [];
    const journal = new SqliteJournal(file, { logger: { warn: (...args: unknown[]) => warnings.push(args) } });
    const base = {
      ...INITIATING_RECORD,
      deployment: { baseUrl: 'https://collections.example.com', account: 'acct-1' },
      sealedPhoneNumber: 'v1.sealed',
    };
    const [kept, broken] = [globalThis.crypto.randomUUID(), globalThis.crypto.randomUUID()];
    for (const referenceId of [kept, broken]) await journal.insert({ ...base, referenceId });
    const { DatabaseSync } = await import('node:sqlite');
    const db = new DatabaseSync(file);
    expect(db.prepare('SELECT deployment, sealed_phone_number FROM tap_payment_journal WHERE reference_id = ?').get(kept)).toEqual({
      deployment: '{"baseUrl":"https://collections.example.com","account":"acct-1"}',
      sealed_phone_number: 'v1.sealed',
    });
    db.prepare(`UPDATE tap_payment_journal SET deployment = '{"baseUrl":1}', writes = writes + 1 WHERE reference_id = ?`).run(broken);
    db.close();
    expect((await journal.get(kept))?.deployment).toEqual(base.deployment);
    expect(await journal.get(broken)).toBeUndefined();
    expect(JSON.stringify(warnings)).toContain('a deployment column that is not an object with a baseUrl and an account');
    await journal.close();
  });
});
