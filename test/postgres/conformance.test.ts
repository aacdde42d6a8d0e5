import { afterAll, describe, expect, inject, it } from 'vitest';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { checkPaymentJournal } from '../../src/testing/index.ts';

const url = inject('postgresUrl');
const opened: PostgresJournal[] = [];
afterAll(() => Promise.all(opened.map((journal) => journal.close())));

describe('checkPaymentJournal on PostgresJournal (a real server)', () => {
  it('passes every check; every open() is a new pool on the same table', async () => {
    const tableName = `conformance_${process.pid}`;
    const results = await checkPaymentJournal(() => {
      const journal = new PostgresJournal({ connectionString: url, tableName });
      opened.push(journal);
      return journal;
    });
    expect(results.length).toBeGreaterThanOrEqual(18);
    expect(results.filter((result) => !result.ok)).toEqual([]);
    // Again on the same table: the suite left nothing open behind it.
    const again = await checkPaymentJournal(() => {
      const journal = new PostgresJournal({ connectionString: url, tableName });
      opened.push(journal);
      return journal;
    });
    expect(again.filter((result) => !result.ok)).toEqual([]);
  }, 60_000);
});
