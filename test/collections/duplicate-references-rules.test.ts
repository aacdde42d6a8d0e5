/**
 * The rules of `duplicateReferences: 'refused'`, one by one: which answer to a resend proves the service holds the
 * reference (a 409 or a 422 naming `referenceId` with a uniqueness rule, in its envelope), which refusal closes the
 * payment, and when a journal record's create may be rebuilt and sent again (open, younger than `duplicateMemoryMs`,
 * its sealed number opening with this key, its fingerprint matching). Through the public client against the
 * simulator (msw, in process).
 */
import { HttpResponse, http } from 'msw';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isDuplicateEvidence, isDuplicateReference } from '../../src/collections/duplicate-answer.js';
import { type ResendRule, rebuildCreate } from '../../src/collections/resend.js';
import { unsealPhoneNumber } from '../../src/collections/sealed-number.js';
import { LevelLogger } from '../../src/core/logger.js';
import {
  AuthenticationError,
  BadRequestError,
  CollectionsClient,
  type CollectionsClientOptions,
  type Logger,
  MemoryJournal,
  type PaymentRecord,
  PermissionDeniedError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../../src/index.js';
import { COLLECTIONS_API_KEYS, createSimulatorHandlers, type Simulator } from '../../src/testing/index.js';
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
  validationProblem,
  watchFor,
} from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { servedPendingSimulator } from '../helpers/simulator.js';

const { server, requests } = useMswServer();
const KEY = COLLECTIONS_API_KEYS.primary;
const CREATE = `POST ${INITIATE_PATH}`;
const CHECK = 'GET /v1/collections/check/:referenceId';

let simulator: Simulator;
beforeEach(async () => {
  simulator = await servedPendingSimulator(server);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function refused(options: CollectionsClientOptions = {}): CollectionsClient {
  return new CollectionsClient({ apiKey: KEY, baseUrl: COLLECTIONS_BASE_URL, logLevel: 'off', duplicateReferences: 'refused', ...options });
}

/** Every log line at info and above, by level (the client's `logLevel` decides which arrive). */
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

/** The creates the service was sent, their bodies as sent. */
function createBodies(): string[] {
  return requests.filter((request) => request.method === 'POST').map((request) => JSON.stringify(request.body));
}

/** Runs a call under the fake clock to its end. */
async function settle<T>(promise: Promise<T>) {
  const call = track(promise);
  await advanceUntilSettled(call);
  return call;
}

/** The service's own 422 problem (section 7 of the Collections document) for a create, with these `errors[]`. */
function createRefused(errors: { field: string; rule: string; message: string }[]) {
  return HttpResponse.json(validationProblem(INITIATE_PATH, errors), { status: 422 });
}

/** Answers the `nth` create (1-based) with `answer`; every other request goes on to the simulator. */
function answerCreate(nth: number, answer: () => Response) {
  let creates = 0;
  server.use(
    http.post(INITIATE_URL, () => {
      creates++;
      return creates === nth ? answer() : undefined;
    }),
  );
}

describe('a 422 about the reference itself is the duplicate answer', () => {
  it.each([
    ['params.referenceId', 'unique'],
    ['referenceId', 'exists'],
    ['body.ReferenceId', 'duplicate'],
  ])('after a dropped connection, a 422 naming %s with the rule %s resolves pending: the service holds it', async (field, rule) => {
    useFakeClock();
    // The push was stored, its answer lost; the resend is answered with the uniqueness problem.
    simulator.injectFault({ route: CREATE, drop: 'after', times: 1 });
    answerCreate(2, () => createRefused([{ field, rule, message: 'referenceId has already been taken' }]));
    const journal = new MemoryJournal();
    const call = await settle(refused({ journal }).initiate(collectionInput()));
    expect(call.error).toBeUndefined();
    expect(call.value).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
    expect(simulator.collections()).toHaveLength(1);
  });

  it('a uniqueness rule on another field, or another rule on referenceId, is a refusal of the create: rejected', async () => {
    for (const problem of [
      { field: 'phoneNumber', rule: 'unique', message: 'taken' },
      { field: 'params.referenceId', rule: 'uuid', message: 'must be a UUID' },
      // Only the field itself: a name that merely begins with it is another field.
      { field: 'params.referenceId.format', rule: 'exists', message: 'unknown format' },
    ]) {
      useFakeClock();
      simulator.reset();
      simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
      answerCreate(2, () => createRefused([problem]));
      const journal = new MemoryJournal();
      const call = await settle(refused({ journal }).initiate(collectionInput()));
      expect(call.error, problem.field).toBeInstanceOf(UnprocessableEntityError);
      expect((await journal.get(REFERENCE_ID))?.state, problem.field).toBe('rejected');
      vi.useRealTimers();
    }
  });
});

describe('a refusal of the resend proves the first attempt was refused alike', () => {
  it.each([
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [400, BadRequestError],
  ])(
    "a %i in the service's envelope after a dropped connection ends the call with it and closes the record rejected",
    async (status, type) => {
      useFakeClock();
      simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
      simulator.injectFault({ route: CREATE, status, times: 1 });
      const journal = new MemoryJournal();
      const call = await settle(refused({ journal }).initiate(collectionInput()));
      expect(call.error).toBeInstanceOf(type);
      expect((await journal.get(REFERENCE_ID))?.state).toBe('rejected');
      // Decided by the answer alone: no status check.
      expect(requests.filter((request) => request.method === 'GET')).toHaveLength(0);
    },
  );

  it("the same status without the service's envelope (a proxy's page) proves nothing: the outcome stays unknown", async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    simulator.injectFault({ route: CREATE, status: 403, body: 'html', times: 1 });
    simulator.injectFault({ route: CHECK, status: 404, times: 1 });
    const journal = new MemoryJournal();
    const call = await settle(refused({ journal }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it('a 404 to the resend is no refusal: the outcome stays unknown', async () => {
    useFakeClock();
    simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
    simulator.injectFault({ route: CREATE, status: 404, times: 1 });
    simulator.injectFault({ route: CHECK, status: 404, times: 1 });
    const call = await settle(refused({ journal: new MemoryJournal() }).initiate(collectionInput()));
    expect(call.error).toBeInstanceOf(UnknownOutcomeError);
  });
});

/** A payment left `unknown` by `till` (its only attempt and its check dropped before the service saw them). */
async function leaveUnknown(till: CollectionsClient, journal: MemoryJournal, input = collectionInput()): Promise<PaymentRecord> {
  simulator.injectFault({ route: CREATE, drop: 'before', times: 1 });
  simulator.injectFault({ route: CHECK, drop: 'before', times: 1 });
  expect(await rejectionOf(till.initiate(input))).toBeInstanceOf(UnknownOutcomeError);
  const record = (await journal.get(input.referenceId as string)) as PaymentRecord;
  expect(record.state).toBe('unknown');
  return record;
}

describe('which open record is rebuilt and sent again', () => {
  it('the resend is the first create byte for byte, narration included', async () => {
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    await leaveUnknown(till, journal, collectionInput({ narration: 'Stall 4, market day' }));
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('pending');
    const [first, resend] = createBodies();
    expect(resend).toBe(first);
    expect(JSON.parse(resend as string)).toMatchObject({ narration: 'Stall 4, market day' });
  });

  it('the service remembers a reference for duplicateMemoryMs: a record that old is not taken over; a resend leaves only if its attempt ends within it', async () => {
    const clock = { offsetMs: 0 };
    const start = Date.parse('2026-11-21T10:00:00.000Z');
    const journal = new MemoryJournal({ now: () => start + clock.offsetMs });
    const timeoutMs = 10_000;
    const till = refused({ journal, maxRetries: 0, timeoutMs, duplicateMemoryMs: 120_000 });
    const { referenceId } = await leaveUnknown(till, journal);
    const writes = async () => (await journal.history(referenceId)).length;
    const written = await writes();
    requests.length = 0;
    // As old as the memory: not taken over, nothing written, nothing sent.
    clock.offsetMs = 120_000;
    const [aged] = await till.recover();
    expect(aged?.state).toBe('unknown');
    expect(await writes()).toBe(written);
    expect(createBodies()).toHaveLength(0);
    // A millisecond younger: taken over (a write), but its attempt would end past the memory, so no push leaves.
    clock.offsetMs = 119_999;
    const [band] = await till.recover();
    expect(band?.state).toBe('unknown');
    expect(await writes()).toBeGreaterThan(written);
    expect(createBodies()).toHaveLength(0);
    // Young enough for a whole attempt (a second of margin for the real time this test takes): resent, pending.
    clock.offsetMs = 120_000 - timeoutMs - 1_000;
    const [resent] = await till.recover();
    expect(resent?.state).toBe('pending');
    expect(createBodies()).toHaveLength(1);
  });

  it('a key that cannot be read now: judged without a resend, said, and resent once it can', async () => {
    const journal = new MemoryJournal();
    let keyFails = false;
    const { logger, lines } = capturingLogger();
    const till = refused({
      journal,
      maxRetries: 0,
      logger,
      logLevel: 'warn',
      apiKey: () => {
        if (keyFails) throw new Error('vault unavailable');
        return KEY;
      },
    });
    await leaveUnknown(till, journal);
    // The base URL proved to serve the API, so the status check's 404 needs no health check of its own.
    await till.health();
    requests.length = 0;
    // The key stops answering while the status check is under way: the resend that follows cannot open the number.
    server.use(
      http.get(`${COLLECTIONS_BASE_URL}/v1/collections/check/:referenceId`, () => {
        keyFails = true;
        return undefined;
      }),
    );
    const [waiting] = await till.recover();
    expect(waiting?.state).toBe('unknown');
    expect(createBodies()).toHaveLength(0);
    expect(lines).toContainEqual(
      `warn [tap-collections-sdk] payment ${REFERENCE_ID}: the API key could not be read to open its sealed number; judged without a resend`,
    );
    server.resetHandlers();
    server.use(...(await createSimulatorHandlers(simulator, { tapBaseUrl: TAP_BASE_URL, collectionsBaseUrl: COLLECTIONS_BASE_URL })));
    keyFails = false;
    const [resent] = await till.recover();
    expect(resent?.state).toBe('pending');
  });

  it('a record whose payment no longer matches its fingerprint is not resent, and it is said as an error', async () => {
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    // The same record with another amount: the rebuilt create would not be the payment that was pushed.
    const altered = new MemoryJournal();
    await altered.insert({ ...record, amount: record.amount + 1 } as PaymentRecord);
    requests.length = 0;
    const { logger, lines } = capturingLogger();
    const [recovered] = await refused({ journal: altered, logger, logLevel: 'error' }).recover();
    expect(recovered?.state).toBe('unknown');
    expect(createBodies()).toHaveLength(0);
    expect(lines).toContainEqual(
      `error [tap-collections-sdk] payment ${REFERENCE_ID}: the rebuilt create does not match the record's fingerprint; not resending it`,
    );
  });

  it.each([
    ['another version', (sealed: string) => sealed.replace(/^v1\./, 'v2.')],
    ['a part more', (sealed: string) => `${sealed}.extra`],
    ['a part less', (sealed: string) => sealed.split('.').slice(0, 2).join('.')],
    ['its ciphertext damaged', (sealed: string) => `${sealed.slice(0, -2)}${sealed.endsWith('AA') ? 'BB' : 'AA'}`],
  ])('a sealed number with %s does not open: judged without a resend, said', async (_what, damage) => {
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    const damaged = new MemoryJournal();
    await damaged.insert({ ...record, sealedPhoneNumber: damage(record.sealedPhoneNumber as string) } as PaymentRecord);
    requests.length = 0;
    const { logger, lines } = capturingLogger();
    const [recovered] = await refused({ journal: damaged, logger, logLevel: 'warn' }).recover();
    expect(recovered?.state).toBe('unknown');
    expect(createBodies()).toHaveLength(0);
    expect(lines).toContainEqual(expect.stringMatching(/its sealed number does not open with this API key/));
  });

  it('a number sealed by an earlier release opens with its key and reference id (any case), and with no other', async () => {
    // Written once by this release's sealPhoneNumber; records in journals hold such strings, so the format, the key
    // derivation (salt, info) and the additional data never change under them.
    const sealed = 'v1.0hHuOFZMs3dgtJUV.s06MRTNDQ8SuiNoUI-vlz6YRmwkH2HN4Zvo5MQ';
    const reference = '6F1C2D3E-4A5B-4C6D-8E7F-0123456789AB';
    expect(await unsealPhoneNumber('sk_test_vector_key', reference, sealed)).toBe('260971234567');
    expect(await unsealPhoneNumber('sk_test_vector_key', reference.toLowerCase(), sealed)).toBe('260971234567');
    expect(await unsealPhoneNumber('sk_test_other_key', reference, sealed)).toBeUndefined();
    expect(await unsealPhoneNumber('sk_test_vector_key', '6f1c2d3e-4a5b-4c6d-8e7f-0123456789ac', sealed)).toBeUndefined();
  });

  it('a sealed number is base64url whatever its bytes, and opens again for the resend', async () => {
    // An IV of bytes whose base64 is all '+' and '/': the two characters base64url replaces.
    vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      const bytes = array as unknown as Uint8Array;
      for (let index = 0; index < bytes.length; index++) bytes[index] = [0xfb, 0xef, 0xbe, 0xff][index % 4] as number;
      return array;
    });
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    const record = await leaveUnknown(till, journal);
    vi.restoreAllMocks();
    expect(record.sealedPhoneNumber).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('pending');
    const [first, resend] = createBodies();
    expect(resend).toBe(first);
  });
});

describe('what the resend of a journal record may and may not conclude', () => {
  it('a record left initiating (its writer stopped before recording the answer) is resent too', async () => {
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    const stopped = new MemoryJournal();
    await stopped.insert({ ...record, state: 'initiating' } as PaymentRecord);
    requests.length = 0;
    const [recovered] = await refused({ journal: stopped }).recover();
    expect(recovered?.state).toBe('pending');
    expect(createBodies()).toHaveLength(1);
  });

  it('a resend whose takeover another writer beat sends nothing: it answers from what that writer recorded', async () => {
    const journal = new MemoryJournal();
    const { logger, lines } = capturingLogger();
    const till = refused({ journal, maxRetries: 0, logger, logLevel: 'info' });
    await leaveUnknown(till, journal);
    const transition = journal.transition.bind(journal);
    let beaten = false;
    journal.transition = async (referenceId, version, change) => {
      if (!beaten && change.state === 'initiating') {
        beaten = true;
        // Another till's poll records the service's word between this resend's read and its takeover.
        await transition(referenceId, version, { state: 'pending', statusText: 'pending', by: 'another-till' });
      }
      return transition(referenceId, version, change);
    };
    requests.length = 0;
    const [recovered] = await till.recover();
    expect(beaten).toBe(true);
    expect(recovered).toMatchObject({ state: 'pending', version: 3 });
    expect(createBodies()).toHaveLength(0);
    expect(lines.filter((line) => line.includes('resending'))).toEqual([]);
  });

  it('a resend says so once, naming the reference and why its answer decides', async () => {
    const journal = new MemoryJournal();
    const { logger, lines } = capturingLogger();
    const till = refused({ journal, maxRetries: 0, logger, logLevel: 'info' });
    await leaveUnknown(till, journal);
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('pending');
    expect(lines.filter((line) => line.includes('resending'))).toEqual([
      expect.stringContaining(`resending the create of referenceId ${REFERENCE_ID}: the service refuses duplicates, so its answer decides`),
    ]);
  });

  it('a resend stopped before it left proves nothing of the earlier push: the record stays unknown, never not-sent', async () => {
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    await leaveUnknown(till, journal);
    // The caller stops as the resend takes the record over: no attempt of this call leaves, but the first may arrive.
    const controller = new AbortController();
    const reason = new Error('till closed');
    const transition = journal.transition.bind(journal);
    journal.transition = async (referenceId, version, change) => {
      const result = await transition(referenceId, version, change);
      if (change.state === 'initiating') controller.abort(reason);
      return result;
    };
    requests.length = 0;
    // The first push's outcome is still unknown: that, not the abort, is what the caller must hear.
    const error = await rejectionOf(till.recover({ signal: controller.signal }));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(createBodies()).toHaveLength(0);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });

  it('a journal that cannot tell the time before a resend: JournalError saying so, nothing sent', async () => {
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    await leaveUnknown(till, journal);
    journal.now = async () => {
      throw new Error('connection to the database lost');
    };
    requests.length = 0;
    const error = await rejectionOf(till.initiate(collectionInput()));
    expect((error as Error).message).toContain('Payment journal: could not read the clock: connection to the database lost');
    expect(createBodies()).toHaveLength(0);
  });

  it('a journal that cannot read the payment back after its resend: JournalError saying so, the resend made once', async () => {
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    await leaveUnknown(till, journal);
    requests.length = 0;
    const get = journal.get.bind(journal);
    journal.get = async (referenceId) => {
      if (createBodies().length > 0) throw new Error('connection to the database lost');
      return get(referenceId);
    };
    const error = await rejectionOf(till.recover());
    expect((error as Error).message).toContain('Payment journal: could not read the payment: connection to the database lost');
    expect(createBodies()).toHaveLength(1);
  });

  it('a 404 to the resend refuses nothing: the earlier push may exist, so the record stays open', async () => {
    const journal = new MemoryJournal();
    const till = refused({ journal, maxRetries: 0 });
    await leaveUnknown(till, journal);
    simulator.injectFault({ route: CREATE, status: 404, times: 1 });
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('unknown');
    expect(createBodies()).toHaveLength(2);
  });

  it('a record without a sealed number follows the unknown rule: closed not-sent once provably old', async () => {
    useFakeMonotonicClock();
    const clock = { offsetMs: 0 };
    const journal = new MemoryJournal({ now: () => Date.now() + clock.offsetMs });
    let keyReads = 0;
    // The key cannot be read when the number would be sealed; every later read answers.
    const apiKey = () => {
      if (++keyReads === 1) throw new Error('vault unavailable');
      return KEY;
    };
    const till = refused({ journal, maxRetries: 0, apiKey });
    const record = await leaveUnknown(till, journal);
    expect(record.sealedPhoneNumber).toBeUndefined();
    clock.offsetMs = 10 * 60_000;
    watchFor(10 * 60_000);
    requests.length = 0;
    const [recovered] = await till.recover();
    expect(recovered?.state).toBe('not-sent');
    expect(createBodies()).toHaveLength(0);
  });

  it('a journal clock that reads as no time proves no age: nothing is resent', async () => {
    class UnreadableClock extends MemoryJournal {
      override async now(): Promise<string> {
        return 'not a time';
      }
    }
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    const unreadable = new UnreadableClock();
    await unreadable.insert(record);
    requests.length = 0;
    await refused({ journal: unreadable })
      .recover()
      .catch(() => undefined);
    expect(createBodies()).toHaveLength(0);
    expect((await unreadable.get(REFERENCE_ID))?.state).toBe('unknown');
  });
});

describe('the duplicate answer is read from the data alone (the CLI passes errors of its own bundle)', () => {
  it('a 409, or a 422 whose errors[] flags referenceId with a uniqueness rule, and nothing else', () => {
    expect(isDuplicateReference({ status: 409 })).toBe(true);
    expect(isDuplicateReference({ status: 422, errors: [{ field: 'params.referenceId', rule: 'unique', message: '' }] })).toBe(true);
    // The same errors[] with another status is not the duplicate answer.
    expect(isDuplicateReference({ status: 400, errors: [{ field: 'params.referenceId', rule: 'unique', message: '' }] })).toBe(false);
    for (const other of [undefined, null, 409, '409', {}, { status: 422 }, { status: 422, errors: 'referenceId unique' }]) {
      expect(isDuplicateReference(other), JSON.stringify(other)).toBe(false);
    }
    // Items that are not field errors are skipped, not read.
    const odd = [
      null,
      'referenceId',
      { field: ['params.referenceId'], rule: 'unique' },
      { field: 'referenceId', rule: ['unique'] },
      { field: 'referenceId' },
    ];
    expect(isDuplicateReference({ status: 422, errors: odd })).toBe(false);
    expect(isDuplicateReference({ status: 422, errors: [...odd, { field: 'referenceId', rule: 'exists' }] })).toBe(true);
  });

  it("is evidence only in the service's own envelope", () => {
    expect(isDuplicateEvidence({ status: 409, serviceEnvelope: true })).toBe(true);
    expect(isDuplicateEvidence({ status: 409, serviceEnvelope: 'yes' })).toBe(false);
    expect(isDuplicateEvidence({ status: 409 })).toBe(false);
    expect(isDuplicateEvidence({ status: 400, serviceEnvelope: true })).toBe(false);
  });
});

describe('rebuildCreate keeps its own rules, whoever calls it', () => {
  /** A resend rule of this client's key, with `mismatch` as the deployment check's answer. */
  function rule(mismatch: Error | undefined) {
    const { logger, lines } = capturingLogger();
    const resendRule: ResendRule = {
      deploymentMismatch: async () => mismatch,
      duplicateMemoryMs: 60_000,
      apiKey: async () => KEY,
      logger: new LevelLogger(logger, 'warn'),
    };
    return { resendRule, lines };
  }

  it('only an open record is rebuilt: a pending one, with its sealed number, never', async () => {
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    const now = await journal.now();
    const { resendRule } = rule(undefined);
    expect(await rebuildCreate(record, resendRule, now)).toMatchObject({ referenceId: REFERENCE_ID });
    expect(await rebuildCreate({ ...record, state: 'pending' }, resendRule, now)).toBeUndefined();
  });

  it('a record pushed to another deployment is not rebuilt here, and it is said as an error naming why', async () => {
    const journal = new MemoryJournal();
    const record = await leaveUnknown(refused({ journal, maxRetries: 0 }), journal);
    const { resendRule, lines } = rule(new Error('its push went to https://other.test'));
    expect(await rebuildCreate(record, resendRule, await journal.now())).toBeUndefined();
    expect(lines).toEqual([
      `error [tap-collections-sdk] payment ${REFERENCE_ID}: not resending it here: its push went to https://other.test`,
    ]);
  });
});
