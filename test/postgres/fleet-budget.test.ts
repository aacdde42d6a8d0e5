/**
 * The key's shared budget on one PostgreSQL (issue 29), with real processes: three of them sending status checks as
 * fast as their budget lets them stay within the key's budget together in every 1 s window at the service with a till
 * among them, and a process SIGKILLed leaves its share to the others within one lease period.
 */
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startSender } from '../helpers/budget-processes.ts';
import { type LimitedService, startLimitedService, steadyRate } from '../helpers/limited-service.ts';
import { useProcessScript } from '../helpers/process-script.ts';
import { maxInAnyWindow } from '../worker/windows.ts';

const script = useProcessScript(new URL('../journal/processes/budget-sender.ts', import.meta.url), 'budget-sender', ['pg-native'], {
  requireShim: true,
});
let service: LimitedService;
beforeAll(async () => {
  service = await startLimitedService();
});
afterAll(() => service.close());

let tables = 0;
const settings = () => ({
  BUDGET_JOURNAL: 'postgres',
  DATABASE_URL: inject('postgresUrl'),
  JOURNAL_TABLE: `budget_${process.pid}_${++tables}`,
  BUDGET_BASE_URL: service.baseUrl,
});

it('three processes and a till share 30 requests per second: never more in any 1 s window, all of them sending', async () => {
  service.arrivals.length = 0;
  const env = { ...settings(), BUDGET_LIMIT: '30', BUDGET_RUN_MS: '9000' };
  const senders = ['a', 'b', 'c'].map((name) => startSender(script.path, { ...env, BUDGET_SENDER: name }));
  const till = startSender(script.path, { ...env, BUDGET_SENDER: 'till', BUDGET_CHECKS: '0', BUDGET_CREATE_EVERY_MS: '300' });
  await Promise.all([...senders, till].map((sender) => sender.ready));
  const reports = await Promise.all([...senders, till].map((sender) => sender.done));
  const times = service.arrivals.map((arrival) => arrival.at);
  expect(maxInAnyWindow(times)).toBeLessThanOrEqual(30);
  // Together they use the budget once the shares settled (a newcomer waits for the others to give back theirs).
  expect(steadyRate(service.arrivals, ['a', 'b', 'c', 'till'], 1_000)).toBeGreaterThanOrEqual(0.75 * 30);
  // Every process took part, the till's creates too (how long they wait for a token, and the round trips per request,
  // are the benchmark's figures: npm run bench -- fleet-budget).
  expect(new Set(service.arrivals.map((arrival) => arrival.sender))).toEqual(new Set(['a', 'b', 'c', 'till']));
  expect(reports.every((report) => report !== undefined)).toBe(true);
}, 40_000);

it('a process SIGKILLed leaves its share to the others within one lease period', async () => {
  service.arrivals.length = 0;
  const leaseMs = 5_000;
  const env = { ...settings(), BUDGET_LIMIT: '20', BUDGET_LEASE_MS: String(leaseMs) };
  const doomed = startSender(script.path, { ...env, BUDGET_SENDER: 'doomed' });
  const survivor = startSender(script.path, { ...env, BUDGET_SENDER: 'survivor' });
  await Promise.all([doomed.ready, survivor.ready]);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const before = service.arrivals.filter((arrival) => arrival.sender === 'doomed').length;
  expect(before).toBeGreaterThan(10);
  doomed.child.kill('SIGKILL');
  const killedAt = Date.now();
  await doomed.done;
  await new Promise((resolve) => setTimeout(resolve, leaseMs + 1_500));
  survivor.child.kill('SIGTERM');
  await survivor.done;
  const times = service.arrivals.map((arrival) => arrival.at);
  expect(maxInAnyWindow(times)).toBeLessThanOrEqual(20);
  // Within one lease period of the kill, the survivor alone uses the whole budget (a second past it, counted by 1 s).
  const recovered = service.arrivals.filter(
    (arrival) => arrival.sender === 'survivor' && arrival.at >= killedAt + leaseMs && arrival.at < killedAt + leaseMs + 1_000,
  ).length;
  expect(recovered).toBeGreaterThanOrEqual(0.85 * 20);
}, 40_000);
