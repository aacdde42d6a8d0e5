/**
 * The key's shared budget on one SqliteJournal file (issue 29): two processes of one machine, each sending status
 * checks as fast as its budget lets it, stay within the key's budget together in every 1 s window at the service.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSender } from '../helpers/budget-processes.ts';
import { type LimitedService, startLimitedService, steadyRate } from '../helpers/limited-service.ts';
import { useProcessScript } from '../helpers/process-script.ts';
import { maxInAnyWindow } from '../worker/windows.ts';

const script = useProcessScript(new URL('./processes/budget-sender.ts', import.meta.url), 'budget-sender', ['pg-native'], {
  requireShim: true,
});
let service: LimitedService;
beforeAll(async () => {
  service = await startLimitedService();
});
afterAll(() => service.close());

it('two processes on one file share 20 requests per second: never more in any 1 s window, and both send', async () => {
  const env = {
    BUDGET_JOURNAL: `sqlite:${join(script.dir, 'budget.db')}`,
    BUDGET_BASE_URL: service.baseUrl,
    BUDGET_LIMIT: '20',
    BUDGET_RUN_MS: '7000',
  };
  const senders = ['a', 'b'].map((name) => startSender(script.path, { ...env, BUDGET_SENDER: name }));
  const reports = await Promise.all(senders.map((sender) => sender.done));
  const times = service.arrivals.map((arrival) => arrival.at);
  expect(maxInAnyWindow(times)).toBeLessThanOrEqual(20);
  expect(reports.every((report) => report !== undefined && report.sent > 10)).toBe(true);
  // Together they use the budget, not a per-process part of it, once the shares settled.
  expect(steadyRate(service.arrivals, ['a', 'b'], 1_000)).toBeGreaterThanOrEqual(0.75 * 20);
}, 30_000);
