/**
 * A settlement worker whose journal goes away and comes back, through the public client: two lines in all (the
 * outage with its cause, and the return), never a line per payment per cycle, and the payments settle after it.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { CollectionsClient, MemoryJournal, type PaymentJournal } from '../../src/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';

let running: RunningSimulator;
beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 0 } }) });
});
afterAll(() => running.close());

/** The store, with every method failing while `down` is set, as a database that is unreachable fails every call. */
function interruptible(inner: PaymentJournal): { journal: PaymentJournal; setDown(down: boolean): void } {
  let down = false;
  const journal = new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        down
          ? Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:5432'))
          : (value as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  return { journal, setDown: (value) => (down = value) };
}

it('says once that it could not use the journal, with the cause, and once that it is back; nothing per payment meanwhile', async () => {
  const memory = new MemoryJournal();
  const lines: string[] = [];
  const line = (level: string) => (message: string, details?: { reason?: string }) =>
    lines.push(`${level} ${message}${details?.reason === undefined ? '' : ` (${details.reason})`}`);
  const options = { apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl };
  const till = new CollectionsClient({ ...options, journal: memory, logLevel: 'off' });
  const ids = [];
  for (let index = 0; index < 5; index++)
    ids.push((await till.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.neverSettles, amount: 5 })).referenceId);
  const { journal, setDown } = interruptible(memory);
  const client = new CollectionsClient({
    ...options,
    journal,
    timeoutMs: 1_000,
    logLevel: 'warn',
    logger: { debug() {}, info() {}, warn: line('warn'), error: line('error') },
  });
  const worker = client.startSettlementWorker({ initialDelayMs: 0, intervalMs: 10, scanIntervalMs: 10, leaseMs: 3_000 });
  try {
    await vi.waitFor(() =>
      expect(running.simulator.requests.filter((request) => request.method === 'GET').length).toBeGreaterThanOrEqual(5),
    );
    setDown(true);
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    // Scans every 10 ms, renewals, records: dozens of failed calls while it is down.
    await new Promise((resolve) => setTimeout(resolve, 500));
    setDown(false);
    for (const id of ids) running.simulator.settle(id, 'successful');
    await vi.waitFor(async () => expect(await memory.list({ states: ['successful'] })).toHaveLength(5), { timeout: 10_000 });
  } finally {
    await worker.stop();
  }
  expect(lines).toEqual([
    'warn [tap-collections-sdk] settlement worker: could not use the journal; leases, checks and records wait until it answers (connect ECONNREFUSED 10.0.0.5:5432)',
    expect.stringMatching(/^warn \[tap-collections-sdk\] settlement worker: the journal answers again \(after \d+ s\); settling goes on$/),
  ]);
});
