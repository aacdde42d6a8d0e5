/**
 * One 404 rule everywhere, and the age of a record measured twice (docs/internals/assumptions-rationale.md, "One 404 rule" and "Age
 * measured twice"): `checkStatus`, `pollUntilSettled`, `recover()` and the settlement worker give the same verdict for
 * the same record and answers; and no step of the journal's clock or of this machine's wall clock, forward or back,
 * lets the worker or `recover()` close a push before the deciding process has itself watched it for its window and the
 * grace. Fake timers drive `setTimeout`, `Date` and `performance.now()`; msw answers in process.
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type CollectionsClient,
  ConfigurationError,
  MemoryJournal,
  NotFoundError,
  type PaymentRecord,
  UnknownOutcomeError,
} from '../../src/index.js';
import {
  advanceTime,
  advanceUntilSettled,
  CHECK_URL,
  collectionInput,
  collectionsClient,
  healthy,
  INITIATE_URL,
  json,
  REFERENCE_ID,
  serviceNotFound,
  track,
  useFakeClock,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server } = useMswServer();

beforeEach(() => useFakeClock());
afterEach(() => vi.useRealTimers());

/** One attempt of 30 s, no retries: the window a record of these clients carries. */
const WINDOW_MS = 30_000;
const GRACE_MS = 10_000;
const CLIENT = { maxRetries: 0, timeoutMs: WINDOW_MS } as const;

/** A till's push whose create ended unknown (the service answered 500); the service never holds it. */
async function unknownPush(journal: MemoryJournal, till: CollectionsClient = collectionsClient({ ...CLIENT, journal })): Promise<void> {
  server.use(
    http.post(INITIATE_URL, () => json(500, { success: false, code: 'E_INTERNAL' })),
    http.get(CHECK_URL, serviceNotFound),
    healthy(),
  );
  const call = track(till.initiate(collectionInput()));
  await advanceUntilSettled(call, 5);
  expect(call.error).toBeInstanceOf(UnknownOutcomeError);
  expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
}

describe('age measured twice: a clock that steps never shortens the wait', () => {
  const STEPS: [string, (journalClock: { offsetMs: number }) => void, boolean][] = [
    [
      "the journal's clock steps 10 min forward",
      (clock) => {
        clock.offsetMs += 600_000;
      },
      true,
    ],
    [
      "the journal's clock steps 10 min back",
      (clock) => {
        clock.offsetMs -= 600_000;
      },
      false,
    ],
    ["this machine's wall clock steps 10 min forward", () => vi.setSystemTime(Date.now() + 600_000), true],
    ["this machine's wall clock steps 10 min back", () => vi.setSystemTime(Date.now() - 600_000), false],
  ];

  it.each(STEPS)('%s: recover() in another process closes nothing before it watched window + grace itself', async (_, step, forward) => {
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await unknownPush(journal);
    step(clock);
    const recovering = collectionsClient({ ...CLIENT, journal });
    const stillOpen = async (when: string) => {
      const [record] = await recovering.recover();
      expect(record?.state, when).toBe('unknown');
      // decidableAt is the later of the two bounds: never before this process has watched window + grace.
      expect(Date.parse(record?.decidableAt ?? '') - Date.parse(await journal.now()), when).toBeGreaterThan(0);
    };
    await stillOpen('right after the step');
    // The old rule closed it here (the journal's clock alone said "old").
    await advanceTime(2_500, 500);
    await stillOpen('2.5 s after the step');
    await advanceTime(WINDOW_MS + GRACE_MS - 2_500 - 1_000, 500);
    await stillOpen('1 s before this process has watched window + grace');
    await advanceTime(2_000, 500);
    const [after] = await recovering.recover();
    // Forward: both clocks agree now. Back: the journal's clock says the record is young again, which only waits longer.
    expect(after?.state).toBe(forward ? 'not-sent' : 'unknown');
  });

  it.each(STEPS)('%s: the settlement worker delivers no not-sent before it watched window + grace itself', async (_, step, forward) => {
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await unknownPush(journal);
    step(clock);
    const settled: PaymentRecord[] = [];
    const worker = collectionsClient({ ...CLIENT, journal }).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 500,
      maxIntervalMs: 500,
      onSettled: (record) => void settled.push(record),
    });
    try {
      // The old rule delivered not-sent at +2.5 s here (the journal's clock alone said "old").
      await advanceTime(2_500, 100);
      expect(settled).toEqual([]);
      await advanceTime(WINDOW_MS + GRACE_MS - 2_500 - 600, 100);
      expect(settled).toEqual([]);
      expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
      await advanceTime(5_000, 100);
      expect(settled.map((record) => record.state)).toEqual(forward ? ['not-sent'] : []);
    } finally {
      await worker.stop();
    }
  });
});

/** What an entry point concluded, in the words of the rule. */
type Verdict = 'not-sent' | 'undecided' | 'no-proof' | 'wrong-base-url' | 'not-looked-at';

function verdictOfError(error: unknown): Verdict {
  if (error instanceof ConfigurationError && error.message.includes('baseUrl')) return 'wrong-base-url';
  if (error instanceof UnknownOutcomeError && error.decidableAt !== undefined) {
    // The status check's 404 left the payment open, and the error names what it saw.
    expect(error.seen).toBe('not-found');
    return 'undecided';
  }
  if (error instanceof NotFoundError) return /records this payment not-sent/.test(error.message) ? 'not-sent' : 'no-proof';
  throw error;
}

function verdictOfRecord(record: PaymentRecord | undefined): Verdict {
  if (record === undefined) return 'not-looked-at';
  if (record.state === 'not-sent') return 'not-sent';
  if ((record.state === 'unknown' || record.state === 'initiating') && record.decidableAt !== undefined) return 'undecided';
  if (record.state === 'pending') return 'no-proof';
  throw new Error(`unexpected record ${JSON.stringify(record)}`);
}

type EntryPoint = (client: CollectionsClient, journal: MemoryJournal) => Promise<Verdict>;

const ENTRY_POINTS: Record<string, EntryPoint> = {
  checkStatus: async (client) => {
    const call = track(client.checkStatus(REFERENCE_ID));
    await advanceUntilSettled(call, 5);
    return call.rejected ? verdictOfError(call.error) : 'not-looked-at';
  },
  pollUntilSettled: async (client) => {
    const call = track(client.pollUntilSettled(REFERENCE_ID, { initialDelayMs: 0, intervalMs: 200, maxWaitMs: 1_000, notFoundGraceMs: 0 }));
    await advanceUntilSettled(call, 50);
    return call.rejected ? verdictOfError(call.error) : 'not-looked-at';
  },
  'recover()': async (client) => {
    const call = track(client.recover());
    await advanceUntilSettled(call, 5);
    if (call.rejected) return verdictOfError(call.error);
    return verdictOfRecord((call.value as PaymentRecord[]).find((record) => record.referenceId === REFERENCE_ID));
  },
  'settlement worker': async (client, journal) => {
    const settled: PaymentRecord[] = [];
    const worker = client.startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 200,
      maxIntervalMs: 200,
      scanIntervalMs: 50,
      onSettled: (record) => void settled.push(record),
    });
    await advanceTime(1_000, 50);
    await worker.stop();
    if (worker.configurationProblem !== undefined) return verdictOfError(worker.configurationProblem);
    const record = await journal.get(REFERENCE_ID);
    if (record === undefined) return 'not-looked-at';
    expect(settled.map((item) => item.state)).toEqual(record.state === 'not-sent' ? ['not-sent'] : []);
    // The worker's view of an open record: the journal's record, with this process's bound.
    return verdictOfRecord(record.state === 'not-sent' || record.state === 'pending' ? record : { ...record, decidableAt: 'open' });
  },
};

interface Row {
  readonly name: string;
  /** Writes the record (or not) through the entry point's own client, so its watch starts at its own write. */
  readonly given: (client: CollectionsClient, journal: MemoryJournal) => Promise<void>;
  /** The status check's 404 from here on. */
  readonly answer: () => Response;
  readonly verdicts: Record<string, Verdict>;
}

const everywhere = (verdict: Verdict, notLookedAt: string[] = []) =>
  Object.fromEntries(Object.keys(ENTRY_POINTS).map((name) => [name, notLookedAt.includes(name) ? 'not-looked-at' : verdict])) as Record<
    string,
    Verdict
  >;

const ROWS: Row[] = [
  {
    name: 'unknown, watched by this process past window + grace, the service answers its own 404',
    given: async (client, journal) => {
      await unknownPush(journal, client);
      await advanceTime(WINDOW_MS + GRACE_MS + 1_000, 1_000);
    },
    answer: serviceNotFound,
    verdicts: everywhere('not-sent'),
  },
  {
    name: 'unknown, just written, the service answers its own 404',
    given: (client, journal) => unknownPush(journal, client),
    answer: serviceNotFound,
    verdicts: everywhere('undecided'),
  },
  {
    name: 'pending (the service accepted it), the service answers its own 404',
    given: async (client) => {
      server.use(http.post(INITIATE_URL, () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } })));
      await client.initiate(collectionInput());
      await advanceTime(WINDOW_MS + GRACE_MS + 1_000, 1_000);
    },
    answer: serviceNotFound,
    verdicts: everywhere('no-proof'),
  },
  {
    name: 'unknown, watched past window + grace, the base URL answers a bare 404',
    given: async (client, journal) => {
      await unknownPush(journal, client);
      await advanceTime(WINDOW_MS + GRACE_MS + 1_000, 1_000);
    },
    answer: () => new HttpResponse(null, { status: 404 }),
    verdicts: everywhere('wrong-base-url'),
  },
  {
    name: 'not in the journal, the service answers its own 404',
    given: async () => undefined,
    answer: serviceNotFound,
    verdicts: everywhere('no-proof', ['recover()', 'settlement worker']),
  },
];

describe('one 404 rule: the same record and answers give the same verdict through every entry point', () => {
  for (const row of ROWS) {
    it.each(Object.keys(ENTRY_POINTS))(`${row.name}: %s`, async (entryPoint) => {
      const journal = new MemoryJournal();
      const client = collectionsClient({ ...CLIENT, journal });
      server.use(healthy());
      await row.given(client, journal);
      server.use(http.get(CHECK_URL, row.answer));
      expect(await (ENTRY_POINTS[entryPoint] as EntryPoint)(client, journal)).toBe(row.verdicts[entryPoint]);
    });
  }
});
