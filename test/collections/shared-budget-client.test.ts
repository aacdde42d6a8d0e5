/**
 * `requestsPerSecond` on a `CollectionsClient` (issue 29), through the public API: refused where it could not be
 * shared, one budget for several clients of one process on a `MemoryJournal` (at the service, never more than the
 * limit in any 1 s window), and a warning, once, for clients with and without it on one key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CollectionsClient, ConfigurationError, type Logger, MemoryJournal, type PaymentJournal } from '../../src/index.ts';
import { type LimitedService, startLimitedService } from '../helpers/limited-service.ts';
import { maxInAnyWindow } from '../worker/windows.ts';

let service: LimitedService;
beforeAll(async () => {
  service = await startLimitedService();
});
afterAll(() => service.close());

const apiKey = 'budget-client-key-0123456789';

it('is refused where it could not be shared: without a journal, on a journal without takeBudget, or with a bad value', () => {
  const baseUrl = service.baseUrl;
  expect(() => new CollectionsClient({ apiKey, baseUrl, requestsPerSecond: 10 })).toThrow(ConfigurationError);
  const memory = new MemoryJournal();
  // A store of one's own without the optional takeBudget.
  const withoutBudgets: PaymentJournal = new MemoryJournal();
  Object.defineProperty(withoutBudgets, 'takeBudget', { value: undefined });
  expect(() => new CollectionsClient({ apiKey, baseUrl, journal: withoutBudgets, requestsPerSecond: 10 })).toThrow(/takeBudget/);
  for (const bad of [0, 2.5, -1, 'fast'] as never[]) {
    expect(() => new CollectionsClient({ apiKey, baseUrl, journal: memory, requestsPerSecond: bad })).toThrow(/requestsPerSecond/);
  }
  expect(() => new CollectionsClient({ apiKey, baseUrl, journal: memory, requestsPerSecond: 10, budgetLeaseMs: 1_000 })).toThrow(
    /budgetLeaseMs/,
  );
  expect(() => new CollectionsClient({ apiKey, baseUrl, journal: memory, budgetLeaseMs: 10_000 })).toThrow(/budgetLeaseMs/);
});

it('three clients of one process on one MemoryJournal share 12 requests per second; a client without it on the key is warned about once', async () => {
  service.arrivals.length = 0;
  const journal = new MemoryJournal();
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} };
  const clients = [1, 2, 3].map(
    () => new CollectionsClient({ apiKey, baseUrl: service.baseUrl, journal, requestsPerSecond: 12, logger, maxRetries: 0 }),
  );
  const stop = AbortSignal.timeout(3_000);
  const loops = clients.flatMap((client) =>
    Array.from({ length: 4 }, async () => {
      while (!stop.aborted) await client.checkStatus(globalThis.crypto.randomUUID(), { signal: stop }).catch(() => undefined);
    }),
  );
  await Promise.all(loops);
  expect(maxInAnyWindow(service.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(12);
  expect(service.arrivals.length).toBeGreaterThanOrEqual(24);
  expect(warnings.filter((line) => line.includes('with and without requestsPerSecond'))).toEqual([]);
  const unbudgeted = new CollectionsClient({ apiKey, baseUrl: service.baseUrl, journal, logger });
  await unbudgeted.checkStatus(globalThis.crypto.randomUUID());
  await unbudgeted.checkStatus(globalThis.crypto.randomUUID());
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(warnings.filter((line) => line.includes('with and without requestsPerSecond'))).toHaveLength(1);
});
