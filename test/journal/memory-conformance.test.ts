import { describe, expect, it } from 'vitest';
import { MemoryJournal, type PaymentJournal, type PaymentRecord } from '../../src/index.js';
import { checkPaymentJournal, type JournalCheckResult } from '../../src/testing/index.js';

function failed(results: readonly JournalCheckResult[]): string[] {
  return results.filter((result) => !result.ok).map((result) => result.name);
}

const CAS =
  'transition is a compare-and-set: applied only on the expected version, which it bumps by one, keeping the fields it does not name';
const RACE = 'parallel transitions expecting one version: exactly one applies, the others see its record';
const HISTORY = 'history keeps one event per applied write, oldest first, and none for a refused one';
const CLOCK = 'the journal clock: now() is an ISO 8601 time close to this machine’s, never goes back, and stamps every write';
const INSERT = 'insert stores the record with version 1 and its own times (never the caller’s), and get reads it back whole';
const FINAL = 'a final record never changes, whatever the version a writer expects';
const TEXT = 'stored text and amounts round-trip exactly (emoji, CJK, quotes, SQL, long strings; 10.05, 9999.99)';

/** A store that delegates to a MemoryJournal and breaks one rule. */
/** The check that a takeover's deployment is written into a record without one, and never over one. */
const WRITTEN_ONCE = 'a change naming a deployment writes it into a record that has none, and never replaces one';

function broken(overrides: (inner: MemoryJournal) => Partial<PaymentJournal>, inner = new MemoryJournal()): () => PaymentJournal {
  const store: PaymentJournal = {
    insert: (record) => inner.insert(record),
    transition: (id, version, change) => inner.transition(id, version, change),
    now: () => inner.now(),
    get: (id) => inner.get(id),
    list: (filter) => inner.list(filter),
    history: (id) => inner.history(id),
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
    expect(results.length).toBeGreaterThanOrEqual(18);
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
  it('a store whose counts() does not follow its writes (counted once, at open)', async () => {
    const COUNTS = 'counts() (optional) names every state and moves by exactly what each write changed';
    const inner = new MemoryJournal();
    const frozen = await inner.counts();
    const results = await checkPaymentJournal(broken(() => ({ counts: async () => frozen }), inner));
    expect(failed(results)).toEqual([COUNTS]);
  });

  it('a store that loses its records on reopening', async () => {
    const results = await checkPaymentJournal(() => new MemoryJournal());
    const name = 'a record written is read back after reopening the store, with its history';
    expect(failed(results)).toContain(name);
    expect(results.find((result) => result.name === name)?.error).toMatch(/reopened store/);
  });

  it("a store that does not keep the sender's window (a record read without one would be judged by the longest)", async () => {
    const drop = <T extends PaymentRecord | undefined>(record: T): T => {
      if (record === undefined) return record;
      const { sendWindowMs: _dropped, decidableAt: _derived, ...rest } = record;
      return rest as T;
    };
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => drop(await inner.insert(record)),
        get: async (id) => drop(await inner.get(id)),
        list: async (filter) => (await inner.list(filter)).map(drop),
        transition: async (id, version, change) => {
          const outcome = await inner.transition(id, version, change);
          return outcome.applied ? { applied: true, record: drop(outcome.record) } : { applied: false, record: drop(outcome.record) };
        },
      })),
    );
    expect(failed(results)).toContain(
      "the sender's window is kept: by insert, by a transition that names it, through one that does not, and after reopening",
    );
  });

  it('a store whose transition ignores the expected version (an unconditional update)', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        transition: async (id, _version, change) => {
          // Applies to whatever version is there now: a plain UPDATE … WHERE reference_id = ?.
          for (;;) {
            const current = await inner.get(id);
            if (current === undefined) return { applied: false, record: undefined };
            const outcome = await inner.transition(id, current.version, change);
            if (outcome.applied || outcome.record?.version === current.version) return outcome;
          }
        },
      })),
    );
    expect(failed(results)).toEqual(expect.arrayContaining([CAS, RACE, HISTORY]));
  });

  it('a store whose read-then-write transition lets two racers both apply', async () => {
    const inner = new MemoryJournal();
    const results = await checkPaymentJournal(
      broken(
        () => ({
          transition: async (id, version, change) => {
            // Checks the version, yields, then writes on whatever is there: the race a CAS must close.
            const current = await inner.get(id);
            if (current?.version !== version) return { applied: false, record: current };
            await new Promise((resolve) => setTimeout(resolve, 1));
            const now = (await inner.get(id)) as PaymentRecord;
            return inner.transition(id, now.version, change);
          },
        }),
        inner,
      ),
    );
    expect(failed(results)).toContain(RACE);
  });

  it('a store that changes a final record when the version matches', async () => {
    const finals = new Map<string, PaymentRecord>();
    const results = await checkPaymentJournal(
      broken((inner) => ({
        get: async (id) => finals.get(id) ?? inner.get(id),
        transition: async (id, version, change) => {
          const current = finals.get(id) ?? (await inner.get(id));
          if (current === undefined || current.version !== version) return { applied: false, record: current };
          if (current.state !== 'initiating' && current.state !== 'pending' && current.state !== 'unknown') {
            const next = { ...current, state: change.state, version: current.version + 1 };
            finals.set(id, next);
            return { applied: true, record: next };
          }
          return inner.transition(id, version, change);
        },
      })),
    );
    expect(failed(results)).toContain(FINAL);
  });

  it('a store that writes no history event for a transition', async () => {
    const results = await checkPaymentJournal(broken((inner) => ({ history: async (id) => (await inner.history(id)).slice(0, 1) })));
    expect(failed(results)).toEqual(expect.arrayContaining([HISTORY]));
  });

  it('a store that writes an event for a refused transition too', async () => {
    const refused = new Map<string, { at: string; from: null; to: 'pending'; by: string }[]>();
    const results = await checkPaymentJournal(
      broken((inner) => ({
        transition: async (id, version, change) => {
          const outcome = await inner.transition(id, version, change);
          if (!outcome.applied && outcome.record !== undefined) {
            refused.set(id, [...(refused.get(id) ?? []), { at: outcome.record.updatedAt, from: null, to: 'pending', by: change.by }]);
          }
          return outcome;
        },
        history: async (id) => [...(await inner.history(id)), ...(refused.get(id) ?? [])],
      })),
    );
    expect(failed(results)).toEqual(expect.arrayContaining([HISTORY, FINAL]));
  });

  it('a store whose now() is 10 minutes off the clock that stamps its writes', async () => {
    const results = await checkPaymentJournal(broken(() => ({ now: async () => new Date(Date.now() + 10 * 60_000).toISOString() })));
    expect(failed(results)).toContain(CLOCK);
    expect(results.find((result) => result.name === CLOCK)?.error).toMatch(/not between the journal's now\(\)/);
  });

  it('a store whose clock is in the wrong unit (seconds for milliseconds)', async () => {
    const results = await checkPaymentJournal(() => new MemoryJournal({ now: () => Math.floor(Date.now() / 1000) }));
    expect(failed(results)).toContain(CLOCK);
  });

  it('a store that keeps the times the caller sends (a till’s clock)', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => {
          const stored = await inner.insert(record);
          const caller = record as Partial<PaymentRecord>;
          return stored && caller.createdAt !== undefined
            ? { ...stored, createdAt: caller.createdAt, updatedAt: caller.createdAt }
            : stored;
        },
      })),
    );
    expect(failed(results)).toContain(INSERT);
  });

  it('a store that mangles text it does not expect (normalizes Unicode, trims)', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        get: async (id) => {
          const record = await inner.get(id);
          return record?.narration === undefined ? record : { ...record, narration: record.narration.normalize('NFKC').trim() };
        },
      })),
    );
    expect(failed(results)).toEqual([TEXT]);
  });

  it('a store that stores amounts as 32-bit floats', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        get: async (id) => {
          const record = await inner.get(id);
          return record === undefined ? record : { ...record, amount: Math.fround(record.amount) };
        },
      })),
    );
    expect(failed(results)).toContain(TEXT);
  });

  it('a store that ignores duplicates and overwrites', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => (await inner.insert(record)) ?? (await inner.get(record.referenceId)),
      })),
    );
    expect(failed(results)).toContain('insert refuses a duplicate referenceId and keeps the first record and its history');
    expect(failed(results).some((name) => name.startsWith('concurrent writers'))).toBe(true);
  });

  it('a store that lists newest first and ignores limit', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({ list: async (filter) => (await inner.list({ states: filter?.states })).reverse() })),
    );
    expect(failed(results)).toEqual(
      expect.arrayContaining([
        'list returns records oldest first (createdAt, then referenceId), whatever changed since',
        'list filters by states and honours limit',
      ]),
    );
  });

  it('a store that orders by the last change instead of creation', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        list: async (filter) =>
          (await inner.list(filter)).sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0)),
      })),
    );
    expect(failed(results)).toContain('list returns records oldest first (createdAt, then referenceId), whatever changed since');
  });

  it('a store whose leases are not exclusive and never expire', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        lease: async (request) => (await inner.list({ states: ['initiating', 'pending', 'unknown'] })).slice(0, request.limit),
        renew: async (_owner, ids) => [...ids],
      })),
    );
    const names = failed(results);
    expect(names.some((name) => name.startsWith('lease hands open records to one owner'))).toBe(true);
    expect(names).toContain('an expired lease is taken over; the old owner cannot renew it');
    expect(names).toContain('renew extends only leases the owner holds; release frees them for another owner');
    expect(names.some((name) => name.startsWith('concurrent lease calls'))).toBe(true);
  });

  it('a store that leases the oldest payments first (new payments would wait behind ones that never settle)', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        lease: async (request) => {
          const free = await inner.lease({ ...request, limit: Number.MAX_SAFE_INTEGER });
          const oldestFirst = [...free].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
          await inner.release(
            request.owner,
            oldestFirst.slice(request.limit).map((record) => record.referenceId),
          );
          return oldestFirst.slice(0, request.limit);
        },
      })),
    );
    expect(failed(results).some((name) => name.startsWith('lease hands open records to one owner'))).toBe(true);
  });

  it('a store whose lease bumps the version (a lease is not a change of the payment)', async () => {
    const results = await checkPaymentJournal(
      broken((inner) => ({
        lease: async (request) => {
          const got = await inner.lease(request);
          for (const record of got) await inner.transition(record.referenceId, record.version, { state: record.state, by: 'lease' });
          return got;
        },
      })),
    );
    expect(failed(results).some((name) => name.startsWith('lease hands open records to one owner'))).toBe(true);
  });

  it('a store that leases final records', async () => {
    const all = new MemoryJournal();
    const results = await checkPaymentJournal(
      broken((inner) => ({
        insert: async (record) => (await all.insert(record)) && inner.insert(record),
        transition: async (id, version, change) => {
          await all.transition(id, version, change);
          return inner.transition(id, version, change);
        },
        lease: async (request) => {
          const got = await inner.lease(request);
          const finals = (await all.list({ states: ['failed', 'rejected', 'not-sent', 'successful'] })).slice(0, 1);
          return [...got, ...finals];
        },
      })),
    );
    expect(failed(results)).toContain('lease never hands out final records');
  });

  it('a store whose concurrent lease calls interleave hands one record to two owners', async () => {
    const inner = new MemoryJournal();
    const results = await checkPaymentJournal(
      broken(
        () => ({
          lease: async (request) => {
            // Read, yield, then write: the classic lost update of a lease without a transaction.
            const candidates = await inner.list({ states: ['initiating', 'pending', 'unknown'] });
            await new Promise((resolve) => setTimeout(resolve, 1));
            return candidates.slice(0, request.limit);
          },
        }),
        inner,
      ),
    );
    expect(failed(results).some((name) => name.startsWith('concurrent lease calls'))).toBe(true);
  });

  it('a store that cannot open reports it', async () => {
    const results = await checkPaymentJournal(() => {
      throw new Error('no such database');
    });
    expect(results).toEqual([{ name: 'the store opens', ok: false, error: 'no such database' }]);
  });

  it('a store that does not keep the deployment and the sealed number (written at insert) fails, saying what to keep', async () => {
    const KEPT =
      'the deployment and the sealed number are kept: by insert, get and list, through every transition (a contradiction mark too), after reopening';
    const drop = <T extends PaymentRecord | undefined>(record: T): T => {
      if (record === undefined) return record;
      const { deployment: _deployment, sealedPhoneNumber: _sealed, ...rest } = record;
      return rest as T;
    };
    // A store that keeps them at insert and loses them on the first transition (a row rewritten whole).
    const results = await checkPaymentJournal(
      broken((inner) => ({
        transition: async (id, version, change) => {
          const outcome = await inner.transition(id, version, change);
          return outcome.applied ? { applied: true, record: drop(outcome.record) } : { applied: false, record: drop(outcome.record) };
        },
      })),
    );
    // It loses a deployment a takeover writes the same way.
    expect(failed(results)).toEqual([KEPT, WRITTEN_ONCE]);
    expect(results.find((result) => result.name === KEPT)?.error).toMatch(
      /deployment: expected .*got undefined.*must keep PaymentRecord\.deployment .* and sealedPhoneNumber/,
    );
    const atInsert = await checkPaymentJournal(
      broken((inner) => ({
        insert: async ({ deployment: _deployment, sealedPhoneNumber: _sealed, ...record }) => inner.insert(record),
      })),
    );
    expect(failed(atInsert)).toContain(KEPT);
  });

  it('a store that ignores the deployment a change names, or replaces one a record has, fails, saying why', async () => {
    const ignoring = await checkPaymentJournal(
      broken((inner) => ({ transition: (id, version, { deployment: _ignored, ...change }) => inner.transition(id, version, change) })),
    );
    expect(failed(ignoring)).toEqual([WRITTEN_ONCE]);
    expect(ignoring.find((result) => result.name === WRITTEN_ONCE)?.error).toMatch(
      /account was not read \(account ''\), then a change naming the deployment: account "", expected key:0123456789abcdef \(a store must write it/,
    );
    // A store that writes the named deployment over the record's (a row rewritten from the change).
    const replacing = await checkPaymentJournal(
      broken((inner) => ({
        transition: async (id, version, change) => {
          const outcome = await inner.transition(id, version, change);
          if (!outcome.applied || change.deployment === undefined) return outcome;
          return { applied: true, record: { ...outcome.record, deployment: change.deployment } };
        },
      })),
    );
    expect(failed(replacing)).toEqual([WRITTEN_ONCE]);
    expect(replacing.find((result) => result.name === WRITTEN_ONCE)?.error).toMatch(/expected it kept as .*never replace/);
  });

  it('a store that ignores list({ contradictions: true }) (every record comes back) fails', async () => {
    const FILTER = 'list({ contradictions: true }) returns the marked records only, oldest first, with states and limit applied';
    const results = await checkPaymentJournal(
      broken((inner) => ({ list: ({ contradictions: _ignored, ...filter } = {}) => inner.list(filter) })),
    );
    expect(failed(results)).toEqual([FILTER]);
    expect(results.find((result) => result.name === FILTER)?.error).toMatch(/without a contradiction.*must filter them out itself/);
  });
});
