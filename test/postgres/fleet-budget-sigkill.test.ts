/**
 * The key's shared budget on one PostgreSQL, with real processes: a process SIGKILLed leaves its share to the others
 * within one lease period, at the shortest lease accepted.
 *
 * Measured in windows that begin at an arrival: a holder's tokens free a window after their answers, so arrivals come
 * in bursts a little more than a second apart, and a 1 s window at a fixed place (the lease's end) could fall between
 * two of them.
 */
import { expect, it } from 'vitest';
import { startSender } from '../helpers/budget-processes.ts';
import { maxInAnyWindow } from '../worker/windows.ts';
import { usePostgresBudgetFixture } from './budget-fixture.ts';

const budget = usePostgresBudgetFixture();
const { script, settings } = budget;

it('a process SIGKILLed leaves its share to the others within one lease period', async () => {
  budget.service.arrivals.length = 0;
  const leaseMs = 5_000;
  const env = { ...settings(), BUDGET_LIMIT: '20', BUDGET_LEASE_MS: String(leaseMs) };
  const doomed = startSender(script.path, { ...env, BUDGET_SENDER: 'doomed' });
  const survivor = startSender(script.path, { ...env, BUDGET_SENDER: 'survivor' });
  await Promise.all([doomed.ready, survivor.ready]);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const before = budget.service.arrivals.filter((arrival) => arrival.sender === 'doomed').length;
  expect(before).toBeGreaterThan(10);
  doomed.child.kill('SIGKILL');
  const killedAt = Date.now();
  await doomed.done;
  await new Promise((resolve) => setTimeout(resolve, leaseMs + 1_500));
  survivor.child.kill('SIGTERM');
  await survivor.done;
  const times = budget.service.arrivals.map((arrival) => arrival.at);
  expect(maxInAnyWindow(times)).toBeLessThanOrEqual(20);
  // Within one lease period of the kill, the survivor alone uses (nearly) the whole budget: some 1 s window beginning
  // at one of its arrivals before the lease's end holds at least 85 % of it.
  const survivorTimes = budget.service.arrivals.filter((arrival) => arrival.sender === 'survivor').map((arrival) => arrival.at);
  const recoveredAt = survivorTimes.find(
    (start) => start >= killedAt && survivorTimes.filter((at) => at >= start && at < start + 1_000).length >= 0.85 * 20,
  );
  expect(recoveredAt, 'the survivor never used 85 % of the budget in a second after the kill').toBeDefined();
  expect((recoveredAt as number) - killedAt).toBeLessThan(leaseMs);
}, 40_000);
