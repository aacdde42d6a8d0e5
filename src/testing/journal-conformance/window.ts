import { sendWindowOf } from '../../journal/journal.js';
import { expectBetween, expectEqual, expectLater, expectTime } from './expect.js';
import { BY, type Check, CLOCK_BOUND_MS, delay, GRACE_MS, insert, newRecord, plus, settle } from './kit.js';

/** The journal's clock, `decidableAt` and the sender's window. */
export const WINDOW_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'the journal clock: now() is an ISO 8601 time close to this machine’s, never goes back, and stamps every write',
    async ({ journal }) => {
      const readings: string[] = [];
      for (let index = 0; index < 5; index++) readings.push(await journal.now());
      for (const reading of readings) expectTime(reading, 'now()');
      for (let index = 1; index < readings.length; index++)
        expectLater(readings[index] as string, readings[index - 1] as string, 'a later now()');
      const skew = Math.abs(Date.parse(readings[0] as string) - Date.now());
      if (skew > CLOCK_BOUND_MS)
        throw new Error(`now() is ${Math.round(skew / 1000)} s from this machine's clock (more than ${CLOCK_BOUND_MS / 60_000} min)`);
      const item = newRecord();
      const t0 = await journal.now();
      const stored = await insert(journal, item);
      const t1 = await journal.now();
      await delay(2);
      const moved = await journal.transition(item.referenceId, 1, { state: 'pending', by: BY });
      const t2 = await journal.now();
      if (!moved.applied) throw new Error('a transition on the version just read was not applied');
      expectBetween(stored.createdAt, t0, t1, 'createdAt stamped by insert');
      expectBetween(moved.record.updatedAt, t1, t2, 'updatedAt stamped by transition');
      await settle(journal, [item]);
    },
  ],
  [
    'decidableAt: an initiating or unknown record says when a not-sent verdict is possible (updatedAt + sendWindowMs + 10 s)',
    async ({ journal }) => {
      const item = newRecord({ sendWindowMs: 106_000 });
      const stored = await insert(journal, item);
      expectEqual(stored.decidableAt, plus(stored.updatedAt, 106_000 + GRACE_MS), 'decidableAt of an initiating record');
      const unknown = await journal.transition(item.referenceId, 1, { state: 'unknown', by: BY, sendWindowMs: 46_000 });
      if (!unknown.applied) throw new Error('a transition to unknown was not applied');
      expectEqual(unknown.record.sendWindowMs, 46_000, 'sendWindowMs after a transition that names it');
      expectEqual(unknown.record.decidableAt, plus(unknown.record.updatedAt, 46_000 + GRACE_MS), 'decidableAt of an unknown record');
      expectEqual((await journal.get(item.referenceId))?.decidableAt, unknown.record.decidableAt, 'decidableAt read by get');
      const listed = (await journal.list({ states: ['unknown'] })).find((record) => record.referenceId === item.referenceId);
      expectEqual(listed?.decidableAt, unknown.record.decidableAt, 'decidableAt read by list');
      const pending = await journal.transition(item.referenceId, 2, { state: 'pending', by: BY });
      expectEqual(pending.record?.decidableAt, undefined, 'decidableAt of a pending record');
      expectEqual(pending.record?.sendWindowMs, 46_000, 'sendWindowMs kept by a transition that does not name it');
      // evidence-records: a record without a window is judged by the longest one possible: no age proves it unsent.
      const bare = await insert(journal, newRecord());
      expectEqual(bare.decidableAt, undefined, 'decidableAt of a record without sendWindowMs (its window is unbounded)');
      expectEqual(sendWindowOf(bare), Number.POSITIVE_INFINITY, 'the window of a record inserted without one');
      await settle(journal, [item, bare]);
    },
  ],
  [
    // evidence-records: a store that loses the window would let a push still in flight be declared unsent.
    "the sender's window is kept: by insert, by a transition that names it, through one that does not, and after reopening",
    async ({ journal, reopen }) => {
      const item = newRecord({ sendWindowMs: 123_456 });
      expectEqual((await insert(journal, item)).sendWindowMs, 123_456, 'sendWindowMs of the inserted record');
      expectEqual((await journal.get(item.referenceId))?.sendWindowMs, 123_456, 'sendWindowMs read by get');
      const resent = await journal.transition(item.referenceId, 1, { state: 'initiating', by: BY, sendWindowMs: 7_890 });
      expectEqual(resent.record?.sendWindowMs, 7_890, 'sendWindowMs after a transition that names it');
      const unknown = await journal.transition(item.referenceId, 2, { state: 'unknown', by: BY, error: { name: 'TimeoutError' } });
      expectEqual(unknown.record?.sendWindowMs, 7_890, 'sendWindowMs kept by a transition that does not name it');
      const again = await reopen();
      expectEqual((await again.get(item.referenceId))?.sendWindowMs, 7_890, 'sendWindowMs on the reopened store');
      const listed = (await again.list({ states: ['unknown'] })).find((record) => record.referenceId === item.referenceId);
      expectEqual(listed?.sendWindowMs, 7_890, 'sendWindowMs read by list');
      await settle(again, [item]);
    },
  ],
];
