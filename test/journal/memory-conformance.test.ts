import { describe, expect, it } from 'vitest';
import { MemoryJournal, type PaymentJournal, type PaymentRecord } from '../../src/index.js';
import { checkPaymentJournal, type JournalCheckResult } from '../../src/testing/index.js';

function failed(results: readonly JournalCheckResult[]): string[] {
  return results.filter((result) => !result.ok).map((result) => result.name);
}

/** A store that delegates to a MemoryJournal and breaks one rule. */
function broken(overrides: (inner: MemoryJournal) => Partial<PaymentJournal>): () => PaymentJournal {
  const inner = new MemoryJournal();
  const store: PaymentJournal = {
    insert: (record) => inner.insert(record),
    update: (id, change) => inner.update(id, change),
    get: (id) => inner.get(id),
    list: (filter) => inner.list(filter),
    lease: (request) => inner.lease(request),
    renew: (owner, ids, ms) => inner.renew(owner, ids, ms),
    release: (owner, ids) => inner.release(owner, ids),
    ...overrides(inner),
  };
  return () => store;
}

describe('checkPaymentJournal on MemoryJournal', () => {
  it('passes every check, with the storage shared by every open', async () => {
    const journal = new MemoryJournal();
    const results = await checkPaymentJournal(() => journal);
    expect(results.length).toBeGreaterThanOrEqual(13);
    expect(results.filter((result) => !result.ok)).toEqual([]);
  });

  it('passes again on the same storage (the suite leaves no open record behind)', async () => {
    const journal = new MemoryJournal();
    await checkPaymentJournal(() => journal);
    expect(await journal.list({ states: ['initiating', 'pending', 'unknown'] })).toEqual([]);
    expect(failed(await checkPaymentJournal(() => journal))).toEqual([]);
  });
});

describe('checkPaymentJournal fails broken stores', () => {
  it('a store that loses its records on reopening', async () => {
    const results = await checkPaymentJournal(() => new MemoryJournal());
    expect(failed(results)).toContain('a record written is read back after reopening the store');
    expect(results.find((result) => !result.ok)?.error).toMatch(/reopened store/);
  });

  it('a store that reopens final records', async () => {
    // Deliberately wrong: every update overwrites, final or not.
    const overwritten = new Map<string, PaymentRecord>();
    const results = await checkPaymentJournal(
      broken((inner) => ({
        get: async (id) => overwritten.get(id) ?? inner.get(id),
        update: async (id, change) => {
          const before = overwritten.get(id) ?? (await inner.get(id));
          if (before === undefined) return undefined;
          const next = { ...before, ...change } as PaymentRecord;
          overwritten.set(id, next);
          await inner.update(id, change);
          return next;
        },
      })),
    );
    expect(failed(results)).toContain('final states never reopen or change');
  });

  it('a store that ignores duplicates and overwrites', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => {
          await inner.insert(record);
          return true;
        },
      })),
    );
    expect(failed(results)).toEqual(expect.arrayContaining(['insert refuses a duplicate referenceId and keeps the first record']));
    expect(failed(results).some((name) => name.startsWith('concurrent writers'))).toBe(true);
  });

  it('a store that lists newest first and ignores limit', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({ list: async (filter) => (await inner.list({ states: filter?.states })).reverse() })),
    );
    expect(failed(results)).toEqual(
      expect.arrayContaining([
        'list returns records oldest first (createdAt, then referenceId)',
        'list filters by states and honours limit',
      ]),
    );
  });

  it('a store whose leases are not exclusive and never expire', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        lease: async (request) => (await inner.list({ states: ['initiating', 'pending', 'unknown'] })).slice(0, request.limit),
        renew: async (_owner, ids) => [...ids],
      })),
    );
    const names = failed(results);
    expect(names).toContain('lease hands open records to one owner, oldest first, up to limit, and not again to the same owner');
    expect(names).toContain('an expired lease is taken over; the old owner cannot renew it');
    expect(names).toContain('renew extends only leases the owner holds; release frees them for another owner');
    expect(names.some((name) => name.startsWith('concurrent lease calls'))).toBe(true);
  });

  it('a store that leases final records', async () => {
    const all = new MemoryJournal();
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => (await all.insert(record)) && inner.insert(record),
        lease: async (request) => {
          const got = await inner.lease(request);
          const finals = (await all.list({ states: ['failed'] })).slice(0, 1);
          return [...got, ...finals];
        },
      })),
    );
    expect(failed(results)).toContain('lease never hands out final records');
  });

  it('a store whose concurrent lease calls interleave hands one record to two owners', async () => {
    const inner = new MemoryJournal();
    const results = await checkPaymentJournal(
      broken(() => ({
        lease: async (request) => {
          // Read, yield, then write: the classic lost update of a lease without a transaction.
          const candidates = await inner.list({ states: ['initiating', 'pending', 'unknown'] });
          await new Promise((resolve) => setTimeout(resolve, 1));
          return candidates.slice(0, request.limit);
        },
      })),
    );
    expect(failed(results).some((name) => name.startsWith('concurrent lease calls'))).toBe(true);
  });

  it('a store that cannot open reports it', async () => {
    const results = await checkPaymentJournal(() => {
      throw new Error('no such database');
    });
    expect(results).toEqual([{ name: 'the store opens', ok: false, error: 'no such database' }]);
  });
});
