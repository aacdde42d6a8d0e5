/**
 * `checkPaymentJournal`: the conformance checks every payment journal passes (the shipped stores in this
 * package's own tests, and a store of your own in yours).
 *
 * The file is longer than most (one check per behaviour of the interface, each small): keeping them in one
 * place keeps the suite readable as a specification.
 *
 * @module
 */
import type { PaymentJournal, PaymentRecord, PaymentState } from '../journal/journal.js';

/** The outcome of one conformance check. */
export interface JournalCheckResult {
  /** What the check proves, in a sentence. */
  readonly name: string;
  /** True when the store behaved as the interface requires. */
  readonly ok: boolean;
  /** What went wrong, when `ok` is false. */
  readonly error?: string;
}

/**
 * Opens the store under test. The suite calls it more than once (at least twice) and every call must open
 * the **same storage**: that is how it checks that a record written is read back after reopening (a new
 * `SqliteJournal` on the same file, a new pool on the same database). The storage should hold no open
 * records when the suite starts (a fresh file or schema is simplest); every record the suite writes is
 * left in a final state, so the suite can run again on the same storage.
 */
export type OpenPaymentJournal = () => PaymentJournal | Promise<PaymentJournal>;

interface CheckContext {
  /** The journal opened first. */
  readonly journal: PaymentJournal;
  /** Opens the storage again. */
  readonly reopen: () => Promise<PaymentJournal>;
}

type Check = (context: CheckContext) => Promise<void>;

const FINAL_STATES: readonly PaymentState[] = ['rejected', 'not-sent', 'successful', 'failed'];
const OPEN_STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown'];
// Records of the suite are dated in 2001: older than anything a real journal holds, so "oldest first" is testable.
const EPOCH = Date.UTC(2001, 0, 1);
let counter = 0;

/**
 * Runs every conformance check against the store that `openJournal` opens (see {@link OpenPaymentJournal})
 * and resolves with one result per check, in order. It never rejects for a failing store: a check that throws
 * is reported with `ok: false` and the message. Checks run one after another; leases are checked with leases of
 * a few tens of milliseconds, so the whole suite takes well under a few seconds on a local store.
 *
 * ```ts
 * const results = await checkPaymentJournal(() => new SqliteJournal(file));
 * expect(results.filter((result) => !result.ok)).toEqual([]);
 * ```
 */
export async function checkPaymentJournal(openJournal: OpenPaymentJournal): Promise<JournalCheckResult[]> {
  const opened: PaymentJournal[] = [];
  const reopen = async () => {
    const journal = await openJournal();
    opened.push(journal);
    return journal;
  };
  const results: JournalCheckResult[] = [];
  let journal: PaymentJournal;
  try {
    journal = await reopen();
  } catch (error) {
    return [{ name: 'the store opens', ok: false, error: describe(error) }];
  }
  for (const [name, check] of CHECKS) {
    try {
      await check({ journal, reopen });
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: describe(error) });
    }
  }
  // The same object may come back from every open (a memory store): close each once.
  for (const store of new Set(opened)) {
    try {
      await store.close?.();
    } catch {
      // A store that cannot close has still answered every check.
    }
  }
  return results;
}

const CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'insert writes a record and get reads it back whole',
    async ({ journal }) => {
      const full = record({ narration: 'Till 3', statusText: 'pending', error: { name: 'TimeoutError' } });
      const bare = record();
      expectEqual(await journal.insert(full), true, 'insert of a new record');
      expectEqual(await journal.insert(bare), true, 'insert of a new record');
      expectRecord(await journal.get(full.referenceId), full, 'get');
      expectRecord(await journal.get(bare.referenceId), bare, 'get of a record without optional fields');
      expectEqual(await journal.get(uuid()), undefined, 'get of an unknown referenceId');
      await settle(journal, [full, bare]);
    },
  ],
  [
    'insert refuses a duplicate referenceId and keeps the first record',
    async ({ journal }) => {
      const first = record({ amount: 10 });
      await journal.insert(first);
      const second = { ...record({ amount: 99, state: 'pending' }), referenceId: first.referenceId };
      expectEqual(await journal.insert(second), false, 'insert of a duplicate');
      expectRecord(await journal.get(first.referenceId), first, 'the record after a duplicate insert');
      await settle(journal, [first]);
    },
  ],
  [
    'update applies a change, keeps the fields it does not name, and resolves with the stored record',
    async ({ journal }) => {
      const initial = record({ narration: 'n', error: { name: 'TimeoutError' } });
      await journal.insert(initial);
      const change = { state: 'pending', updatedAt: at(5), statusText: 'pending' } as const;
      const expected = { ...initial, ...change };
      expectRecord(await journal.update(initial.referenceId, change), expected, 'update result');
      expectRecord(await journal.get(initial.referenceId), expected, 'get after update');
      const settled = { state: 'successful', updatedAt: at(6), statusText: 'successful', transactionCode: 'T1', reason: 'ok' } as const;
      expectRecord(await journal.update(initial.referenceId, settled), { ...expected, ...settled }, 'update to a final state');
      expectEqual(await journal.update(uuid(), change), undefined, 'update of an unknown referenceId');
      expectEqual(await journal.get(uuid()), undefined, 'update of an unknown referenceId creates nothing');
    },
  ],
  [
    'final states never reopen or change',
    async ({ journal }) => {
      for (const state of FINAL_STATES) {
        const final = record({
          state,
          statusText: state,
          error: state === 'rejected' ? { name: 'BadRequestError', status: 400 } : undefined,
        });
        await journal.insert(final);
        for (const next of [...OPEN_STATES, ...FINAL_STATES]) {
          const after = await journal.update(final.referenceId, {
            state: next,
            updatedAt: at(9),
            statusText: 'changed',
            reason: 'changed',
          });
          expectRecord(after, final, `update of a ${state} record to ${next} resolves with the unchanged record`);
        }
        expectRecord(await journal.get(final.referenceId), final, `a ${state} record after updates`);
      }
    },
  ],
  [
    'list returns records oldest first (createdAt, then referenceId)',
    async ({ journal }) => {
      const sorted = Array.from({ length: 6 }, () => uuid()).sort();
      // Two share a createdAt: referenceId breaks the tie. Inserted out of order.
      const records = [record({ createdAt: at(3), referenceId: sorted[4] }), record({ createdAt: at(1), referenceId: sorted[5] })];
      records.push(record({ createdAt: at(3), referenceId: sorted[0] }), record({ createdAt: at(2), referenceId: sorted[3] }));
      records.push(record({ createdAt: at(0), referenceId: sorted[1] }), record({ createdAt: at(4), referenceId: sorted[2] }));
      for (const item of records) await journal.insert(item);
      const mine = new Set(sorted);
      const listed = (await journal.list()).filter((item) => mine.has(item.referenceId)).map((item) => item.referenceId);
      expectEqual(listed, [sorted[1], sorted[5], sorted[3], sorted[0], sorted[4], sorted[2]], 'order of list()');
      const all = await journal.list();
      expectSorted(all, 'list()');
      await settle(journal, records);
    },
  ],
  [
    'list filters by states and honours limit',
    async ({ journal }) => {
      const states: PaymentState[] = ['initiating', 'pending', 'unknown', 'pending', 'initiating', 'pending'];
      const records = states.map((state, index) => record({ state, createdAt: at(index) }));
      for (const item of records) await journal.insert(item);
      const mine = new Set(records.map((item) => item.referenceId));
      const pending = await journal.list({ states: ['pending'] });
      expectEqual(
        pending.filter((item) => mine.has(item.referenceId)).map((item) => item.referenceId),
        records.filter((item) => item.state === 'pending').map((item) => item.referenceId),
        "list({ states: ['pending'] })",
      );
      if (pending.some((item) => item.state !== 'pending')) throw new Error("list({ states: ['pending'] }) returned another state");
      const two = await journal.list({ states: ['initiating', 'unknown'] });
      if (two.some((item) => item.state !== 'initiating' && item.state !== 'unknown'))
        throw new Error('list with two states returned a third');
      expectEqual(two.filter((item) => mine.has(item.referenceId)).length, 3, 'records in list of two states');
      const open = await journal.list({ states: ['initiating', 'pending', 'unknown'] });
      const limited = await journal.list({ states: ['initiating', 'pending', 'unknown'], limit: 2 });
      expectEqual(ids(limited), ids(open.slice(0, 2)), 'list with limit: 2 is the first two of the same list');
      expectEqual(ids(await journal.list({ limit: 1 })), ids((await journal.list()).slice(0, 1)), 'list({ limit: 1 })');
      expectEqual(await journal.list({ states: [] }), [], 'list({ states: [] })');
      await settle(journal, records);
    },
  ],
  [
    'concurrent writers: parallel inserts all land, one insert of a duplicated id wins, parallel updates all apply',
    async ({ journal }) => {
      const records = Array.from({ length: 100 }, (_, index) => record({ createdAt: at(index % 7) }));
      const inserted = await Promise.all(records.map((item) => journal.insert(item)));
      expectEqual(inserted.filter(Boolean).length, 100, 'parallel inserts that resolved true');
      const contested = record();
      const racers = Array.from({ length: 20 }, (_, index) => ({ ...contested, amount: index + 1 }));
      const wins = await Promise.all(racers.map((item) => journal.insert(item)));
      expectEqual(wins.filter(Boolean).length, 1, 'parallel inserts of one referenceId that resolved true');
      const winner = racers[wins.indexOf(true)];
      expectRecord(await journal.get(contested.referenceId), winner as PaymentRecord, 'the record of the winning insert');
      await Promise.all(
        records.map((item, index) =>
          journal.update(item.referenceId, { state: 'pending', updatedAt: at(100 + index), statusText: `s${index}` }),
        ),
      );
      const read = await Promise.all(records.map((item) => journal.get(item.referenceId)));
      read.forEach((item, index) => {
        if (item?.state !== 'pending' || item.statusText !== `s${index}`) throw new Error(`parallel update ${index} was lost`);
      });
      // A race between a final and an open update of one record: once final, it stays final.
      const raced = record();
      await journal.insert(raced);
      const changes = Array.from({ length: 10 }, (_, index) =>
        journal.update(raced.referenceId, { state: index === 4 ? 'successful' : 'pending', updatedAt: at(200 + index) }),
      );
      await Promise.all(changes);
      expectEqual((await journal.get(raced.referenceId))?.state, 'successful', 'state after racing updates');
      await settle(journal, [...records, contested]);
    },
  ],
  [
    'a record written is read back after reopening the store',
    async ({ journal, reopen }) => {
      const written = record({ narration: 'reopen', statusText: 'pending', state: 'pending' });
      await journal.insert(written);
      const updated = await journal.update(written.referenceId, { state: 'unknown', updatedAt: at(7), error: { name: 'TimeoutError' } });
      const again = await reopen();
      expectRecord(await again.get(written.referenceId), updated as PaymentRecord, 'get on the reopened store');
      const listed = (await again.list({ states: ['unknown'] })).find((item) => item.referenceId === written.referenceId);
      expectRecord(listed, updated as PaymentRecord, 'list on the reopened store');
      await settle(again, [written]);
      expectEqual((await journal.get(written.referenceId))?.state, 'failed', 'a write on the reopened store, read on the first');
    },
  ],
  [
    'lease hands open records to one owner, oldest first, up to limit, and not again to the same owner',
    async ({ journal }) => {
      const newest = record({ createdAt: at(2) });
      const oldest = record({ createdAt: at(0), state: 'pending' });
      const middle = record({ createdAt: at(1), state: 'unknown' });
      const records = [newest, oldest, middle];
      for (const item of records) await journal.insert(item);
      const owner = uuid();
      const first = await journal.lease({ owner, leaseMs: 60_000, limit: 2 });
      expectEqual(ids(first), [oldest.referenceId, middle.referenceId], 'first lease (limit 2, oldest first)');
      const second = await journal.lease({ owner, leaseMs: 60_000, limit: 10 });
      expectEqual(ids(second), [newest.referenceId], 'second lease by the same owner');
      expectEqual(await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 10 }), [], 'lease by another owner while leased');
      expectEqual(await journal.lease({ owner, leaseMs: 60_000, limit: 0 }), [], 'lease with limit 0');
      await settle(journal, records);
    },
  ],
  [
    'lease never hands out final records',
    async ({ journal }) => {
      const records = FINAL_STATES.map((state) => record({ state }));
      for (const item of records) await journal.insert(item);
      const leased = await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 100 });
      const mine = new Set(ids(records));
      expectEqual(leased.filter((item) => mine.has(item.referenceId)).length, 0, 'final records leased');
      if (leased.some((item) => FINAL_STATES.includes(item.state))) throw new Error('lease returned a record in a final state');
      const open = record();
      await journal.insert(open);
      const owner = uuid();
      expectEqual(ids(await journal.lease({ owner, leaseMs: 20, limit: 10 })), [open.referenceId], 'lease of an open record');
      await journal.update(open.referenceId, { state: 'failed', updatedAt: at(3) });
      await journal.release(owner, [open.referenceId]);
      expectEqual(await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 10 }), [], 'lease after the record became final');
    },
  ],
  [
    'an expired lease is taken over; the old owner cannot renew it',
    async ({ journal }) => {
      const item = record();
      await journal.insert(item);
      const [first, second] = [uuid(), uuid()];
      expectEqual(ids(await journal.lease({ owner: first, leaseMs: 40, limit: 1 })), [item.referenceId], 'first lease');
      expectEqual(await journal.lease({ owner: second, leaseMs: 60_000, limit: 1 }), [], 'lease before expiry');
      await delay(80);
      expectEqual(ids(await journal.lease({ owner: second, leaseMs: 60_000, limit: 1 })), [item.referenceId], 'lease after expiry');
      expectEqual(await journal.renew(first, [item.referenceId], 60_000), [], 'renew by the owner whose lease was taken');
      await journal.release(first, [item.referenceId]);
      expectEqual(await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 1 }), [], 'release by a former owner frees nothing');
      await settle(journal, [item]);
    },
  ],
  [
    'renew extends only leases the owner holds; release frees them for another owner',
    async ({ journal }) => {
      const [kept, released] = [record({ createdAt: at(0) }), record({ createdAt: at(1) })];
      await journal.insert(kept);
      await journal.insert(released);
      const owner = uuid();
      expectEqual((await journal.lease({ owner, leaseMs: 60, limit: 2 })).length, 2, 'records leased');
      const renewed = await journal.renew(owner, [kept.referenceId, released.referenceId, uuid()], 60_000);
      expectEqual([...renewed].sort(), [kept.referenceId, released.referenceId].sort(), 'renewed ids (an unknown id is not)');
      expectEqual(await journal.renew(uuid(), [kept.referenceId], 60_000), [], 'renew by an owner that holds nothing');
      await journal.release(owner, [released.referenceId, uuid()]);
      await delay(100);
      // The renewed lease outlives its first expiry; the released record is free at once.
      const other = uuid();
      expectEqual(ids(await journal.lease({ owner: other, leaseMs: 60_000, limit: 10 })), [released.referenceId], 'lease by another owner');
      expectEqual(await journal.renew(owner, [kept.referenceId], 60_000), [kept.referenceId], 'renew of a lease still held');
      await settle(journal, [kept, released]);
    },
  ],
  [
    'concurrent lease calls from several owners (and a reopened store) never hand one record to two owners',
    async ({ journal, reopen }) => {
      const records = Array.from({ length: 60 }, (_, index) => record({ createdAt: at(index) }));
      for (const item of records) await journal.insert(item);
      const other = await reopen();
      const owners = Array.from({ length: 8 }, () => uuid());
      const rounds = await Promise.all(
        owners.flatMap((owner, index) =>
          [0, 1, 2].map(() =>
            (index % 2 === 0 ? journal : other).lease({ owner, leaseMs: 60_000, limit: 4 }).then((got) => ({ owner, got })),
          ),
        ),
      );
      const holder = new Map<string, string>();
      for (const { owner, got } of rounds) {
        for (const item of got) {
          const previous = holder.get(item.referenceId);
          if (previous !== undefined && previous !== owner) throw new Error(`record ${item.referenceId} leased to two owners`);
          if (previous === owner) throw new Error(`record ${item.referenceId} leased twice to one owner`);
          holder.set(item.referenceId, owner);
        }
      }
      expectEqual(holder.size, 60, 'records leased across 24 calls of limit 4 (96 slots)');
      await settle(journal, records);
    },
  ],
];

function record(fields: Partial<Record<keyof PaymentRecord, unknown>> = {}): PaymentRecord {
  const createdAt = (fields.createdAt as string | undefined) ?? at(0);
  const base: Record<string, unknown> = {
    referenceId: uuid(),
    state: 'initiating',
    productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
    amount: 25.5,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: `fp-${++counter}`,
    createdAt,
    updatedAt: createdAt,
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) base[key] = value;
  }
  return base as unknown as PaymentRecord;
}

/** Moves the check's records to a final state so later checks (and later runs) never lease them. */
async function settle(journal: PaymentJournal, records: readonly PaymentRecord[]): Promise<void> {
  for (const item of records) await journal.update(item.referenceId, { state: 'failed', updatedAt: at(999) });
}

function at(offsetMs: number): string {
  return new Date(EPOCH + offsetMs).toISOString();
}

function uuid(): string {
  return globalThis.crypto.randomUUID();
}

function ids(records: readonly PaymentRecord[]): string[] {
  return records.map((item) => item.referenceId);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function expectSorted(records: readonly PaymentRecord[], what: string): void {
  for (let index = 1; index < records.length; index++) {
    const [a, b] = [records[index - 1] as PaymentRecord, records[index] as PaymentRecord];
    if (a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.referenceId > b.referenceId)) {
      throw new Error(`${what} is not oldest first at position ${index}`);
    }
  }
}

/** Compares a stored record with the expected one, field by field; an absent field equals `undefined`, never `null`. */
function expectRecord(actual: PaymentRecord | undefined, expected: PaymentRecord, what: string): void {
  expectEqual(actual === undefined ? undefined : normalize(actual), normalize(expected), what);
}

function normalize(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(normalize);
  const entries = Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries.map(([key, field]) => [key, normalize(field)]));
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  const [a, e] = [JSON.stringify(normalize(actual)), JSON.stringify(normalize(expected))];
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
