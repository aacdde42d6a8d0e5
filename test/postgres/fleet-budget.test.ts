/**
 * The key's shared budget on one PostgreSQL (issue 29), with real processes: three of them sending status checks as
 * fast as their budget lets them stay within the key's budget together in every 1 s window at the service with a till
 * among them (a process SIGKILLed: fleet-budget-sigkill.test.ts).
 */
import { expect, it } from 'vitest';
import { startSender } from '../helpers/budget-processes.ts';
import { steadyRate } from '../helpers/limited-service.ts';
import { maxInAnyWindow } from '../worker/windows.ts';
import { usePostgresBudgetFixture } from './budget-fixture.ts';

const budget = usePostgresBudgetFixture();
const { script, settings } = budget;

it('three processes and a till share 30 requests per second: never more in any 1 s window, all of them sending', async () => {
  budget.service.arrivals.length = 0;
  const env = { ...settings(), BUDGET_LIMIT: '30', BUDGET_RUN_MS: '9000' };
  const senders = ['a', 'b', 'c'].map((name) => startSender(script.path, { ...env, BUDGET_SENDER: name }));
  const till = startSender(script.path, { ...env, BUDGET_SENDER: 'till', BUDGET_CHECKS: '0', BUDGET_CREATE_EVERY_MS: '300' });
  await Promise.all([...senders, till].map((sender) => sender.ready));
  const reports = await Promise.all([...senders, till].map((sender) => sender.done));
  const times = budget.service.arrivals.map((arrival) => arrival.at);
  expect(maxInAnyWindow(times)).toBeLessThanOrEqual(30);
  // Together they use the budget once the shares settled (a newcomer waits for the others to give back theirs).
  expect(steadyRate(budget.service.arrivals, ['a', 'b', 'c', 'till'], 1_000)).toBeGreaterThanOrEqual(0.75 * 30);
  // Every process took part, the till's creates too (how long they wait for a token, and the round trips per request,
  // are the benchmark's figures: npm run bench -- fleet-budget).
  expect(new Set(budget.service.arrivals.map((arrival) => arrival.sender))).toEqual(new Set(['a', 'b', 'c', 'till']));
  expect(reports.every((report) => report !== undefined)).toBe(true);
}, 40_000);
