/**
 * (b) Polling efficiency: the status-check schedules (fixed intervals, the SDK's default, alternatives) on a virtual
 * clock, no real waiting. Targets for the default: p95 detection delay ≤ 2 s and ≤ 0.5× the requests of fixed 1 s.
 */
import { type BenchSdk, passFail, percentile, printTable, seededRandom } from './harness.ts';

interface Schedule {
  readonly name: string;
  /** The pause after status check number `pauseNumber + 1`, in ms. */
  readonly pauseMs: (pauseNumber: number, random: () => number) => number;
}

interface PollingResult {
  readonly meanRequests: number;
  readonly p50DelayMs: number;
  readonly p95DelayMs: number;
}

/** Checks at t = 0 and after each pause, until the first check at or after settlement. Network time is left out. */
function simulate(schedule: Schedule, settlementsMs: readonly number[], seed: number): PollingResult {
  const random = seededRandom(seed);
  let requests = 0;
  const delays: number[] = [];
  for (const settlesAt of settlementsMs) {
    let t = 0;
    requests++;
    for (let pauseNumber = 0; t < settlesAt; pauseNumber++) {
      t += schedule.pauseMs(pauseNumber, random);
      requests++;
    }
    delays.push(t - settlesAt);
  }
  return { meanRequests: requests / settlementsMs.length, p50DelayMs: percentile(delays, 0.5), p95DelayMs: percentile(delays, 0.95) };
}

/** Runs (b) and prints its table. */
export function run(sdk: BenchSdk): void {
  const COLLECTIONS = 20_000;
  const settlementRandom = seededRandom(20_260_101);
  const settlementsMs = Array.from({ length: COLLECTIONS }, () => 5_000 + settlementRandom() * 85_000);
  const fixed = (ms: number): Schedule => ({ name: `fixed ${ms / 1000} s`, pauseMs: () => ms });
  const shaped = (name: string, initialDelayMs: number, intervalMs: number, maxIntervalMs: number): Schedule => ({
    name: `${name} ${initialDelayMs / 1000} s, ${intervalMs / 1000} s → ${maxIntervalMs / 1000} s`,
    pauseMs: (pauseNumber, random) => sdk.pollPauseMs(pauseNumber, { initialDelayMs, intervalMs, maxIntervalMs }, random),
  });
  const defaults = sdk.POLL_DEFAULTS;
  const defaultSchedule = shaped('SDK default:', defaults.initialDelayMs, defaults.intervalMs, defaults.maxIntervalMs);
  const schedules: Schedule[] = [
    fixed(1_000),
    fixed(2_000),
    fixed(5_000),
    defaultSchedule,
    shaped('alt:', 0, 1_000, 2_000),
    shaped('alt:', 3_000, 1_000, 2_000),
    shaped('alt:', 3_000, 1_500, 2_500),
    shaped('alt:', 5_000, 1_000, 2_500),
  ];
  const results = schedules.map((schedule) => simulate(schedule, settlementsMs, 42));
  const baseline = results[0];
  if (!baseline) return;
  const defaultResult = results[3];
  const defaultPass =
    defaultResult !== undefined && defaultResult.p95DelayMs <= 2_000 && defaultResult.meanRequests / baseline.meanRequests <= 0.5;
  printTable(
    `(b) Polling efficiency: ${COLLECTIONS} simulated collections settling uniformly over 5–90 s (seeded), virtual clock, no waiting.\n` +
      '    Baseline: fixed 1 s polling. Requests per collection count the check at t = 0; detection delay = first check at or after\n' +
      '    settlement − settlement (network time left out). Shaped schedules: initial pause, first interval → largest interval, ×1.5\n' +
      '    growth and ±10 % jitter, computed by the exported pollPauseMs. Targets for the default: p95 ≤ 2 s and requests ≤ 0.5× fixed 1 s.',
    ['schedule', 'mean requests', 'requests vs fixed 1 s', 'p50 delay s', 'p95 delay s', 'target'],
    schedules.map((schedule, index) => {
      const result = results[index];
      if (!result) return [schedule.name];
      return [
        schedule.name,
        result.meanRequests.toFixed(1),
        `${(result.meanRequests / baseline.meanRequests).toFixed(3)}×`,
        (result.p50DelayMs / 1000).toFixed(2),
        (result.p95DelayMs / 1000).toFixed(2),
        schedule === defaultSchedule ? `${passFail(defaultPass)} (p95 ≤ 2 s, ≤ 0.5×)` : '-',
      ];
    }),
  );
}
