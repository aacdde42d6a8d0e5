/**
 * `duplicateReferences: 'refused'`: after an attempt whose outcome is unknown the same create is sent again and the
 * service's answer decides at once; with a journal, open records are resent by `recover()`, the settlement worker and
 * `initiate`. The default mode says what it does. Through the public client against the simulator (msw, in process).
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CollectionsClient,
  type CollectionsClientOptions,
  ConfigurationError,
  ConflictError,
  type Logger,
  MemoryJournal,
  type PaymentRecord,
  UnknownOutcomeError,
} from '../../src/index.js';
import { COLLECTIONS_API_KEYS, type Simulator } from '../../src/testing/index.js';
import {
  advanceUntilSettled,
  collectionInput,
  INITIATE_PATH,
  INITIATE_URL,
  REFERENCE_ID,
  rejectionOf,
  track,
  useFakeClock,
  useFakeMonotonicClock,
  watchFor,
} from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { servedPendingSimulator } from '../helpers/simulator.js';

const { server, requests } = useMswServer();
const KEY = COLLECTIONS_API_KEYS.primary;
const CREATE = `POST ${INITIATE_PATH}`;
const FULL_NUMBER = '260977123456';
const OTHER_REFERENCE = '7d4c2f1e-3b5a-4c6d-8e9f-0a1b2c3d4e5f';

let simulator: Simulator;
beforeEach(async () => {
  simulator = await servedPendingSimulator(server);
});
afterEach(() => {
  vi.useRealTimers();
});

function client(options: CollectionsClientOptions = {}): CollectionsClient {
  return new CollectionsClient({ apiKey: KEY, baseUrl: COLLECTIONS_BASE_URL, logLevel: 'off', ...options });
}

function refused(options: CollectionsClientOptions = {}): CollectionsClient {
  return client({ duplicateReferences: 'refused', ...options });
}

/** Every log line, by level. */
function capturingLogger() {
  const lines: string[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: (message) => lines.push(`info ${message}`),
    warn: (message) => lines.push(`warn ${message}`),
    error: (message) => lines.push(`error ${message}`),
  };
  return { logger, lines };
}

/** The requests the service saw, as `METHOD /path` (the health check and status checks by their route). */
function trail(): string[] {
  return requests.map((request) => `${request.method} ${request.path.startsWith('/v1/collections/check/') ? '/check' : request.path}`);
}

/** The bodies of the creates sent, as sent (byte-identical resends compare equal). */
function createBodies(): string[] {
  return requests.filter((request) => request.method === 'POST').map((request) => JSON.stringify(request.body));
}

/** Runs a call under the fake clock to its end (at most `limitMs` of it). */
async function settle<T>(promise: Promise<T>, limitMs?: number) {
  const call = track(promise);
  await advanceUntilSettled(call, undefined, limitMs);
  return call;
}

describe("duplicateReferences: 'refused', within one initiate", () => {
  it('resends after a connection dropped before the service stored the push: pending, one collection', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    const call = await settle(refused().initiate(collectionInput()));
    expect(call.error).toBeUndefined();
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(simulator.collections()).toHaveLength(1);
    expect(trail()).toEqual([CREATE, CREATE]);
    const [first, second] = createBodies();
    expect(second).toBe(first);
  });

  it('resends after a connection dropped once the service stored it: the duplicate answer means pending, never ConflictError', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'after', times: 1 });
    const journal = new MemoryJournal();
    const call = await settle(refused({ journal }).initiate(collectionInput()));
    expect(call.error).toBeUndefined();
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(simulator.collections()).toHaveLength(1);
    expect(trail()).toEqual([CREATE, CREATE]);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it('resends after a 503: pending, one collection', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, status: 503, times: 1 });
    const call = await settle(refused().initiate(collectionInput()));
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(simulator.collections()).toHaveLength(1);
    expect(trail()).toEqual([CREATE, CREATE]);
  });

  it('resends after a timeout of an attempt the service stored: pending, one collection', async () => {
    useFakeClock();
    let creates = 0;
    // The first create reaches the service, whose answer never comes back in time.
    const fetchHoldingFirstAnswer: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await fetch(request);
      if (request.method === 'POST' && ++creates === 1) {
        await new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }));
      }
      return response;
    };
    const call = await settle(refused({ timeoutMs: 1_000, fetch: fetchHoldingFirstAnswer }).initiate(collectionInput()));
    expect(call.error).toBeUndefined();
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(simulator.collections()).toHaveLength(1);
    expect(trail()).toEqual([CREATE, CREATE]);
  });

  it('sends no resend that would end past duplicateMemoryMs (a long Retry-After): the call checks the reference instead', async () => {
    useFakeClock();
    // The push is refused before it is stored, with a Retry-After that outlasts the service's memory of the reference.
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 40, times: 1 });
    const { logger, lines } = capturingLogger();
    const call = await settle(refused({ duplicateMemoryMs: 60_000, logger, logLevel: 'warn' }).initiate(collectionInput()));
    // 40 s of pause plus the resend's 30 s time limit ends past the 60 s memory: a resend could be a second push.
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual([CREATE, 'GET /check']);
    expect(simulator.collections()).toHaveLength(0);
    expect(lines).toContainEqual(expect.stringMatching(/may have forgotten it by now \(duplicateMemoryMs\): checking it instead/));
    // Within the memory, the same failure is answered by the resend.
    requests.length = 0;
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 40, times: 1 });
    const within = await settle(refused({ duplicateMemoryMs: 300_000 }).initiate(collectionInput({ referenceId: OTHER_REFERENCE })));
    expect(within.value).toMatchObject({ referenceId: OTHER_REFERENCE, status: 'pending' });
    expect(trail()).toEqual([CREATE, CREATE]);
  });

  it('sends the resend whose time limit ends exactly when the memory does', async () => {
    useFakeClock();
    // 40 s of Retry-After and the resend's 30 s time limit end exactly at the 70 s memory: the service still holds it.
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 40, times: 1 });
    const exact = await settle(refused({ duplicateMemoryMs: 70_000 }).initiate(collectionInput()));
    expect(exact.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual([CREATE, CREATE]);
    // A millisecond less and it could end past the memory: the reference is checked instead.
    requests.length = 0;
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 40, times: 1 });
    const over = await settle(refused({ duplicateMemoryMs: 69_999 }).initiate(collectionInput({ referenceId: OTHER_REFERENCE })));
    expect(over.error).toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual([CREATE, 'GET /check']);
  });

  it('says once that the service may have forgotten the reference, however many checks it takes', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 40, times: 1 });
    // The check that replaces the resend is itself refused once, then answers.
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 503, retryAfter: 0, times: 1 });
    const { logger, lines } = capturingLogger();
    const call = await settle(refused({ duplicateMemoryMs: 60_000, logger, logLevel: 'warn' }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual([CREATE, 'GET /check', 'GET /check']);
    expect(lines.filter((line) => line.includes('may have forgotten it by now'))).toHaveLength(1);
  });

  it('a 409 on a first attempt (no unknown outcome, no record of its own) is still ConflictError: the caller reused a reference', async () => {
    useFakeClock();
    await client().initiate(collectionInput());
    requests.length = 0;
    const first = await rejectionOf(refused().initiate(collectionInput()));
    expect(first).toBeInstanceOf(ConflictError);
    // The same 409 after a dropped connection is the service saying it holds this call's own push.
    simulator.reset();
    await client().initiate(collectionInput());
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    requests.length = 0;
    const call = await settle(refused().initiate(collectionInput()));
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual([CREATE, CREATE]);
  });

  it("with a journal, a first attempt's duplicate answer (another writer of this payment sent it) is pending, no status check", async () => {
    useFakeClock();
    await client().initiate(collectionInput());
    requests.length = 0;
    const journal = new MemoryJournal();
    const call = await settle(refused({ journal }).initiate(collectionInput()));
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual([CREATE]);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });

  it("a duplicate answer without the service's envelope (a proxy's page) is no evidence: the outcome stays unknown", async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    simulator.injectFault({ route: CREATE, status: 409, body: 'html', times: 1 });
    const call = await settle(refused({ maxRetries: 1 }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual([CREATE, CREATE, 'GET /check']);
  });

  it('on a service that STORES duplicates, claiming refused charges the customer twice: the precondition is real', async () => {
    useFakeClock();
    const stored: unknown[] = [];
    let creates = 0;
    server.use(
      http.post(INITIATE_URL, async ({ request }) => {
        const body = (await request.json()) as { referenceId: string };
        stored.push(body);
        creates++;
        // The first answer is lost after the service stored the push.
        if (creates === 1) return HttpResponse.error();
        return HttpResponse.json({ success: true, data: { referenceId: body.referenceId, status: 'pending' } }, { status: 202 });
      }),
    );
    const call = await settle(refused().initiate(collectionInput()));
    expect(call.value).toMatchObject({ status: 'pending' });
    // Two collections for one sale: why the docs ask for `probe duplicates` before setting the mode.
    expect(stored).toHaveLength(2);
  });
});

describe('the default mode says what it does', () => {
  it('logs no "retrying" when no resend follows, and the error says the status check answered 404', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, status: 503, times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 404, times: 1 });
    const { logger, lines } = capturingLogger();
    const call = await settle(client({ logger, logLevel: 'warn' }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual([CREATE, 'GET /check']);
    expect(lines.filter((line) => /retrying/i.test(line))).toEqual([]);
    expect(lines).toContainEqual(
      expect.stringMatching(/^warn .*outcome unknown: checking referenceId .* \(not sending it again\) in \d+ ms$/),
    );
    const message = (call.error as Error).message;
    expect(message).toContain('the status check answered 404');
    expect(message).not.toContain('does not hold');
  });

  it('says no status check got through when none did, and never that the service does not hold it (with a journal)', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before' });
    const call = await settle(client({ maxRetries: 1, journal: new MemoryJournal() }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    const error = call.error as UnknownOutcomeError;
    expect(error.seen).toBe('unreachable');
    expect(error.message).toContain('no status check got through');
    expect(error.message).not.toContain('does not hold');
    expect(error.decidableAt).toBeDefined();
  });
});

/** A payment left `unknown` by a till in 'refused' mode whose every attempt and check failed (nothing at the service). */
async function unknownPayment(journal: MemoryJournal, options: CollectionsClientOptions = {}): Promise<PaymentRecord> {
  simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
  simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before', times: 1 });
  const error = await rejectionOf(refused({ journal, maxRetries: 0, ...options }).initiate(collectionInput()));
  expect(error).toBeInstanceOf(UnknownOutcomeError);
  const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
  expect(record.state).toBe('unknown');
  requests.length = 0;
  return record;
}

describe("duplicateReferences: 'refused' with a journal", () => {
  it('seals the full number in the record: neither the number nor the key can be read from it', async () => {
    const journal = new MemoryJournal();
    await refused({ journal }).initiate(collectionInput());
    const record = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    expect(record.sealedPhoneNumber).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    const stored = JSON.stringify([record, await journal.history(REFERENCE_ID)]);
    expect(stored).not.toContain(FULL_NUMBER);
    expect(stored).not.toContain('977123456');
    expect(stored).not.toContain(KEY);
    // The default mode keeps no number at all.
    const plain = new MemoryJournal();
    await client({ journal: plain }).initiate(collectionInput({ referenceId: '5b0f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b' }));
    expect((await plain.get('5b0f7c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b'))?.sealedPhoneNumber).toBeUndefined();
  });

  it('a key that cannot be read to seal the number never fails the payment: no seal, said, and the push goes on', async () => {
    const journal = new MemoryJournal();
    let calls = 0;
    const apiKey = () => {
      calls++;
      if (calls === 1) throw new Error('vault unavailable');
      return KEY;
    };
    const { logger, lines } = capturingLogger();
    const result = await refused({ journal, apiKey, logger, logLevel: 'warn' }).initiate(collectionInput());
    expect(result).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.sealedPhoneNumber).toBeUndefined();
    expect(lines).toContainEqual(expect.stringMatching(/could not be read to seal its number; it will not be resent/));
  });

  it('recover() brings an unknown record to pending at once, by the same create (no wait for decidableAt)', async () => {
    const journal = new MemoryJournal();
    const record = await unknownPayment(journal);
    // The unknown rule would wait out the window (30 s with no retry) plus the 10 s grace.
    expect(Date.parse(record.decidableAt as string)).toBeGreaterThan(Date.now() + 30_000);
    const [recovered] = await refused({ journal }).recover();
    expect(recovered?.state).toBe('pending');
    expect(simulator.collections()).toHaveLength(1);
    expect(trail().filter((line) => line === CREATE)).toHaveLength(1);
  });

  it('initiate of the same payment brings it to pending at once; a second recover() sends nothing more', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    const result = await refused({ journal }).initiate(collectionInput());
    expect(result).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
    await refused({ journal }).recover();
    expect(simulator.collections()).toHaveLength(1);
    expect(trail().filter((line) => line === CREATE)).toHaveLength(1);
  });

  it('the settlement worker brings it to pending at once', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    const worker = refused({ journal }).startSettlementWorker({ initialDelayMs: 0, intervalMs: 20, maxIntervalMs: 40, scanIntervalMs: 20 });
    try {
      await vi.waitFor(async () => expect((await journal.get(REFERENCE_ID))?.state).toBe('pending'), { timeout: 5_000, interval: 10 });
    } finally {
      await worker.stop();
    }
    expect(simulator.collections()).toHaveLength(1);
  });

  it('the settlement worker delivers a refusal of its own resend once, as rejected', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    simulator.injectFault({ route: CREATE, status: 422, times: 1 });
    const settled: PaymentRecord[] = [];
    const worker = refused({ journal }).startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 20,
      maxIntervalMs: 40,
      scanIntervalMs: 20,
      onSettled: (record) => {
        settled.push(record);
      },
    });
    try {
      await vi.waitFor(() => expect(settled).toHaveLength(1), { timeout: 5_000, interval: 10 });
    } finally {
      await worker.stop();
    }
    expect(settled[0]).toMatchObject({ referenceId: REFERENCE_ID, state: 'rejected', error: { status: 422 } });
    expect(simulator.collections()).toHaveLength(0);
  });

  it('a resend the service stored before answers as a duplicate: pending, still one collection', async () => {
    const journal = new MemoryJournal();
    simulator.injectFault({ route: CREATE, drop: 'after', times: 1 });
    // Every status read lags: the service holds it but cannot show it yet.
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 404, times: 2 });
    const error = await rejectionOf(refused({ journal, maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    requests.length = 0;
    const [recovered] = await refused({ journal }).recover();
    expect(recovered?.state).toBe('pending');
    expect(simulator.collections()).toHaveLength(1);
    expect(trail()).toContain(CREATE);
  });

  it('a definite refusal of the resend closes the record as rejected', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    simulator.injectFault({ route: CREATE, status: 400, times: 1 });
    const [recovered] = await refused({ journal }).recover();
    expect(recovered?.state).toBe('rejected');
    expect(recovered?.error).toMatchObject({ status: 400 });
    expect(simulator.collections()).toHaveLength(0);
  });

  it('an unknown outcome again leaves the record open', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    const before = (await journal.get(REFERENCE_ID)) as PaymentRecord;
    // A resender whose own window (5 s) is shorter than the record's: the earlier push may still be on its way.
    const [recovered] = await refused({ journal, maxRetries: 0, timeoutMs: 5_000 }).recover();
    expect(recovered?.state).toBe('unknown');
    // The window the record states still covers the earlier writer's, so no reader closes it early by age.
    expect(recovered?.sendWindowMs).toBe(before.sendWindowMs);
    expect(before.sendWindowMs).toBe(30_000);
    // The resend was made (and its answer lost): the record was written before it, and is open again after it.
    expect(trail().filter((line) => line === CREATE)).toHaveLength(1);
    expect((await journal.history(REFERENCE_ID)).map((event) => event.to)).toEqual(['initiating', 'unknown', 'initiating', 'unknown']);
    expect(simulator.collections()).toHaveLength(0);
  });

  it('after a key rotation the sealed number does not open: the record is judged by the unknown rule (nothing sent)', async () => {
    const journal = new MemoryJournal();
    await unknownPayment(journal);
    const { logger, lines } = capturingLogger();
    // The rotation declared (the old key's account identity), so the record is this client's to judge.
    const account = (await journal.get(REFERENCE_ID))?.deployment?.account;
    expect(account).toMatch(/^key:[0-9a-f]{16}$/);
    const rotated = refused({
      journal,
      formerAccounts: [account as string],
      apiKey: `${KEY}-rotated`,
      fetch: (input, init) => fetch(rotatedToPrimary(input, init)),
      logger,
      logLevel: 'warn',
    });
    const [recovered] = await rotated.recover();
    expect(recovered?.state).toBe('unknown');
    expect(trail()).not.toContain(CREATE);
    // Said, not silent: the operator learns why this payment waits.
    expect(lines).toContainEqual(expect.stringMatching(/sealed number does not open with this API key/));
  });

  it('a record older than duplicateMemoryMs, or pushed to another deployment, is not resent', async () => {
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await unknownPayment(journal);
    clock.offsetMs = 60_000;
    const [aged] = await refused({ journal, duplicateMemoryMs: 30_000 }).recover();
    expect(aged?.state).toBe('unknown');
    expect(trail()).not.toContain(CREATE);
    // The same record, its push sent to another base URL.
    const elsewhere = {
      ...(await journal.get(REFERENCE_ID)),
      deployment: { baseUrl: 'https://other.test', account: 'a' },
    } as PaymentRecord;
    const other = new MemoryJournal();
    await other.insert(elsewhere);
    const { logger, lines } = capturingLogger();
    // Nothing is asked of (or resent to) this deployment about it: recover() names both and leaves the record open.
    await expect(refused({ journal: other, logger, logLevel: 'error' }).recover()).rejects.toThrow(
      /another deployment than this client's \(first: https:\/\/other\.test, account a; this client: https:\/\/collections\.test/,
    );
    expect((await other.get(REFERENCE_ID))?.state).toBe('unknown');
    expect(trail()).not.toContain(CREATE);
    expect(lines).toContainEqual(expect.stringMatching(/was pushed to https:\/\/other\.test/));
    // The same record within the service's memory, its push sent here: resent, and so settled at once.
    const [resent] = await refused({ journal }).recover();
    expect(resent?.state).toBe('pending');
    expect(trail()).toContain(CREATE);
  });

  it("a resend's own retries stop where the service's memory of the record ends: checked instead, the record left open", async () => {
    useFakeClock();
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', drop: 'before', times: 1 });
    expect((await settle(refused({ journal, maxRetries: 0 }).initiate(collectionInput()))).error).toBeInstanceOf(UnknownOutcomeError);
    requests.length = 0;
    // 20 s old by the journal's clock, remembered 120 s: the resend may leave, and must end within the 100 s left.
    clock.offsetMs = 20_000;
    simulator.injectFault({ route: CREATE, status: 503, retryAfter: 75, times: 1 });
    const recovered = await settle(refused({ journal, duplicateMemoryMs: 120_000, maxRetryAfterMs: 120_000 }).recover(), 120_000);
    expect(recovered.error).toBeUndefined();
    // Its retry would leave 75 s later and could last 30 s: past the memory, so the reference is checked instead.
    expect(recovered.value?.[0]?.state).toBe('unknown');
    expect(trail().filter((line) => line === CREATE)).toHaveLength(1);
    expect(trail().at(-1)).toBe('GET /check');
    expect(simulator.collections()).toHaveLength(0);
  });

  it('checkStatus and pollUntilSettled never close a resendable record as not-sent on a 404, however old', async () => {
    useFakeMonotonicClock();
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    await unknownPayment(journal);
    // Well past the window and the grace, by the journal's clock and by this process's own watch.
    clock.offsetMs = 10 * 60_000;
    watchFor(10 * 60_000);
    const till = refused({ journal });
    const error = await rejectionOf(till.checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).message).toContain('the status check answered 404');
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
    expect(trail()).not.toContain(CREATE);
    // The resend decides it.
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('pending');
  });

  it('validates duplicateReferences and duplicateMemoryMs', () => {
    expect(() => client({ duplicateReferences: 'yes' as 'refused' })).toThrow(ConfigurationError);
    expect(() => client({ duplicateReferences: 'refused', duplicateMemoryMs: 0 })).toThrow(/duplicateMemoryMs/);
    expect(() => client({ duplicateMemoryMs: 1.5 })).toThrow(/duplicateMemoryMs/);
  });
});

/** Sends a rotated key's request with the simulator's key, as a service that accepts both keys of a rotation does. */
function rotatedToPrimary(input: Request | string | URL, init?: RequestInit): Request {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  headers.set('authorization', `Bearer ${KEY}`);
  return new Request(request, { headers });
}
