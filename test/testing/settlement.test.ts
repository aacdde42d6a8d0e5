/** Settlement of collections: after N status checks, after elapsed time (manual clock, no waiting), or by hand. */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  COLLECTIONS_API_KEYS,
  createManualClock,
  createSimulator,
  OUTCOMES,
  PARTNERS,
  PHONES,
  PRODUCTS,
  type RunningSimulator,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from '../../src/testing/index.js';
import { collectionInput, collectionsApi } from './harness.js';

const clock = createManualClock(Date.UTC(2026, 10, 21, 10, 0, 0));
let running: RunningSimulator;
const api = collectionsApi(() => running.collectionsBaseUrl);

beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ now: clock.now }) });
});
afterEach(() => running.simulator.reset());
afterAll(() => running.close());

async function withSimulator(options: SimulatorOptions, body: (simulator: Simulator) => Promise<void>) {
  const simulator = createSimulator({ now: clock.now, ...options });
  const previous = running;
  running = await startSimulator({ simulator });
  try {
    await body(simulator);
  } finally {
    await running.close();
    running = previous;
  }
}

async function create(overrides: Record<string, unknown> = {}): Promise<string> {
  const input = collectionInput(overrides);
  expect((await api.initiate(input)).status).toBe(202);
  return input.referenceId as string;
}

const statusOf = async (referenceId: string) => (await api.check(referenceId)).body.data.statusText as string;

describe('settlement by status checks', () => {
  it('by default, answers pending to the first check and settles on the second', async () => {
    const referenceId = await create();
    expect(await statusOf(referenceId)).toBe('pending');
    const settled = await api.check(referenceId);
    expect(settled.body.data).toEqual({
      referenceId,
      statusText: 'successful',
      transactionCode: 'SUCCESS',
      reason: OUTCOMES.successful.reason,
    });
    expect(await statusOf(referenceId)).toBe('successful');
  });

  it('honours pendingPolls', async () => {
    await withSimulator({ settlement: { pendingPolls: 3, pendingMs: Number.POSITIVE_INFINITY } }, async () => {
      const referenceId = await create();
      expect([await statusOf(referenceId), await statusOf(referenceId), await statusOf(referenceId)]).toEqual([
        'pending',
        'pending',
        'pending',
      ]);
      expect(await statusOf(referenceId)).toBe('successful');
    });
  });

  it('settles on the first check with pendingPolls 0', async () => {
    await withSimulator({ settlement: { pendingPolls: 0 } }, async () => {
      expect(await statusOf(await create())).toBe('successful');
    });
  });

  it('does not count GET /v1/collections/:id as a status check', async () => {
    const referenceId = await create();
    const [stored] = running.simulator.collections();
    for (let index = 0; index < 3; index++) expect((await api.get(stored?.id as string)).body.data.status).toBe('pending');
    expect(await statusOf(referenceId)).toBe('pending');
    expect(running.simulator.collections()[0]?.statusChecks).toBe(1);
  });
});

describe('settlement by elapsed time (injected clock)', () => {
  it('settles once pendingMs have passed, stamping updatedAt at the due moment', async () => {
    await withSimulator({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: 1000 } }, async (simulator) => {
      const referenceId = await create({ phoneNumber: PHONES.insufficientFunds });
      clock.advance(999);
      expect(await statusOf(referenceId)).toBe('pending');
      clock.advance(5000);
      const [record] = simulator.collections();
      const details = (await api.get(record?.id as string)).body.data;
      expect(details).toMatchObject({ status: 'failed', transactionCode: 'INSUFFICIENT_FUNDS' });
      expect(Date.parse(details.updatedAt) - Date.parse(details.createdAt)).toBe(1000);
    });
  });

  it('uses the injected clock for createdAt', async () => {
    await create();
    const [record] = running.simulator.collections();
    expect(record?.createdAt).toBe(new Date(clock.now()).toISOString());
  });
});

describe('manual control', () => {
  it('keeps PHONES.neverSettles pending until simulator.settle', async () => {
    const referenceId = await create({ phoneNumber: PHONES.neverSettles });
    clock.advance(60_000);
    for (let index = 0; index < 5; index++) expect(await statusOf(referenceId)).toBe('pending');
    running.simulator.settle(referenceId, 'failed');
    expect((await api.check(referenceId)).body.data).toMatchObject({ statusText: 'failed', transactionCode: 'INTERNAL_SYSTEM_ERROR' });
  });

  it('settles with a chosen outcome, and refuses to settle twice or something unknown', async () => {
    const referenceId = await create();
    const outcome = { status: 'failed', transactionCode: 'TIMEOUT', reason: 'The customer did not answer the prompt' } as const;
    running.simulator.settle(referenceId, outcome);
    expect((await api.check(referenceId)).body.data).toEqual({
      referenceId,
      statusText: 'failed',
      transactionCode: 'TIMEOUT',
      reason: outcome.reason,
    });
    expect(() => running.simulator.settle(referenceId, 'successful')).toThrow(/already settled/);
    expect(() => running.simulator.settle(globalThis.crypto.randomUUID())).toThrow(/No collection/);
  });

  it('settles only the given partner when asked', async () => {
    const input = collectionInput();
    await api.initiate(input);
    await api.initiate({ ...input, productId: PRODUCTS.second }, COLLECTIONS_API_KEYS.second);
    running.simulator.settle(input.referenceId as string, 'successful', PARTNERS.second.partnerId);
    const byPartner = running.simulator.collections().map((record) => [record.partnerId, record.status]);
    expect(byPartner).toEqual([
      [PARTNERS.primary.partnerId, 'pending'],
      [PARTNERS.second.partnerId, 'successful'],
    ]);
  });

  it('plans outcomes by phone number until reset, and changes settlement rules at run time', async () => {
    running.simulator.planOutcome('0977555555', OUTCOMES.declined);
    running.simulator.configureSettlement({ pendingPolls: 0 });
    try {
      const referenceId = await create({ phoneNumber: '+260977555555' });
      expect((await api.check(referenceId)).body.data.transactionCode).toBe('TRANSACTION_DECLINED');
      running.simulator.reset();
      expect((await api.check(await create({ phoneNumber: '260977555555' }))).body.data.transactionCode).toBe('SUCCESS');
    } finally {
      running.simulator.configureSettlement({ pendingPolls: 1 });
    }
  });

  it('rejects nonsensical settlement options', () => {
    expect(() => createSimulator({ settlement: { pendingPolls: -1 } })).toThrow(RangeError);
    expect(() => createSimulator({ settlement: { pendingPolls: 1.5 } })).toThrow(RangeError);
    expect(() => createSimulator({ settlement: { pendingMs: Number.NaN } })).toThrow(RangeError);
  });
});
