/**
 * The payment state machine's rules, one by one (docs/guide/journal.md, "The payment state machine"): what each
 * observation does to a record in each state (`decide`), how a fact and a conclusion meet a lost compare-and-set
 * (`advance`), and when a 404 may close a record (`settleNotFound`). The simulation checks the rules together under
 * crashes and races; these name each rule, so a rule removed or widened fails here by name.
 */
import { describe, expect, it } from 'vitest';
import type { PaymentChange, PaymentJournal, PaymentRecord, PaymentState } from '../../src/journal/journal.js';
import { MemoryJournal } from '../../src/journal/memory.js';
import { RecordWatch } from '../../src/journal/record-watch.js';
import { advance, decide, type PaymentObservation, settleNotFound } from '../../src/journal/state-machine.js';

const REFERENCE_ID = '7a0f3a52-7b4e-4f0c-9a43-3f4a1c2b9d10';
const STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown', 'rejected', 'not-sent', 'successful', 'failed'];
const FINAL: readonly PaymentState[] = ['rejected', 'not-sent', 'successful', 'failed'];
const ERROR = { name: 'ConnectionError', message: 'socket hang up' };

/** A record in `state`, as a journal holds it. */
function recordIn(state: PaymentState, fields: Partial<PaymentRecord> = {}): PaymentRecord {
  return {
    referenceId: REFERENCE_ID,
    state,
    productId: 'product',
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'x',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    version: 3,
    ...fields,
  };
}

const status = (state: 'successful' | 'failed' | 'pending', statusText: string = state): PaymentObservation => ({
  kind: 'status',
  state,
  statusText,
  transactionCode: 'TX1',
  reason: 'because',
  requestId: 'req-1',
});

describe('decide: what each observation does in each state', () => {
  it.for(STATES)('sending on %s: allowed only for initiating and unknown (a pending or final record is never sent again)', (state) => {
    const decision = decide(recordIn(state), { kind: 'sending', sendWindowMs: 106_000 }, 'till-1');
    if (state === 'initiating' || state === 'unknown') {
      expect(decision).toEqual({ kind: 'change', change: { state: 'initiating', sendWindowMs: 106_000, by: 'till-1' } });
    } else expect(decision).toEqual({ kind: 'refuse' });
  });

  it('sending writes where the push goes only into a record that does not know it yet, never over a known one', () => {
    const production = { baseUrl: 'https://collections.example', account: 'key:0123456789abcdef' };
    const sandbox = { baseUrl: 'https://sandbox.example', account: 'key:fedcba9876543210' };
    const sending = (deployment?: typeof production) => ({
      kind: 'sending' as const,
      sendWindowMs: 1_000,
      ...(deployment ? { deployment } : {}),
    });
    const changeOf = (decision: ReturnType<typeof decide>) => (decision.kind === 'change' ? decision.change : undefined);
    // An earlier release's record (none), or one whose account was not read: the attempt says where it goes.
    expect(changeOf(decide(recordIn('unknown'), sending(production), 'till-1'))).toHaveProperty('deployment', production);
    const unread = recordIn('unknown', { deployment: { baseUrl: production.baseUrl, account: '' } });
    expect(changeOf(decide(unread, sending(production), 'till-1'))).toHaveProperty('deployment', production);
    // A known deployment stays: what the record's push went to is never rewritten.
    const known = recordIn('unknown', { deployment: production });
    expect(changeOf(decide(known, sending(sandbox), 'till-1'))).not.toHaveProperty('deployment');
    // An attempt that does not say where it goes writes no deployment at all.
    expect(changeOf(decide(recordIn('unknown'), sending(), 'till-1'))).not.toHaveProperty('deployment');
  });

  it.for(STATES)('accepted on %s: an open record becomes pending with the service word; a final one keeps its state', (state) => {
    const decision = decide(recordIn(state), { kind: 'accepted', statusText: 'pending', requestId: 'req-9' }, 'till-1');
    // A 202 for a payment closed as never sent or refused contradicts it: marked, never moved.
    if (state === 'not-sent' || state === 'rejected') {
      expect(decision).toMatchObject({ kind: 'contradiction', statusText: 'pending' });
      expect(decision.kind === 'contradiction' && decision.change?.state).toBe(state);
    } else if (FINAL.includes(state)) expect(decision).toEqual({ kind: 'keep' });
    else if (state === 'pending') expect(decision).toEqual({ kind: 'change', change: expect.objectContaining({ state: 'pending' }) });
    else {
      expect(decision).toEqual({
        kind: 'change',
        change: { state: 'pending', statusText: 'pending', requestId: 'req-9', by: 'till-1' },
      });
    }
  });

  it('accepted on a pending record: kept when its word is the same, written when the service says something new', () => {
    const same = decide(recordIn('pending', { statusText: 'pending' }), { kind: 'accepted', statusText: 'pending' }, 'till-1');
    expect(same).toEqual({ kind: 'keep' });
    const newWord = decide(recordIn('pending', { statusText: 'pending' }), { kind: 'accepted', statusText: 'processing' }, 'till-1');
    expect(newWord).toEqual({ kind: 'change', change: { state: 'pending', statusText: 'processing', requestId: undefined, by: 'till-1' } });
  });

  it.for(STATES)('a final status on %s: an open record takes it with every detail; a final one keeps its state', (state) => {
    for (const outcome of ['successful', 'failed'] as const) {
      const decision = decide(recordIn(state, { statusText: 'pending' }), status(outcome), 'worker:1');
      // The same outcome again is kept; any other final answer contradicts the record: marked, its state kept.
      if (state === outcome) expect(decision).toEqual({ kind: 'keep' });
      else if (FINAL.includes(state)) {
        expect(decision).toMatchObject({ kind: 'contradiction', statusText: outcome });
        expect(decision.kind === 'contradiction' && decision.change?.state).toBe(state);
      } else {
        expect(decision).toEqual({
          kind: 'change',
          change: { state: outcome, statusText: outcome, transactionCode: 'TX1', reason: 'because', requestId: 'req-1', by: 'worker:1' },
        });
      }
    }
  });

  it('a pending status: proves an initiating or unknown record exists; on a pending record only a new word is written', () => {
    for (const state of ['initiating', 'unknown'] as const) {
      expect(decide(recordIn(state, { statusText: 'pending' }), status('pending'), 'recover')).toEqual({
        kind: 'change',
        change: expect.objectContaining({ state: 'pending', statusText: 'pending', by: 'recover' }),
      });
    }
    expect(decide(recordIn('pending', { statusText: 'pending' }), status('pending'), 'recover')).toEqual({ kind: 'keep' });
    expect(decide(recordIn('pending', { statusText: 'pending' }), status('pending', 'processing'), 'recover')).toEqual({
      kind: 'change',
      change: expect.objectContaining({ state: 'pending', statusText: 'processing' }),
    });
    // A final status on a pending record with the same word as before still settles it.
    expect(decide(recordIn('pending', { statusText: 'done' }), status('successful', 'done'), 'recover')).toEqual({
      kind: 'change',
      change: expect.objectContaining({ state: 'successful' }),
    });
  });

  it.for(STATES)('not-found on %s: closes only a record the service may never have received (initiating, unknown)', (state) => {
    const decision = decide(recordIn(state), { kind: 'not-found' }, 'recover');
    if (state === 'initiating' || state === 'unknown') {
      expect(decision).toEqual({ kind: 'change', change: { state: 'not-sent', by: 'recover' } });
    } else expect(decision).toEqual({ kind: 'keep' });
  });

  const createEnds = [
    ['create-unknown', 'unknown'],
    ['create-refused', 'rejected'],
    ['create-not-sent', 'not-sent'],
  ] as const;
  it.for(createEnds)("%s: ends only this call's own initiating record, as %s, with the error", ([kind, to]) => {
    for (const state of STATES) {
      const decision = decide(recordIn(state), { kind, error: ERROR }, 'initiate');
      if (state === 'initiating') expect(decision).toEqual({ kind: 'change', change: { state: to, error: ERROR, by: 'initiate' } });
      else expect(decision).toEqual({ kind: 'keep' });
    }
  });
});

/** A journal holding one record in `state`, and its version. */
async function journalWith(state: PaymentState, options: { now?: () => number } = {}): Promise<MemoryJournal> {
  const journal = new MemoryJournal(options.now === undefined ? {} : { now: options.now });
  await journal.insert({
    referenceId: REFERENCE_ID,
    state,
    productId: 'product',
    amount: 25,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'x',
    ...(state === 'initiating' ? { sendWindowMs: 1_000 } : {}),
  });
  return journal;
}

/** A journal whose every `transition` first lets `meanwhile` write (another writer winning the race), `times` times. */
function racedBy(journal: MemoryJournal, meanwhile: (journal: MemoryJournal) => Promise<void>, times = 1): PaymentJournal {
  let left = times;
  return new Proxy(journal, {
    get(target, property, receiver) {
      if (property === 'transition') {
        return async (...args: Parameters<MemoryJournal['transition']>) => {
          if (left-- > 0) await meanwhile(target);
          return target.transition(...args);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Another writer's write: the record moves to pending with `statusText` (version + 1). */
async function writePending(journal: MemoryJournal, statusText: string): Promise<void> {
  await writeNow(journal, { state: 'pending', statusText, by: 'another writer' });
}

/** Another writer's write on the record as it is now (a compare-and-set on its current version). */
async function writeNow(journal: MemoryJournal, change: PaymentChange): Promise<void> {
  const current = (await journal.get(REFERENCE_ID)) as PaymentRecord;
  await journal.transition(REFERENCE_ID, current.version, change);
}

describe('advance: facts and conclusions through the compare-and-set', () => {
  it('applies a change and says so; a keep writes nothing; a record that is not there is reported absent', async () => {
    const journal = await journalWith('initiating');
    const moved = await advance(journal, REFERENCE_ID, { kind: 'accepted', statusText: 'pending' }, 'till-1');
    expect(moved).toEqual({ record: expect.objectContaining({ state: 'pending', version: 2 }), applied: true, refused: false });
    const kept = await advance(journal, REFERENCE_ID, { kind: 'accepted', statusText: 'pending' }, 'till-1');
    expect(kept).toEqual({ record: expect.objectContaining({ state: 'pending', version: 2 }), applied: false, refused: false });
    expect(await advance(journal, 'f0f0f0f0-0000-4000-8000-000000000000', status('successful'), 'till-1')).toEqual({
      record: undefined,
      applied: false,
      refused: false,
    });
  });

  it('a refused sending is reported refused, and nothing is written', async () => {
    const journal = await journalWith('pending');
    const refused = await advance(journal, REFERENCE_ID, { kind: 'sending', sendWindowMs: 1_000 }, 'till-1');
    expect(refused).toEqual({ record: expect.objectContaining({ state: 'pending', version: 1 }), applied: false, refused: true });
  });

  it('a fact that loses the race is decided again on the record as it is now', async () => {
    const memory = await journalWith('initiating');
    const journal = racedBy(memory, (target) => writePending(target, 'processing'));
    const settled = await advance(journal, REFERENCE_ID, status('successful'), 'worker:1');
    expect(settled.applied).toBe(true);
    expect(settled.record).toMatchObject({ state: 'successful', version: 3 });
  });

  it('a fact that loses the race to an equal write is kept, not written twice', async () => {
    const memory = await journalWith('initiating');
    const journal = racedBy(memory, (target) => writePending(target, 'pending'));
    const seen = await advance(journal, REFERENCE_ID, status('pending'), 'worker:1');
    expect(seen).toEqual({ record: expect.objectContaining({ state: 'pending', version: 2 }), applied: false, refused: false });
  });

  it('a conclusion that loses the race is dropped: the writer read a version someone has acted on since', async () => {
    const memory = await journalWith('initiating');
    const read = (await memory.get(REFERENCE_ID)) as PaymentRecord;
    // Another attempt began meanwhile (it wrote initiating again): the 404 was about the record before it.
    const journal = racedBy(memory, async (target) => {
      await target.transition(REFERENCE_ID, read.version, { state: 'initiating', sendWindowMs: 1_000, by: 'another till' });
    });
    const closed = await advance(journal, REFERENCE_ID, { kind: 'not-found' }, 'recover', read);
    expect(closed).toEqual({ record: expect.objectContaining({ state: 'initiating', version: 2 }), applied: false, refused: false });
    expect((await memory.get(REFERENCE_ID))?.state).toBe('initiating');
  });

  it('a sending that loses the race is refused: another attempt may be on its way', async () => {
    const memory = await journalWith('unknown');
    const read = (await memory.get(REFERENCE_ID)) as PaymentRecord;
    const journal = racedBy(memory, async (target) => {
      await target.transition(REFERENCE_ID, read.version, { state: 'initiating', sendWindowMs: 1_000, by: 'another till' });
    });
    const sending = await advance(journal, REFERENCE_ID, { kind: 'sending', sendWindowMs: 1_000 }, 'till-1', read);
    expect(sending).toEqual({ record: expect.objectContaining({ version: 2 }), applied: false, refused: true });
  });

  it('gives up after 16 lost races on a record that keeps moving, and a sending is then refused', async () => {
    const memory = await journalWith('initiating');
    let word = 0;
    const journal = racedBy(
      memory,
      async (target) => {
        await writeNow(target, { state: 'initiating', sendWindowMs: word++, by: 'another till' });
      },
      Number.POSITIVE_INFINITY,
    );
    const fact = await advance(journal, REFERENCE_ID, status('pending'), 'worker:1');
    expect(fact.applied).toBe(false);
    expect(fact.refused).toBe(false);
    expect(fact.record?.version).toBe(1 + 16);
    const sending = await advance(journal, REFERENCE_ID, { kind: 'sending', sendWindowMs: 1_000 }, 'till-1');
    expect(sending).toMatchObject({ applied: false, refused: true });
  });
});

/**
 * A process that has watched every record longer than any wait: these cases test the journal clock's rule alone
 * (the monotonic watch's rule: test/journal/record-watch.test.ts and test/journal/one-404-rule.test.ts).
 */
class WatchedLongEnough extends RecordWatch {
  override watched(): number {
    return Number.MAX_SAFE_INTEGER;
  }
}
const watchedLongEnough = () => new WatchedLongEnough();

describe('settleNotFound: a 404 closes a record only when nothing can still arrive', () => {
  /** A journal whose clock the test moves; the record is written at 0 with a 1 s window. */
  async function clocked(state: PaymentState = 'initiating') {
    const clock = { now: Date.parse('2026-01-01T00:00:00.000Z') };
    const journal = await journalWith(state, { now: () => clock.now });
    let rechecks = 0;
    const recheck = async () => {
      rechecks++;
      return 'not-found' as const;
    };
    return { clock, journal, recheck, rechecks: () => rechecks };
  }

  it('too young by the journal clock (window + grace not yet over): not decidable, no recheck asked', async () => {
    const { clock, journal, recheck, rechecks } = await clocked();
    clock.now += 1_000 + 5_000 - 1;
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 5_000, recheck, 'recover');
    expect(verdict).toEqual({
      record: expect.objectContaining({ state: 'initiating' }),
      applied: false,
      refused: false,
      decidable: false,
      decidableAt: '2026-01-01T00:00:06.000Z',
    });
    expect(rechecks()).toBe(0);
  });

  it('exactly at window + grace: rechecks, and on a second 404 closes it as not-sent', async () => {
    const { clock, journal, recheck, rechecks } = await clocked();
    clock.now += 1_000 + 5_000;
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 5_000, recheck, 'recover');
    expect(verdict).toEqual({ record: expect.objectContaining({ state: 'not-sent' }), applied: true, refused: false, decidable: true });
    expect(rechecks()).toBe(1);
  });

  it('an unknown record without a recorded window is judged by the longest window: never closed, no time given', async () => {
    const { clock, journal, recheck, rechecks } = await clocked('unknown');
    clock.now += 365 * 24 * 3_600_000;
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, -60_000, recheck, 'recover');
    expect(verdict).toMatchObject({ record: { state: 'unknown' }, applied: false, decidable: false });
    expect(verdict.decidableAt).toBeUndefined();
    expect(rechecks()).toBe(0);
  });

  it('a negative grace never shortens the window', async () => {
    const { clock, journal, recheck, rechecks } = await clocked();
    clock.now += 999;
    expect((await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, -60_000, recheck, 'recover')).decidable).toBe(false);
    expect(rechecks()).toBe(0);
  });

  it('a status found on the recheck is recorded instead', async () => {
    const { clock, journal } = await clocked();
    clock.now += 60_000;
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 0, async () => status('pending') as never, 'recover');
    expect(verdict).toEqual({ record: expect.objectContaining({ state: 'pending' }), applied: true, refused: false, decidable: true });
  });

  it('a pending or final record is not for a 404 to decide; an absent one is not decidable', async () => {
    for (const state of ['pending', 'successful'] as const) {
      const { clock, journal, recheck, rechecks } = await clocked(state);
      clock.now += 60_000;
      const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 0, recheck, 'recover');
      expect(verdict).toEqual({ record: expect.objectContaining({ state }), applied: false, refused: false, decidable: true });
      expect(rechecks()).toBe(0);
    }
    const empty = new MemoryJournal();
    expect(await settleNotFound(empty, watchedLongEnough(), REFERENCE_ID, 0, async () => 'not-found', 'recover')).toEqual({
      record: undefined,
      applied: false,
      refused: false,
      decidable: false,
    });
  });

  it('initiate taking a record over after a 404 writes sending (initiating again), not not-sent', async () => {
    const { clock, journal, recheck } = await clocked();
    clock.now += 60_000;
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 0, recheck, 'initiate', {
      kind: 'sending',
      sendWindowMs: 2_000,
    });
    expect(verdict).toMatchObject({ applied: true, decidable: true, record: { state: 'initiating', sendWindowMs: 2_000 } });
  });

  it("a takeover whose recheck 404 carries a request id still writes sending: the 404's id names only a not-sent close", async () => {
    const { clock, journal } = await clocked();
    clock.now += 60_000;
    const verdict = await settleNotFound(
      journal,
      watchedLongEnough(),
      REFERENCE_ID,
      0,
      async () => ({ kind: 'not-found', requestId: 'req-404' }),
      'initiate',
      { kind: 'sending', sendWindowMs: 2_000 },
    );
    expect(verdict).toMatchObject({ applied: true, decidable: true, record: { state: 'initiating', sendWindowMs: 2_000 } });
  });

  it('an attempt that began between the recheck and the close: decided again from the new record, which is too young', async () => {
    const { clock, journal } = await clocked();
    clock.now += 60_000;
    let rechecks = 0;
    const verdict = await settleNotFound(
      journal,
      watchedLongEnough(),
      REFERENCE_ID,
      0,
      async () => {
        rechecks++;
        // A till's new attempt writes the record (initiating again, a fresh window) while the 404 is on its way.
        await writeNow(journal, { state: 'initiating', sendWindowMs: 30_000, by: 'till-2' });
        return 'not-found';
      },
      'recover',
    );
    expect(verdict).toEqual({
      record: expect.objectContaining({ state: 'initiating', version: 2 }),
      applied: false,
      refused: false,
      decidable: false,
      // The new window from the journal's now: 30 s.
      decidableAt: '2026-01-01T00:01:30.000Z',
    });
    expect(rechecks).toBe(1);
  });

  it('a record closed by someone else between the recheck and the close is reported as it is, decided', async () => {
    const { clock, journal } = await clocked();
    clock.now += 60_000;
    const verdict = await settleNotFound(
      journal,
      watchedLongEnough(),
      REFERENCE_ID,
      0,
      async () => {
        await writeNow(journal, { state: 'failed', statusText: 'failed', by: 'worker:2' });
        return 'not-found';
      },
      'recover',
    );
    expect(verdict).toEqual({ record: expect.objectContaining({ state: 'failed' }), applied: false, refused: false, decidable: true });
  });

  it('a record gone from the journal when the close is written (a store that purged it): reported absent, decided', async () => {
    const { clock, journal: memory, recheck } = await clocked();
    clock.now += 60_000;
    const journal = new Proxy(memory, {
      get(target, property, receiver) {
        if (property === 'transition') return async () => ({ applied: false, record: undefined });
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const verdict = await settleNotFound(journal, watchedLongEnough(), REFERENCE_ID, 0, recheck, 'recover');
    expect(verdict).toEqual({ record: undefined, applied: false, refused: false, decidable: true });
  });

  it('gives up undecided after 16 rounds on a record that keeps being rewritten', async () => {
    const { clock, journal } = await clocked();
    clock.now += 60_000;
    let rechecks = 0;
    const verdict = await settleNotFound(
      journal,
      watchedLongEnough(),
      REFERENCE_ID,
      0,
      async () => {
        rechecks++;
        // Rewritten with no window: old enough again on the next round, and rewritten again.
        await writeNow(journal, { state: 'initiating', sendWindowMs: 0, by: 'till-2' });
        return 'not-found';
      },
      'recover',
    );
    expect(rechecks).toBe(16);
    expect(verdict).toEqual({
      record: expect.objectContaining({ state: 'initiating', version: 17 }),
      applied: false,
      refused: false,
      decidable: false,
    });
  });
});

describe('advance: a contradiction', () => {
  /** A record the journal holds `failed` (version 2). */
  async function failedRecord(): Promise<MemoryJournal> {
    const journal = await journalWith('initiating');
    await writeNow(journal, { state: 'failed', statusText: 'failed', by: 'till-1' });
    return journal;
  }

  it('marks the final record and says it wrote (applied); the same word again writes nothing and says so', async () => {
    const journal = await failedRecord();
    const marked = await advance(journal, REFERENCE_ID, status('successful'), 'worker:1');
    expect(marked).toEqual({
      record: expect.objectContaining({
        state: 'failed',
        version: 3,
        contradiction: expect.objectContaining({ statusText: 'successful' }),
      }),
      applied: true,
      refused: false,
      contradiction: { statusText: 'successful' },
    });
    const again = await advance(journal, REFERENCE_ID, status('successful'), 'worker:1');
    expect(again).toEqual({
      record: expect.objectContaining({ state: 'failed', version: 3 }),
      applied: false,
      refused: false,
      contradiction: { statusText: 'successful' },
    });
  });

  it('a mark that loses the race to a mark with another word is decided again: its own word is marked after it', async () => {
    const memory = await failedRecord();
    const journal = racedBy(memory, async (target) => {
      await advance(target, REFERENCE_ID, status('successful', 'SUCCESS'), 'worker:2');
    });
    const marked = await advance(journal, REFERENCE_ID, status('successful'), 'worker:1');
    expect(marked).toMatchObject({ applied: true, record: { version: 4, contradiction: { statusText: 'successful' } } });
    expect((await memory.history(REFERENCE_ID)).map((event) => event.statusText)).toEqual([undefined, 'failed', 'SUCCESS', 'successful']);
  });
});

describe("settleNotFound: this process's watch of the record", () => {
  /** Watched longer than any wait, and every call noted. */
  class NotedWatch extends RecordWatch {
    readonly calls: string[] = [];
    override watched(record: Pick<PaymentRecord, 'referenceId' | 'version' | 'updatedAt'>): number {
      this.calls.push(`watched v${record.version}`);
      return Number.MAX_SAFE_INTEGER;
    }
    override forget(): void {
      this.calls.push('forget');
    }
  }
  const old = () => Date.parse('2026-01-01T00:00:00.000Z');
  const later = () => old() + 60_000;
  const notFound = async () => 'not-found' as const;

  it('a record no longer for a 404 to decide (pending) is forgotten', async () => {
    const journal = await journalWith('pending');
    const watch = new NotedWatch();
    await settleNotFound(journal, watch, REFERENCE_ID, 0, notFound, 'recover');
    expect(watch.calls).toEqual(['forget']);
  });

  it('closed not-sent: forgotten', async () => {
    let now = old;
    const journal = await journalWith('initiating', { now: () => now() });
    now = later;
    const watch = new NotedWatch();
    const verdict = await settleNotFound(journal, watch, REFERENCE_ID, 0, notFound, 'recover');
    expect(verdict.record?.state).toBe('not-sent');
    expect(watch.calls).toEqual(['watched v1', 'forget']);
  });

  it("taken over (sending): the new attempt's version is watched from its own write", async () => {
    let now = old;
    const journal = await journalWith('initiating', { now: () => now() });
    now = later;
    const watch = new NotedWatch();
    const verdict = await settleNotFound(journal, watch, REFERENCE_ID, 0, notFound, 'initiate', { kind: 'sending', sendWindowMs: 2_000 });
    expect(verdict.record).toMatchObject({ state: 'initiating', version: 2 });
    expect(watch.calls).toEqual(['watched v1', 'watched v2']);
  });
});
