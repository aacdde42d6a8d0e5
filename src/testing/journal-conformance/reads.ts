import type { PaymentRecord, PaymentState } from '../../journal/journal.js';
import { expectEqual, expectRecord, expectSorted } from './expect.js';
import { BY, type Check, delay, ids, insert, insertIn, newRecord, settle } from './kit.js';

/** Reads: exact round trips, list order and filters, reopening. */
export const READ_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'stored text and amounts round-trip exactly (emoji, CJK, quotes, SQL, long strings; 10.05, 9999.99)',
    async ({ journal, reopen }) => {
      const texts = [
        'Lunch 🍔 for 2 💳 — café',
        '支付 テスト 결제',
        'it\'s a "quote" and a `tick` and a \\ backslash',
        "'); DROP TABLE tap_payment_journal; --",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal placeholder, kept as text by the store
        '100% _wild_ %s $1 ${x}',
        'line\nbreak\ttab\r\n',
        'e\u0301 vs \u00e9, \u200d zero width, \u202e RTL, 𝕏 astral',
        ' padded  ',
        'x'.repeat(2000),
      ];
      const records = texts.map((text, index) =>
        newRecord({ narration: text, amount: [10.05, 9999.99, 0.01, 1234567.89, 1, 25.5, 0.1, 700.7, 19.99][index] }),
      );
      for (const item of records) await insert(journal, item);
      const changed = await Promise.all(
        records.map((item, index) =>
          journal.transition(item.referenceId, 1, {
            state: 'pending',
            by: `worker:${texts[index]?.slice(0, 40)}`,
            statusText: texts[index],
            reason: texts[(index + 1) % texts.length],
            transactionCode: texts[(index + 2) % texts.length],
            requestId: texts[(index + 3) % texts.length],
            error: { name: texts[(index + 4) % texts.length] as string, code: texts[(index + 5) % texts.length] },
          }),
        ),
      );
      const again = await reopen();
      for (const [index, item] of records.entries()) {
        const outcome = changed[index];
        if (!outcome?.applied) throw new Error(`transition ${index} was not applied`);
        const read = await again.get(item.referenceId);
        expectEqual(read?.narration, item.narration, `narration ${index} read back`);
        expectEqual(read?.amount, item.amount, `amount ${index} read back`);
        expectEqual(read?.statusText, texts[index], `statusText ${index} read back`);
        expectEqual(read?.reason, texts[(index + 1) % texts.length], `reason ${index} read back`);
        expectEqual(read?.transactionCode, texts[(index + 2) % texts.length], `transactionCode ${index} read back`);
        expectEqual(read?.error, outcome.record.error, `error ${index} read back`);
        expectRecord(read, outcome.record, `record ${index} read back`);
        const event = (await again.history(item.referenceId))[1];
        expectEqual(event?.requestId, texts[(index + 3) % texts.length], `requestId ${index} in the history`);
        expectEqual(event?.by, `worker:${texts[index]?.slice(0, 40)}`, `by ${index} in the history`);
      }
      await settle(journal, records);
    },
  ],
  [
    'list returns records oldest first (createdAt, then referenceId), whatever changed since',
    async ({ journal }) => {
      const records: PaymentRecord[] = [];
      // Inserted one after another, a few milliseconds apart: the journal's stamps order them.
      for (let index = 0; index < 5; index++) {
        records.push(await insert(journal, newRecord()));
        await delay(2);
      }
      // A later write to the first record does not move it: the order is by creation.
      await journal.transition(records[0]?.referenceId as string, 1, { state: 'pending', by: BY });
      const mine = new Set(ids(records));
      const listed = (await journal.list()).filter((item) => mine.has(item.referenceId));
      expectEqual(ids(listed), ids(records), 'order of list()');
      expectSorted(await journal.list(), 'list()');
      await settle(journal, records);
    },
  ],
  [
    'list filters by states and honours limit',
    async ({ journal }) => {
      const states: PaymentState[] = ['initiating', 'pending', 'unknown', 'pending', 'initiating', 'pending'];
      const records: PaymentRecord[] = [];
      for (const state of states) {
        records.push(await insertIn(journal, state));
        await delay(2);
      }
      const mine = new Set(ids(records));
      const pending = await journal.list({ states: ['pending'] });
      expectEqual(
        ids(pending.filter((item) => mine.has(item.referenceId))),
        ids(records.filter((item) => item.state === 'pending')),
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
    'a record written is read back after reopening the store, with its history',
    async ({ journal, reopen }) => {
      const written = newRecord({ narration: 'reopen', sendWindowMs: 1000 });
      await insert(journal, written);
      const moved = await journal.transition(written.referenceId, 1, { state: 'unknown', by: BY, error: { name: 'TimeoutError' } });
      const again = await reopen();
      expectRecord(await again.get(written.referenceId), moved.record as PaymentRecord, 'get on the reopened store');
      const listed = (await again.list({ states: ['unknown'] })).find((item) => item.referenceId === written.referenceId);
      expectRecord(listed, moved.record as PaymentRecord, 'list on the reopened store');
      expectEqual(await again.history(written.referenceId), await journal.history(written.referenceId), 'history on the reopened store');
      expectEqual((await again.history(written.referenceId)).length, 2, 'events on the reopened store');
      const closed = await again.transition(written.referenceId, 2, { state: 'failed', by: BY });
      expectEqual(closed.applied, true, 'a transition on the reopened store, on the version read before reopening');
      expectEqual((await journal.get(written.referenceId))?.state, 'failed', 'a write on the reopened store, read on the first');
    },
  ],
];
