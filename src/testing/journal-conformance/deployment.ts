import type { PaymentRecord } from '../../journal/journal.js';
import { expectEqual, expectSorted } from './expect.js';

/** The journal's order (createdAt, then referenceId): records of one millisecond order by their ids. */
function oldestFirst(a: PaymentRecord, b: PaymentRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.referenceId < b.referenceId ? -1 : a.referenceId > b.referenceId ? 1 : 0;
}

import { BY, type Check, ids, insert, newRecord, settle, uuid } from './kit.js';

/** What a store must keep, said in every failure of the check below. */
const KEEP =
  'a store must keep PaymentRecord.deployment ({ baseUrl, account }) and sealedPhoneNumber exactly as insert wrote them, ' +
  'through every transition and after reopening: without them a client judges the record by answers from any deployment, ' +
  'and cannot resend its push';

/** A sealed number as a client writes it: opaque text, kept byte for byte. */
function sealed(): string {
  return `v1.${uuid()}.AbC-_/+=~%.${'z'.repeat(200)}`;
}

/** `actual`'s two fields equal `expected`'s, or an error saying what to keep. */
function expectKept(
  actual: PaymentRecord | undefined,
  expected: Pick<PaymentRecord, 'deployment' | 'sealedPhoneNumber'>,
  what: string,
): void {
  try {
    expectEqual(actual?.deployment, expected.deployment, `${what}: deployment`);
    expectEqual(actual?.sealedPhoneNumber, expected.sealedPhoneNumber, `${what}: sealedPhoneNumber`);
  } catch (error) {
    throw new Error(`${(error as Error).message} (${KEEP})`);
  }
}

/** Where a record's push went and its sealed number; the store's own filter of contradicted records. */
export const DEPLOYMENT_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'the deployment and the sealed number are kept: by insert, get and list, through every transition (a contradiction mark too), after reopening',
    async ({ journal, reopen }) => {
      const deployment = { baseUrl: 'https://collections.example.com/v1', account: 'acct-7Yq2 "quoted" é' };
      const item = newRecord({ deployment, sealedPhoneNumber: sealed() });
      const bare = newRecord();
      const expected = { deployment, sealedPhoneNumber: item.sealedPhoneNumber };
      expectKept(await insert(journal, item), expected, 'the record insert resolves with');
      expectKept(await journal.get(item.referenceId), expected, 'get after insert');
      expectKept(await insert(journal, bare), {}, 'a record inserted without them');
      let version = 1;
      for (const state of ['unknown', 'initiating', 'pending', 'failed'] as const) {
        const moved = await journal.transition(item.referenceId, version, { state, by: BY, statusText: state, sendWindowMs: 5000 });
        if (!moved.applied) throw new Error(`a transition to ${state} on the version just read was not applied`);
        version = moved.record.version;
        expectKept(moved.record, expected, `the record a transition to ${state} resolves with`);
      }
      const marked = await journal.transition(item.referenceId, version, {
        state: 'failed',
        by: BY,
        contradiction: { statusText: 'successful' },
      });
      if (!marked.applied) throw new Error('a contradiction mark on a failed record, expecting its version, was not applied');
      expectKept(marked.record, expected, 'the record a contradiction mark resolves with');
      const again = await reopen();
      expectKept(await again.get(item.referenceId), expected, 'get on the reopened store');
      expectKept(await again.get(bare.referenceId), {}, 'a record inserted without them, on the reopened store');
      const listed = (await again.list({ states: ['failed'] })).find((record) => record.referenceId === item.referenceId);
      expectKept(listed, expected, 'list on the reopened store');
      await settle(journal, [bare]);
    },
  ],
  [
    'a change naming a deployment writes it into a record that has none, and never replaces one',
    async ({ journal, reopen }) => {
      const first = { baseUrl: 'https://collections.example.com/v1', account: 'key:0123456789abcdef' };
      const other = { baseUrl: 'https://sandbox.collections.example.com', account: 'key:fedcba9876543210' };
      const unread = await insert(journal, newRecord({ deployment: { baseUrl: first.baseUrl, account: '' } }));
      const read = await journal.transition(unread.referenceId, 1, { state: 'initiating', by: BY, sendWindowMs: 5000, deployment: first });
      if (read.record?.deployment?.account !== first.account)
        throw new Error(
          `a record whose account was not read (account ''), then a change naming the deployment: account ${JSON.stringify(read.record?.deployment?.account)}, expected ${first.account} (a store must write it: the push about to leave goes there)`,
        );
      const bare = await insert(journal, newRecord());
      const taken = await journal.transition(bare.referenceId, 1, { state: 'initiating', by: BY, sendWindowMs: 5000, deployment: first });
      if (!taken.applied) throw new Error('a transition to initiating naming a deployment, on the version just read, was not applied');
      const why =
        'a store must write PaymentChange.deployment into a record that has none (a push is about to leave from it: without ' +
        'it, answers from any deployment would move the record) and never replace a deployment a record has';
      for (const [what, record] of [
        ['the record the transition resolves with', taken.record],
        ['get after it', await journal.get(bare.referenceId)],
      ] as const) {
        if (record?.deployment?.baseUrl !== first.baseUrl || record.deployment.account !== first.account)
          throw new Error(`${what}: deployment ${JSON.stringify(record?.deployment)}, expected ${JSON.stringify(first)} (${why})`);
      }
      const again = await journal.transition(bare.referenceId, 2, { state: 'initiating', by: BY, sendWindowMs: 5000, deployment: other });
      if (!again.applied) throw new Error('a second transition to initiating on the version just read was not applied');
      const kept = (await reopen()).get(bare.referenceId);
      for (const [what, record] of [
        ['the record a change naming another deployment resolves with', again.record],
        ['get on the reopened store', await kept],
      ] as const) {
        if (record?.deployment?.baseUrl !== first.baseUrl || record.deployment.account !== first.account)
          throw new Error(
            `${what}: deployment ${JSON.stringify(record?.deployment)}, expected it kept as ${JSON.stringify(first)} (${why})`,
          );
      }
      await settle(journal, [bare, unread]);
    },
  ],
  [
    'list({ contradictions: true }) returns the marked records only, oldest first, with states and limit applied',
    async ({ journal, reopen }) => {
      const records: PaymentRecord[] = [];
      for (const state of ['failed', 'successful', 'not-sent', 'rejected', 'failed', 'successful'] as const) {
        const stored = await insert(journal, newRecord());
        const closed = await journal.transition(stored.referenceId, 1, { state, by: BY, statusText: state });
        if (!closed.applied) throw new Error(`a transition to ${state} was not applied`);
        records.push(closed.record);
      }
      const open = await insert(journal, newRecord());
      // Every other final record is marked; the rest (and the open one) must never be listed.
      const marked = new Set<string>();
      for (const [index, record] of records.entries()) {
        if (index % 2 === 1) continue;
        const answer = { statusText: record.state === 'successful' ? 'failed' : 'successful' };
        const done = await journal.transition(record.referenceId, record.version, { state: record.state, by: BY, contradiction: answer });
        if (!done.applied) throw new Error(`a contradiction mark on a ${record.state} record was not applied`);
        marked.add(record.referenceId);
      }
      for (const store of [journal, await reopen()]) {
        const listed = await store.list({ contradictions: true });
        const unmarked = listed.filter((record) => record.contradiction === undefined);
        if (unmarked.length > 0)
          throw new Error(
            `list({ contradictions: true }) returned ${unmarked.length} record(s) without a contradiction (${unmarked[0]?.referenceId}): the store must filter them out itself`,
          );
        const mine = ids(listed).filter((id) => id === open.referenceId || records.some((record) => record.referenceId === id));
        expectEqual(new Set(mine), marked, 'the marked records list({ contradictions: true }) returns, among this check’s');
        expectSorted(listed, 'list({ contradictions: true })');
        const failed = await store.list({ contradictions: true, states: ['failed'] });
        if (failed.some((record) => record.state !== 'failed' || record.contradiction === undefined))
          throw new Error('list({ contradictions: true, states: [failed] }) returned a record not failed or not marked');
        expectEqual(
          ids(failed).filter((id) => marked.has(id)),
          ids(records.filter((record) => record.state === 'failed' && marked.has(record.referenceId)).sort(oldestFirst)),
          'the marked failed records, oldest first',
        );
        expectEqual((await store.list({ contradictions: true, limit: 1 })).length, 1, 'list({ contradictions: true, limit: 1 })');
        expectEqual(
          await store.list({ contradictions: true, states: ['pending', 'initiating'] }),
          [],
          'marked records among the open ones',
        );
      }
      await settle(journal, [open]);
    },
  ],
];
