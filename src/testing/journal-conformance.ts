/**
 * `checkPaymentJournal`: the conformance checks every payment journal passes (the shipped stores in this
 * package's own tests, and a store of your own in yours).
 *
 * The file is longer than most (one check per behaviour of the interface, each small): keeping them in one
 * place keeps the suite readable as a specification.
 *
 * @module
 */
import {
  type NewPaymentRecord,
  type PaymentChange,
  type PaymentEvent,
  type PaymentJournal,
  type PaymentRecord,
  type PaymentState,
  sendWindowOf,
} from '../journal/journal.js';

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
/** Who the suite's writes are by, in the history. */
const BY = 'checkPaymentJournal';
/** The grace `decidableAt` adds to the sender's window (the SDK's default `notFoundGraceMs`). */
const GRACE_MS = 10_000;
/**
 * How far the journal's clock may be from this machine's. The kit cannot know a database server's true time;
 * the bound is wide enough for an honest server's skew and catches a clock in the wrong unit or time zone.
 */
const CLOCK_BOUND_MS = 15 * 60_000;
/** The shape every time of the journal has (`Date.prototype.toISOString`): one shape, so times sort as text. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
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
  // Every referenceId the suite inserts, so a check that fails half-way still leaves nothing open behind it
  // (an open record left over would be leased by the next check, and by the next run on the same storage).
  const written = new Set<string>();
  const reopen = async () => {
    const journal = tracking(await openJournal(), written);
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
    try {
      await settle(
        journal,
        [...written].map((referenceId) => ({ referenceId })),
      );
    } catch {
      // A store that cannot settle has failed a check already.
    }
    written.clear();
  }
  // The same object may come back from every open (a memory store): close each once.
  for (const store of new Set(opened.map((journal) => untracked.get(journal) ?? journal))) {
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

const untracked = new WeakMap<PaymentJournal, PaymentJournal>();

/** The store, noting in `written` every referenceId inserted through it. */
function tracking(store: PaymentJournal, written: Set<string>): PaymentJournal {
  const journal: PaymentJournal = {
    insert: (record) => {
      written.add(record.referenceId);
      return store.insert(record);
    },
    transition: (referenceId, expectedVersion, change) => store.transition(referenceId, expectedVersion, change),
    now: () => store.now(),
    get: (referenceId) => store.get(referenceId),
    list: (filter) => store.list(filter),
    history: (referenceId) => store.history(referenceId),
    lease: (request) => store.lease(request),
    renew: (owner, referenceIds, leaseMs) => store.renew(owner, referenceIds, leaseMs),
    release: (owner, referenceIds) => store.release(owner, referenceIds),
  };
  untracked.set(journal, store);
  return journal;
}

function newRecord(fields: Partial<Record<keyof NewPaymentRecord, unknown>> = {}): NewPaymentRecord {
  const base: Record<string, unknown> = {
    referenceId: uuid(),
    state: 'initiating',
    productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
    amount: 25.5,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: `fp-${++counter}`,
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) base[key] = value;
  }
  return base as unknown as NewPaymentRecord;
}

/** What a store must hold for `record` inserted at `at`. */
function stamped(record: NewPaymentRecord, at: string, version: number): PaymentRecord {
  const decidable = record.state === 'initiating' || record.state === 'unknown';
  return {
    ...record,
    createdAt: at,
    updatedAt: at,
    version,
    ...(decidable && record.sendWindowMs !== undefined ? { decidableAt: plus(at, record.sendWindowMs + GRACE_MS) } : {}),
  };
}

async function insert(journal: PaymentJournal, record: NewPaymentRecord): Promise<PaymentRecord> {
  const stored = await journal.insert(record);
  if (stored === undefined) throw new Error(`insert of a new record (${record.referenceId}) resolved with undefined`);
  return stored;
}

/** A new record brought to `state` the way the SDK brings it: inserted `initiating`, then one transition. */
async function insertIn(journal: PaymentJournal, state: PaymentState): Promise<PaymentRecord> {
  const stored = await insert(journal, newRecord());
  if (state === 'initiating') return stored;
  const moved = await journal.transition(stored.referenceId, stored.version, { state, by: BY, statusText: state });
  if (!moved.applied) throw new Error(`a transition of a new record to ${state} was not applied`);
  return moved.record;
}

/** Moves the check's records to a final state so later checks (and later runs) never lease them. */
async function settle(journal: PaymentJournal, records: readonly Pick<PaymentRecord, 'referenceId'>[]): Promise<void> {
  for (const item of records) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await journal.get(item.referenceId);
      if (current === undefined || !OPEN_STATES.includes(current.state)) break;
      if ((await journal.transition(item.referenceId, current.version, { state: 'failed', by: BY })).applied) break;
    }
  }
}

function plus(time: string, ms: number): string {
  return new Date(Date.parse(time) + ms).toISOString();
}

function uuid(): string {
  return globalThis.crypto.randomUUID();
}

function ids(records: readonly Pick<PaymentRecord, 'referenceId'>[]): string[] {
  return records.map((item) => item.referenceId);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function expectTime(value: unknown, what: string): void {
  if (typeof value !== 'string' || !ISO_TIME.test(value) || new Date(value).toISOString() !== value) {
    throw new Error(`${what}: expected an ISO 8601 UTC time as toISOString() writes it, got ${JSON.stringify(value)}`);
  }
}

/** `later` is the same time as `earlier` or after it. */
function expectLater(later: string, earlier: string, what: string): void {
  expectTime(later, what);
  if (Date.parse(later) < Date.parse(earlier)) throw new Error(`${what}: ${later} is earlier than ${earlier}`);
}

function expectBetween(time: string, from: string, to: string, what: string): void {
  expectTime(time, what);
  const [at, low, high] = [Date.parse(time), Date.parse(from), Date.parse(to)];
  if (at < low || at > high) {
    throw new Error(`${what}: ${time} is not between the journal's now() before (${from}) and after (${to}): stamped by another clock?`);
  }
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
  if (a !== e) throw new Error(`${what}: expected ${short(e)}, got ${short(a)}`);
}

/** Long values (a 2000-character narration) cut in a message. */
function short(text: string | undefined): string | undefined {
  return text !== undefined && text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
