/**
 * A SqliteJournal's rows as they are read back: which rows are refused as unreadable (each reason named, reported
 * once, never a failed read and never an absent record that looks like an earlier release's), and how the columns a
 * write leaves empty read back as absent properties.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { NewPaymentRecord } from '../../src/index.js';
import { RowReader } from '../../src/journal/record-row.js';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { INITIATING_RECORD } from '../helpers/fixtures.js';

const directory = mkdtempSync(join(tmpdir(), 'tap-rows-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let files = 0;
/** A journal on a new file holding one record, a raw connection to change its row, and the warnings it said. */
async function journalWithRow(record: Partial<NewPaymentRecord> = {}, warn?: (...args: unknown[]) => void) {
  const file = join(directory, `rows-${files++}.db`);
  const warnings: unknown[][] = [];
  const journal = new SqliteJournal(file, { logger: { warn: warn ?? ((...args: unknown[]) => warnings.push(args)) } });
  const referenceId = globalThis.crypto.randomUUID();
  await journal.insert({ ...INITIATING_RECORD, ...record, referenceId } as NewPaymentRecord);
  const { DatabaseSync } = await import('node:sqlite');
  const raw = new DatabaseSync(file);
  const set = (assignments: string, ...values: (string | number | null)[]) =>
    raw
      .prepare(`UPDATE tap_payment_journal SET ${assignments}, version = version + 1, writes = writes + 1 WHERE reference_id = ?`)
      .run(...values, referenceId);
  return { journal, raw, referenceId, warnings, set };
}

describe('a row that cannot be read is refused with its reason, never read as a record', () => {
  const cases: [string, string, (string | number | null)[], string][] = [
    ['a state the SDK does not know', 'state = ?', ['settled'], 'an unknown state'],
    ['an amount that is not a number', 'amount = ?', ['ten'], 'an amount that is not a number'],
    ['a created_at that is not a time', 'created_at = ?', ['yesterday'], 'a created_at that is not a time'],
    ['an updated_at that is not a time', 'updated_at = ?', ['soon'], 'a updated_at that is not a time'],
    ['an error column that is not JSON', 'error = ?', ['not json {'], 'an error column that is not JSON'],
    ['an error that is JSON text, not an object', 'error = ?', ['"boom"'], 'an error column that is not an object with a name'],
    ['an error that is JSON null', 'error = ?', ['null'], 'an error column that is not an object with a name'],
    ['an error without a name', 'error = ?', ['{"message":"boom"}'], 'an error column that is not an object with a name'],
    ['an error whose name is not text', 'error = ?', ['{"name":7}'], 'an error column that is not an object with a name'],
    [
      'a deployment that is not JSON',
      'deployment = ?',
      ['{baseUrl'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
    [
      'a deployment that is JSON text',
      'deployment = ?',
      ['"acct-1"'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
    [
      'a deployment that is JSON null',
      'deployment = ?',
      ['null'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
    [
      'a deployment without an account',
      'deployment = ?',
      ['{"baseUrl":"https://collections.example.com"}'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
    [
      'a deployment whose baseUrl is not text',
      'deployment = ?',
      ['{"baseUrl":1,"account":"acct-1"}'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
    [
      'a deployment whose account is not text',
      'deployment = ?',
      ['{"baseUrl":"https://collections.example.com","account":1}'],
      'a deployment column that is not an object with a baseUrl and an account',
    ],
  ];
  it.each(cases)('%s', async (_name, assignments, values, reason) => {
    const { journal, raw, referenceId, warnings, set } = await journalWithRow();
    set(assignments, ...values);
    expect(await journal.get(referenceId)).toBeUndefined();
    expect(await journal.list()).toEqual([]);
    expect(warnings).toEqual([['SqliteJournal: skipped a row that cannot be read', { referenceId, reason }]]);
    raw.close();
    await journal.close();
  });

  it('a reference id that is not a UUID: a row the SDK did not write, named by its first 200 characters', async () => {
    const { journal, raw, referenceId, warnings } = await journalWithRow();
    const foreign = `x${'y'.repeat(300)}`;
    raw
      .prepare(
        `INSERT INTO tap_payment_journal (reference_id, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes)
         SELECT ?, state, product_id, amount, currency, phone_number, fingerprint, created_at, updated_at, send_window_ms, writes FROM tap_payment_journal WHERE reference_id = ?`,
      )
      .run(foreign, referenceId);
    expect((await journal.list()).map((record) => record.referenceId)).toEqual([referenceId]);
    expect(warnings).toEqual([
      [
        'SqliteJournal: skipped a row that cannot be read',
        { referenceId: foreign.slice(0, 200), reason: 'a reference_id that is not a UUID (a row the SDK did not write)' },
      ],
    ]);
    raw.close();
    await journal.close();
  });

  it('is reported once per journal object, however often it is read, and each unreadable row once', async () => {
    const { journal, raw, referenceId, warnings, set } = await journalWithRow();
    const other = globalThis.crypto.randomUUID();
    await journal.insert({ ...INITIATING_RECORD, referenceId: other });
    set('state = ?', 'settled');
    raw
      .prepare(`UPDATE tap_payment_journal SET state = 'settled', version = version + 1, writes = writes + 1 WHERE reference_id = ?`)
      .run(other);
    await journal.get(referenceId);
    await journal.list();
    await journal.get(other);
    await journal.list();
    expect(warnings.map((warning) => (warning[1] as { referenceId: string }).referenceId).sort()).toEqual([referenceId, other].sort());
    raw.close();
    await journal.close();
  });

  it('a logger that throws on the report does not turn the skipped row into a failed read', async () => {
    const warn = vi.fn(() => {
      throw new Error('log sink down');
    });
    const { journal, raw, referenceId, set } = await journalWithRow({}, warn);
    set('state = ?', 'settled');
    await expect(journal.get(referenceId)).resolves.toBeUndefined();
    await expect(journal.list()).resolves.toEqual([]);
    expect(warn).toHaveBeenCalledTimes(1);
    raw.close();
    await journal.close();
  });

  it('a reference id with a UUID inside it, and more before or after, is not a UUID', () => {
    const uuid = '0b8c2f1e-4a7d-4c3b-9e2f-5d6a7b8c9d0e';
    for (const referenceId of [`x${uuid}`, `${uuid}x`]) {
      const report = vi.fn();
      expect(new RowReader(report).read({ reference_id: referenceId, state: 'pending' })).toBeUndefined();
      expect(report.mock.calls).toEqual([
        [expect.objectContaining({ reason: 'a reference_id that is not a UUID (a row the SDK did not write)' })],
      ]);
    }
  });

  it('a reader given no reporter says the skipped row on the console, with its reference id and reason', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(new RowReader(undefined).read({ reference_id: 'not-a-uuid', state: 'pending' })).toBeUndefined();
      expect(warn).toHaveBeenCalledWith(
        'tap-collections-sdk journal: skipped a row that cannot be read (reference_id "not-a-uuid": a reference_id that is not a UUID (a row the SDK did not write))',
      );
    } finally {
      warn.mockRestore();
    }
  });
});

describe('a row read back', () => {
  it('a record written without its optional fields reads back without them (no nulls), the others as written', async () => {
    const { journal, raw, referenceId } = await journalWithRow({ sendWindowMs: undefined });
    const read = await journal.get(referenceId);
    for (const field of [
      'narration',
      'statusText',
      'transactionCode',
      'reason',
      'error',
      'contradiction',
      'deployment',
      'sealedPhoneNumber',
      'sendWindowMs',
    ]) {
      expect(read, field).not.toHaveProperty(field);
    }
    const { sendWindowMs: _window, ...written } = INITIATING_RECORD;
    expect(read).toMatchObject({ ...written, referenceId, version: 1 });
    raw.close();
    await journal.close();
  });

  it('every optional field written reads back as written', async () => {
    const full = {
      narration: 'School fees',
      statusText: 'PENDING',
      transactionCode: 'TX1',
      reason: 'because',
      error: { name: 'ApiError', message: 'boom', status: 500 },
      deployment: { baseUrl: 'https://collections.example.com', account: 'acct-1' },
      sealedPhoneNumber: 'v1.sealed',
    };
    const { journal, raw, referenceId } = await journalWithRow(full);
    expect(await journal.get(referenceId)).toMatchObject({ ...INITIATING_RECORD, ...full, referenceId });
    raw.close();
    await journal.close();
  });

  it('a send window stored as NULL reads as no window known (never a window of 0, which would make the payment decidable at once)', async () => {
    const { journal, raw, referenceId, set } = await journalWithRow();
    set('send_window_ms = ?', null);
    const read = await journal.get(referenceId);
    expect(read?.referenceId).toBe(referenceId);
    expect(read).not.toHaveProperty('sendWindowMs');
    raw.close();
    await journal.close();
  });

  it("PostgreSQL's shapes (jsonb already parsed, timestamptz as a Date) read as SQLite's text does", () => {
    const reported: unknown[] = [];
    const reader = new RowReader((row) => reported.push(row));
    const referenceId = globalThis.crypto.randomUUID();
    const at = new Date('2026-11-21T10:00:00.000Z');
    const record = reader.read({
      reference_id: referenceId,
      state: 'rejected',
      product_id: INITIATING_RECORD.productId,
      amount: '10',
      currency: 'ZMW',
      phone_number: INITIATING_RECORD.phoneNumber,
      narration: null,
      fingerprint: 'f',
      created_at: at,
      updated_at: at,
      status_text: null,
      transaction_code: null,
      reason: null,
      error: { name: 'ApiError', message: 'refused', status: 400 },
      version: 2,
      send_window_ms: 1000,
      contradiction: null,
      deployment: { baseUrl: 'https://collections.example.com', account: 'acct-1' },
      sealed_phone_number: null,
    });
    expect(reported).toEqual([]);
    expect(record).toMatchObject({
      referenceId,
      state: 'rejected',
      amount: 10,
      createdAt: at.toISOString(),
      error: { name: 'ApiError', status: 400 },
      deployment: { baseUrl: 'https://collections.example.com', account: 'acct-1' },
      sendWindowMs: 1000,
    });
  });

  it('a contradiction column that is not JSON reads as no contradiction, the record itself readable', async () => {
    const { journal, raw, referenceId, warnings, set } = await journalWithRow();
    set('contradiction = ?', 'not json {');
    const read = await journal.get(referenceId);
    expect(read?.referenceId).toBe(referenceId);
    expect(read).not.toHaveProperty('contradiction');
    expect(warnings).toEqual([]);
    raw.close();
    await journal.close();
  });
});
