import type { NewPaymentRecord, PaymentChange, PaymentEvent, PaymentRecord } from '../../journal/journal.js';
import { expectBetween, expectEqual, expectLater, expectRecord, expectTime } from './expect.js';
import { BY, type Check, delay, FINAL_STATES, insert, newRecord, OPEN_STATES, settle, stamped, uuid } from './kit.js';

/** Writes: insert, the compare-and-set transition, final records and contradictions, concurrent writers, history. */
export const WRITE_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'insert stores the record with version 1 and its own times (never the caller’s), and get reads it back whole',
    async ({ journal }) => {
      const full = newRecord({ narration: 'Till 3', statusText: 'pending', error: { name: 'TimeoutError' }, sendWindowMs: 106_000 });
      const bare = newRecord();
      for (const item of [full, bare]) {
        // A caller's times (a till's clock, minutes off) must not be kept: the journal stamps its own.
        const withCallerTimes = { ...item, createdAt: '2001-01-01T00:00:00.000Z', updatedAt: '2001-01-01T00:00:00.000Z', version: 7 };
        const before = await journal.now();
        const stored = await journal.insert(withCallerTimes as NewPaymentRecord);
        const after = await journal.now();
        if (stored === undefined) throw new Error('insert of a new record resolved with undefined');
        expectTime(stored.createdAt, 'createdAt');
        expectEqual(stored.updatedAt, stored.createdAt, 'updatedAt of a new record (equal to createdAt)');
        expectBetween(stored.createdAt, before, after, 'createdAt of a new record, between two readings of now()');
        expectRecord(stored, stamped(item, stored.createdAt, 1), 'the record insert resolves with');
        expectRecord(await journal.get(item.referenceId), stored, 'get after insert');
      }
      expectEqual(await journal.get(uuid()), undefined, 'get of an unknown referenceId');
      expectEqual(await journal.history(uuid()), [], 'history of an unknown referenceId');
      await settle(journal, [full, bare]);
    },
  ],
  [
    'insert refuses a duplicate referenceId and keeps the first record and its history',
    async ({ journal }) => {
      const first = newRecord({ amount: 10 });
      const stored = await insert(journal, first);
      const second = { ...newRecord({ amount: 99, state: 'pending' }), referenceId: first.referenceId };
      expectEqual(await journal.insert(second), undefined, 'insert of a duplicate');
      expectRecord(await journal.get(first.referenceId), stored, 'the record after a duplicate insert');
      expectEqual((await journal.history(first.referenceId)).length, 1, 'events after a duplicate insert');
      await settle(journal, [first]);
    },
  ],
  [
    'transition is a compare-and-set: applied only on the expected version, which it bumps by one, keeping the fields it does not name',
    async ({ journal }) => {
      const initial = newRecord({ narration: 'n', error: { name: 'TimeoutError' }, sendWindowMs: 5000 });
      const inserted = await insert(journal, initial);
      await delay(2);
      const change = { state: 'pending', by: BY, statusText: 'pending', requestId: 'req-1' } as const;
      const first = await journal.transition(initial.referenceId, 1, change);
      if (!first.applied) throw new Error('a transition on the version just read was not applied');
      const { requestId: _requestId, by: _by, ...fields } = change;
      const expected = { ...inserted, ...fields, version: 2, updatedAt: first.record.updatedAt, decidableAt: undefined };
      expectRecord(first.record, expected, 'the record a transition resolves with');
      expectLater(first.record.updatedAt, inserted.updatedAt, 'updatedAt after a transition');
      expectRecord(await journal.get(initial.referenceId), first.record, 'get after a transition');

      for (const stale of [1, 3, 0]) {
        const refused = await journal.transition(initial.referenceId, stale, { state: 'unknown', by: BY, reason: 'stale' });
        expectEqual(refused.applied, false, `a transition expecting version ${stale} of a record at version 2`);
        expectRecord(refused.record, first.record, `the record a refused transition (version ${stale}) resolves with`);
      }
      expectRecord(await journal.get(initial.referenceId), first.record, 'the record after refused transitions');

      const settled = { state: 'successful', by: BY, statusText: 'successful', transactionCode: 'T1', reason: 'ok' } as const;
      const second = await journal.transition(initial.referenceId, 2, settled);
      if (!second.applied) throw new Error('a transition to a final state on the version just read was not applied');
      const { by: _by2, ...settledFields } = settled;
      expectRecord(
        second.record,
        { ...first.record, ...settledFields, version: 3, updatedAt: second.record.updatedAt },
        'a transition to a final state',
      );
      expectLater(second.record.updatedAt, first.record.updatedAt, 'updatedAt after a second transition');

      const missing = uuid();
      expectEqual(
        await journal.transition(missing, 1, change),
        { applied: false, record: undefined },
        'a transition of an unknown referenceId',
      );
      expectEqual(await journal.get(missing), undefined, 'a transition of an unknown referenceId creates nothing');
      expectEqual(await journal.history(missing), [], 'a transition of an unknown referenceId writes no event');
    },
  ],
  [
    'a final record never changes, whatever the version a writer expects',
    async ({ journal }) => {
      for (const state of FINAL_STATES) {
        const item = newRecord();
        await insert(journal, item);
        const closed = await journal.transition(item.referenceId, 1, {
          state,
          by: BY,
          statusText: state,
          ...(state === 'rejected' ? { error: { name: 'BadRequestError', status: 400 } } : {}),
        });
        if (!closed.applied) throw new Error(`a transition to ${state} was not applied`);
        for (const next of [...OPEN_STATES, ...FINAL_STATES]) {
          for (const version of [1, 2, 3]) {
            const after = await journal.transition(item.referenceId, version, {
              state: next,
              by: BY,
              statusText: 'changed',
              reason: 'changed',
            });
            expectEqual(after.applied, false, `a transition of a ${state} record (version 2) to ${next}, expecting version ${version}`);
            expectRecord(after.record, closed.record, `the record a refused transition of a ${state} record resolves with`);
          }
        }
        expectRecord(await journal.get(item.referenceId), closed.record, `a ${state} record after transitions`);
        expectEqual((await journal.history(item.referenceId)).length, 2, `events of a ${state} record after refused transitions`);
      }
    },
  ],
  [
    // evidence-records: a contradiction by the service is kept on the record, never silently dropped.
    "a final record takes one write: the service's contradicting answer (same state, version bumped, event kept), nothing else",
    async ({ journal, reopen }) => {
      const item = newRecord();
      await insert(journal, item);
      const closed = await journal.transition(item.referenceId, 1, { state: 'failed', by: BY, statusText: 'failed' });
      if (!closed.applied) throw new Error('a transition to failed was not applied');
      const answer = { statusText: 'successful', requestId: 'req-contradiction-1' };
      const marked = await journal.transition(item.referenceId, 2, { state: 'failed', by: BY, contradiction: answer });
      expectEqual(marked.applied, true, 'a contradiction mark on a failed record, expecting its version');
      const record = marked.record as PaymentRecord;
      expectEqual(
        [record.state, record.version, record.statusText],
        ['failed', 3, 'failed'],
        'state, version and statusText after the mark',
      );
      expectEqual(record.contradiction, { at: record.updatedAt, ...answer, by: BY }, 'the contradiction kept');
      expectRecord(await (await reopen()).get(item.referenceId), record, 'the marked record, read on a reopened store');
      expectEqual(
        (await journal.history(item.referenceId)).at(-1),
        { at: record.updatedAt, from: 'failed', to: 'failed', statusText: 'successful', requestId: answer.requestId, by: BY },
        "the mark's event",
      );
      const refused: [number, PaymentChange][] = [
        [3, { state: 'successful', by: BY, contradiction: answer }],
        [3, { state: 'failed', by: BY, statusText: 'changed' }],
        [2, { state: 'failed', by: BY, contradiction: { statusText: 'pending' } }],
      ];
      for (const [version, change] of refused) {
        const after = await journal.transition(item.referenceId, version, change);
        expectEqual(after.applied, false, `${JSON.stringify(change)} on a marked failed record, expecting version ${version}`);
      }
      expectRecord(await journal.get(item.referenceId), record, 'the marked record after refused changes');
      const open = newRecord();
      await insert(journal, open);
      const onOpen = await journal.transition(open.referenceId, 1, { state: 'initiating', by: BY, contradiction: answer });
      expectEqual(onOpen.applied, false, 'a contradiction mark on an open record');
      expectEqual((await journal.get(open.referenceId))?.contradiction, undefined, 'an open record after a refused mark');
      await settle(journal, [open]);
    },
  ],
  [
    'parallel transitions expecting one version: exactly one applies, the others see its record',
    async ({ journal, reopen }) => {
      const other = await reopen();
      for (const round of [0, 1, 2]) {
        const item = newRecord();
        await insert(journal, item);
        const racers = Array.from({ length: 20 }, (_, index) =>
          (index % 2 === 0 ? journal : other).transition(item.referenceId, 1, {
            state: round === 1 && index % 3 === 0 ? 'successful' : 'pending',
            by: `${BY}:${index}`,
            statusText: `s${index}`,
          }),
        );
        const outcomes = await Promise.all(racers);
        const winners = outcomes.filter((outcome) => outcome.applied);
        expectEqual(winners.length, 1, `transitions applied of 20 racing on version 1 (round ${round})`);
        const winner = winners[0]?.record as PaymentRecord;
        expectEqual(winner.version, 2, 'version of the winning transition');
        for (const outcome of outcomes) {
          if (!outcome.applied && outcome.record?.version !== 2) {
            throw new Error(`a losing transition resolved with version ${outcome.record?.version}, not the winner's 2`);
          }
        }
        expectRecord(await journal.get(item.referenceId), winner, 'the record after the race (the winner’s)');
        const events = await journal.history(item.referenceId);
        expectEqual(events.length, 2, 'events after the race (the insert and the one winner)');
        expectEqual(events[1]?.by, winner.statusText?.replace('s', `${BY}:`), 'the event of the race is the winner’s');
        await settle(journal, [item]);
      }
    },
  ],
  [
    'concurrent writers: parallel inserts all land, one insert of a duplicated id wins, parallel transitions of different records all apply',
    async ({ journal }) => {
      const records = Array.from({ length: 100 }, () => newRecord());
      const inserted = await Promise.all(records.map((item) => journal.insert(item)));
      expectEqual(inserted.filter((item) => item !== undefined).length, 100, 'parallel inserts that resolved with a record');
      const contested = newRecord();
      const racers = Array.from({ length: 20 }, (_, index) => ({ ...contested, amount: index + 1 }));
      const wins = await Promise.all(racers.map((item) => journal.insert(item)));
      const won = wins.filter((item) => item !== undefined);
      expectEqual(won.length, 1, 'parallel inserts of one referenceId that resolved with a record');
      expectRecord(await journal.get(contested.referenceId), won[0] as PaymentRecord, 'the record of the winning insert');
      expectEqual((await journal.history(contested.referenceId)).length, 1, 'events after racing inserts of one referenceId');
      const moved = await Promise.all(
        records.map((item) => journal.transition(item.referenceId, 1, { state: 'pending', by: BY, statusText: `s${item.fingerprint}` })),
      );
      expectEqual(moved.filter((outcome) => outcome.applied).length, 100, 'parallel transitions of different records applied');
      const read = await Promise.all(records.map((item) => journal.get(item.referenceId)));
      read.forEach((item, index) => {
        if (item?.state !== 'pending' || item.statusText !== `s${records[index]?.fingerprint}` || item.version !== 2) {
          throw new Error(`parallel transition ${index} was lost`);
        }
      });
      await settle(journal, [...records, contested]);
    },
  ],
  [
    'history keeps one event per applied write, oldest first, and none for a refused one',
    async ({ journal }) => {
      const item = newRecord();
      const neighbour = newRecord();
      const inserted = await insert(journal, item);
      await insert(journal, neighbour);
      const [first] = await journal.history(item.referenceId);
      if (first === undefined) throw new Error('history after insert is empty: the insert wrote no event');
      if (typeof first.by !== 'string' || first.by === '') throw new Error('the event of an insert has no `by`');
      expectEqual(first, { at: inserted.createdAt, from: null, to: 'initiating', by: first.by }, 'the event of an insert');

      const expected: PaymentEvent[] = [first];
      let version = 1;
      const steps: Array<PaymentChange & { refusedBefore?: boolean }> = [
        { state: 'pending', by: 'initiate', statusText: 'pending', requestId: 'req-1' },
        { state: 'pending', by: 'poll', statusText: 'processing', requestId: 'req-2', refusedBefore: true },
        { state: 'unknown', by: 'recover', error: { name: 'TimeoutError' } },
        { state: 'successful', by: 'worker:w-1', statusText: 'successful', transactionCode: 'T-42', requestId: 'req-3', reason: 'ok' },
      ];
      for (const { refusedBefore, ...change } of steps) {
        if (refusedBefore) {
          const refused = await journal.transition(item.referenceId, version + 1, { ...change, statusText: 'refused' });
          expectEqual(refused.applied, false, 'a transition expecting a version not yet written');
        }
        const before = expected[expected.length - 1] as PaymentEvent;
        const outcome = await journal.transition(item.referenceId, version, change);
        if (!outcome.applied) throw new Error(`transition to ${change.state} was not applied`);
        version += 1;
        expected.push({
          at: outcome.record.updatedAt,
          from: before.to,
          to: change.state,
          by: change.by,
          ...(change.statusText === undefined ? {} : { statusText: change.statusText }),
          ...(change.transactionCode === undefined ? {} : { transactionCode: change.transactionCode }),
          ...(change.requestId === undefined ? {} : { requestId: change.requestId }),
        });
      }
      // Refused after the close: a final record takes no event either.
      expectEqual(
        (await journal.transition(item.referenceId, version, { state: 'failed', by: BY })).applied,
        false,
        'a transition of a final record',
      );
      const events = await journal.history(item.referenceId);
      expectEqual(events.length, expected.length, 'events (one per applied write, none for a refused one)');
      for (const [index, event] of events.entries()) expectEqual(event, expected[index], `event ${index}`);
      for (let index = 1; index < events.length; index++) {
        expectLater((events[index] as PaymentEvent).at, (events[index - 1] as PaymentEvent).at, `event ${index}'s time`);
      }
      expectEqual((await journal.history(neighbour.referenceId)).length, 1, 'events of another record (its insert only)');
      await settle(journal, [neighbour]);
    },
  ],
];
