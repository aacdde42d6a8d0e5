/**
 * A seeded chaos soak in the suite (the full one is `bench/chaos.ts`): random faults on every route,
 * reads lagging behind creates, creates processed after the client gave up, a server enforcing
 * uniqueness. The three zeros must hold.
 */
import { expect, test } from 'vitest';
import { chaosTable, runChaos } from './chaos.js';

test('chaos soak: 0 double records, 0 resolved without a record, 0 definite errors with a record stored', { timeout: 60_000 }, async () => {
  const options = { seed: 20_261_123, creates: 300, concurrency: 16 };
  const report = await runChaos(options);
  const table = chaosTable(report, options);
  expect(report.creates, table).toBe(300);
  expect(report.faultsInjected, table).toBeGreaterThan(100);
  expect(report.resolved, table).toBeGreaterThan(150);
  expect(report.unknownOutcome, table).toBeGreaterThan(0);
  expect(report.doubleRecords, table).toBe(0);
  expect(report.resolvedWithoutRecord, table).toBe(0);
  expect(report.definiteErrorsWithRecord, table).toBe(0);
  expect(report.wrongRecord, table).toBe(0);
  expect(report.untypedErrors, table).toBe(0);
});
