/**
 * What a failed journaled `initiate` records, by what its error proves (src/collections/journaled-initiate.ts,
 * `failure`): a connection refused before anything was sent closes the payment `not-sent` (the sale may start over);
 * a connection cut after sending leaves it `unknown`; but "nothing was sent" speaks for the call's own attempts only,
 * so a call refused while another process resent its record answers from that record. And a record that disappears
 * from the journal between two attempts stops the resend. A scripted `fetch` plays the network.
 */
import { describe, expect, it, vi } from 'vitest';
import { CollectionsClient, ConnectionError, MemoryJournal, type PaymentJournal, UnknownOutcomeError } from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';
import { rejectionOf } from '../helpers/tap.js';

const REFERENCE_ID = '3b9c1f0e-2d4a-4e6b-8c7d-9a0b1c2d3e4f';
const input = { productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', phoneNumber: '0977123456', amount: 5, referenceId: REFERENCE_ID };

/** Bun's refused connection: the code on the error itself (the transport reads it as nothing sent). */
const refused = () => Object.assign(new TypeError('ECONNREFUSED: Unable to connect'), { code: 'ECONNREFUSED' });
/** undici's reset: the request may have reached the service. */
const reset = () => new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });

function client(journal: PaymentJournal, fetch: () => Promise<Response>, maxRetries = 0) {
  return new CollectionsClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:39999', logLevel: 'off', maxRetries, journal, fetch });
}

describe('a journaled initiate whose connection fails', () => {
  it('refused before anything was sent: ConnectionError, and the journal closes the payment not-sent', async () => {
    const journal = new MemoryJournal();
    let calls = 0;
    const error = await rejectionOf(
      client(journal, async () => {
        calls++;
        throw refused();
      }).initiate(input),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(false);
    expect(calls).toBe(1);
    expect(await journal.get(REFERENCE_ID)).toMatchObject({ state: 'not-sent', error: { name: 'ConnectionError' } });
  });

  it('cut after sending: UnknownOutcomeError, and the journal keeps the payment unknown (never not-sent)', async () => {
    const journal = new MemoryJournal();
    const error = await rejectionOf(
      client(journal, async () => {
        throw reset();
      }).initiate(input),
    );
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
  });
});

describe('a record gone from the journal between two attempts', () => {
  it('stops the resend: UnknownOutcomeError saying the record is absent, one POST only', async () => {
    let posts = 0;
    // A store that loses the record (purged by an operator) after the first attempt left: a MemoryJournal with its
    // reads and writes shadowed.
    let lost = false;
    const journal = new MemoryJournal();
    const get = journal.get.bind(journal);
    const transition = journal.transition.bind(journal);
    Object.assign(journal, {
      get: async (referenceId: string) => (lost ? undefined : get(referenceId)),
      transition: async (...args: Parameters<MemoryJournal['transition']>) =>
        lost ? { record: undefined, applied: false } : transition(...args),
    });
    const error = await rejectionOf(
      client(
        journal,
        async () => {
          posts++;
          lost = true;
          return new Response(JSON.stringify({ success: false, code: 'E_UNAVAILABLE', message: 'down' }), {
            status: 429,
            headers: { 'content-type': 'application/json', 'retry-after': '0' },
          });
        },
        2,
      ).initiate(input),
    );
    expect(posts).toBe(1);
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(((error as UnknownOutcomeError).cause as Error).message).toBe(
      'Payment journal: the payment was written by another process meanwhile (now absent); not resending',
    );
    // The call's own attempt, sent under its first write, may still arrive until that write's window has passed:
    // the till is told when a verdict becomes possible, even though the record is gone.
    expect(Date.parse((error as UnknownOutcomeError).decidableAt ?? '')).toBeGreaterThan(Date.now());
  });
});

describe("an attempt's deadline", () => {
  /**
   * Readers measure a push's window from `updatedAt`, when the `initiating` write landed. If the attempt's deadline
   * counted from the moment this process heard the write was acknowledged, a pause in between (GC, a suspended VM, a
   * slow journal) would carry the push past that window: the simulation found a push committing 9.5 s after
   * `updatedAt + window + grace` that way. Here the acknowledgement arrives 29.9 s (of a 30 s limit) after the write
   * was issued: the attempt gets the 0.1 s left, not another 30 s (the test's own 10 s limit would stop the old rule).
   * Meanwhile the wall clock steps back a minute: the deadline is on the monotonic clock, so the step gives the
   * attempt nothing (on the wall clock it would have had 60.1 s more).
   */
  it('counts from before the write was issued, on the monotonic clock: an acknowledgement 29.9 s late leaves the attempt 0.1 s, a wall clock stepped back a minute none more', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance'], now: Date.parse('2026-11-25T10:00:00Z') });
    try {
      const journal = new MemoryJournal();
      const insert = journal.insert.bind(journal);
      journal.insert = async (record) => {
        const stored = await insert(record);
        vi.advanceTimersByTime(29_900);
        vi.setSystemTime(Date.now() - 60_000);
        return stored;
      };
      let aborted = false;
      // The push hangs until its deadline cuts it; the status lookup that follows finds the service unreachable.
      const hangsUntilAborted = async (request: Request | string | URL, init?: RequestInit) => {
        const method = init?.method ?? (request instanceof Request ? request.method : 'GET');
        if (method !== 'POST') throw reset();
        return new Promise<Response>((_, reject) => {
          const signal = init?.signal ?? (request instanceof Request ? request.signal : undefined);
          signal?.addEventListener('abort', () => {
            aborted = true;
            reject(signal.reason);
          });
        });
      };
      const error = await rejectionOf(client(journal, hangsUntilAborted as () => Promise<Response>).initiate(input));
      expect(error).toBeInstanceOf(UnknownOutcomeError);
      expect(aborted).toBe(true);
      expect((await journal.get(REFERENCE_ID))?.state).toBe('unknown');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a call's attempt refused while another writer resent its record (a service that refuses duplicates)", () => {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const accepted = async () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } });
  function refusing(journal: PaymentJournal, fetch: (request: Request) => Promise<Response>) {
    return new CollectionsClient({
      apiKey: API_KEY,
      baseUrl: 'http://127.0.0.1:39999',
      logLevel: 'off',
      maxRetries: 0,
      journal,
      fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(new Request(input, init)),
      duplicateReferences: 'refused',
    });
  }

  it.each([
    ['accepted: the caller is told pending, from the record the other writer left', accepted, 'pending'],
    ['unknown: UnknownOutcomeError, never "nothing was sent"', async () => Promise.reject(reset()), 'unknown'],
  ] as const)("the other writer's resend %s", async (_, answerToItsCreate, state) => {
    const journal = new MemoryJournal();
    const creates: string[] = [];
    // The other process: the service's own 404 for the reference (its base URL proved by /health), then its resend.
    const other = refusing(journal, async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/health') return json(200, { success: true, data: { status: 'ok' } });
      if (request.method === 'GET') return json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' });
      creates.push(path);
      return answerToItsCreate();
    });
    const settled = await refusing(journal, async () => {
      // The other process resends the open record while this call's own attempt is on its way; this one is refused.
      await other.recover().catch(() => undefined);
      throw refused();
    })
      .initiate(input)
      .then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
    expect(creates).toHaveLength(1);
    expect((await journal.get(REFERENCE_ID))?.state).toBe(state);
    if (state === 'pending') expect(settled).toEqual({ result: expect.objectContaining({ referenceId: REFERENCE_ID, status: 'pending' }) });
    else expect('error' in settled && settled.error).toBeInstanceOf(UnknownOutcomeError);
  });
  it.each([
    ['successful', 'resolves with it', 'successful'],
    ['failed', 'resolves with it', 'failed'],
    ['rejected', 'the attempt’s own error stands (nothing of this call was sent, and the payment is closed)', undefined],
  ] as const)("another writer recorded the payment %s while this call's attempt was refused: %s", async (state, _, status) => {
    const journal = new MemoryJournal();
    const settled = await refusing(journal, async () => {
      // Another process's write lands while this call's attempt is on its way; then this attempt is refused.
      const current = await journal.get(REFERENCE_ID);
      if (current !== undefined) await journal.transition(REFERENCE_ID, current.version, { state, statusText: state, by: 'another-till' });
      throw refused();
    })
      .initiate(input)
      .then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
    if (status !== undefined) expect(settled).toEqual({ result: expect.objectContaining({ referenceId: REFERENCE_ID, status }) });
    else expect('error' in settled && settled.error).toBeInstanceOf(ConnectionError);
    expect((await journal.get(REFERENCE_ID))?.state).toBe(state);
  });

  it("this call's attempt refused by the service itself (a 400) while another writer's resend was accepted: pending", async () => {
    const journal = new MemoryJournal();
    const other = refusing(journal, async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/health') return json(200, { success: true, data: { status: 'ok' } });
      if (request.method === 'GET') return json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' });
      return accepted();
    });
    const result = await refusing(journal, async () => {
      await other.recover().catch(() => undefined);
      return json(400, { success: false, code: 'E_BAD_REQUEST', message: 'bad request' });
    }).initiate(input);
    expect(result).toMatchObject({ referenceId: REFERENCE_ID, status: 'pending' });
    expect((await journal.get(REFERENCE_ID))?.state).toBe('pending');
  });
});
