/**
 * The worker's metrics measure time on the process's monotonic clock: a check's duration and the budget used in the
 * last second stay true while the wall clock steps (NTP, an operator), so `/metrics` never reports a negative or an
 * hour-long check for one that took milliseconds.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, MemoryJournal, type SettlementWorkerEvent, type SettlementWorkerView } from '../../src/index.ts';
import { PHONES } from '../../src/testing/index.ts';
import { API_KEY } from '../helpers/fixtures.ts';
import { insertAll, openRecord } from '../worker/journal-records.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a settlement worker's metrics while the wall clock steps", () => {
  it.each([
    ['back an hour', -3_600_000],
    ['forward an hour', 3_600_000],
  ])('a check during which the wall clock steps %s lasts what it took, and counts in the last second', async (_, stepMs) => {
    const realNow = Date.now.bind(Date);
    let offset = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    const journal = new MemoryJournal();
    const record = openRecord(PHONES.succeeds);
    await insertAll(journal, [record]);
    const events: SettlementWorkerEvent[] = [];
    let view: SettlementWorkerView | undefined;
    let budgetUsed: number | undefined;
    const client = new CollectionsClient({
      apiKey: API_KEY,
      baseUrl: 'http://127.0.0.1:39999',
      logLevel: 'off',
      journal,
      fetch: async () => {
        offset += stepMs;
        return new Response(
          JSON.stringify({
            success: true,
            data: { referenceId: record.referenceId, statusText: 'pending', transactionCode: null, reason: null },
          }),
          { status: 200, headers: { 'content-type': 'application/json' } },
        );
      },
      instrumentation: {
        settlementWorker: (worker) => {
          view = worker;
          return (event) => {
            events.push(event);
            if (event.type === 'check') budgetUsed ??= view?.budgetUsed();
          };
        },
      },
    });
    const worker = client.startSettlementWorker({ initialDelayMs: 0, scanIntervalMs: 10, requestsPerSecond: 10 });
    try {
      await vi.waitFor(() => expect(events.some((event) => event.type === 'check')).toBe(true), { timeout: 5_000, interval: 5 });
    } finally {
      await worker.stop();
    }
    const check = events.find((event) => event.type === 'check');
    expect(check).toMatchObject({ type: 'check', status: 200 });
    expect(check?.type === 'check' && check.durationMs).toBeGreaterThanOrEqual(0);
    expect(check?.type === 'check' && check.durationMs).toBeLessThan(60_000);
    // The check just ended counts in the last second's budget (1 of 10 a second), whichever way the clock stepped.
    expect(budgetUsed).toBe(0.1);
  });
});
