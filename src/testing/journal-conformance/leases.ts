import type { PaymentRecord } from '../../journal/journal.js';
import { expectEqual } from './expect.js';
import { BY, type Check, delay, FINAL_STATES, ids, insert, insertIn, newRecord, settle, uuid } from './kit.js';

/** Leases: who gets which open record, expiry, renewal and release, concurrent owners. */
export const LEASE_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'lease hands open records to one owner, never-leased ones newest first, up to limit, not again to the same owner, and never changes a version',
    async ({ journal }) => {
      const oldest = await insertIn(journal, 'pending');
      await delay(2);
      const middle = await insertIn(journal, 'unknown');
      await delay(2);
      const newest = await insertIn(journal, 'initiating');
      const records = [oldest, middle, newest];
      const owner = uuid();
      // New payments are due first (their first check is the one a customer waits for at the till): a worker that
      // leases only its share must not find them behind payments that never settle.
      const first = await journal.lease({ owner, leaseMs: 60_000, limit: 2 });
      // Which records a limited lease takes is what matters, not the order they are returned in.
      expectEqual(ids(first).sort(), [newest.referenceId, middle.referenceId].sort(), 'first lease (limit 2, never leased: newest first)');
      const second = await journal.lease({ owner, leaseMs: 60_000, limit: 10 });
      expectEqual(ids(second), [oldest.referenceId], 'second lease by the same owner');
      expectEqual(await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 10 }), [], 'lease by another owner while leased');
      expectEqual(await journal.lease({ owner, leaseMs: 60_000, limit: 0 }), [], 'lease with limit 0');
      expectEqual([...(await journal.renew(owner, ids(records), 60_000))].sort(), ids(records).sort(), 'renew of the leases held');
      await journal.release(owner, [middle.referenceId]);
      for (const item of records) {
        const read = await journal.get(item.referenceId);
        expectEqual(
          [read?.version, read?.updatedAt],
          [item.version, item.updatedAt],
          'version and updatedAt after lease, renew and release',
        );
        expectEqual((await journal.history(item.referenceId)).length, item.version, 'events after lease, renew and release');
      }
      await settle(journal, records);
    },
  ],
  [
    'lease never hands out final records',
    async ({ journal }) => {
      const records: PaymentRecord[] = [];
      for (const state of FINAL_STATES) records.push(await insertIn(journal, state));
      const leased = await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 100 });
      const mine = new Set(ids(records));
      expectEqual(leased.filter((item) => mine.has(item.referenceId)).length, 0, 'final records leased');
      if (leased.some((item) => FINAL_STATES.includes(item.state))) throw new Error('lease returned a record in a final state');
      const open = await insert(journal, newRecord());
      const owner = uuid();
      expectEqual(ids(await journal.lease({ owner, leaseMs: 20, limit: 10 })), [open.referenceId], 'lease of an open record');
      await journal.transition(open.referenceId, 1, { state: 'failed', by: BY });
      await journal.release(owner, [open.referenceId]);
      expectEqual(await journal.lease({ owner: uuid(), leaseMs: 60_000, limit: 10 }), [], 'lease after the record became final');
    },
  ],
  [
    'an expired lease is taken over; the old owner cannot renew it',
    async ({ journal }) => {
      const item = await insert(journal, newRecord());
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
      const kept = await insert(journal, newRecord());
      await delay(2);
      const released = await insert(journal, newRecord());
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
      const records = await Promise.all(Array.from({ length: 60 }, () => insert(journal, newRecord())));
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
