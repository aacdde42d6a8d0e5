import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { checkPaymentJournal } from '../../src/testing/index.js';

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
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: 1 });
    db.close();
    await journal.close();
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
});
