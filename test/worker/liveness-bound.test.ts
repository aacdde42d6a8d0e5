import { describe, expect, it } from 'vitest';
import { RequestValidationError, settlementBoundMs } from '../../src/index.js';

describe('settlementBoundMs: the liveness bound the docs state', () => {
  it('is 383 s with every default and no backlog: 30 s lease + 1 s scan + 2 × (106 s + 10 s) + 2 × 60 s', () => {
    expect(settlementBoundMs()).toBe(383_000);
  });

  it('grows with the window, the grace, the lease, the pace and the backlog at the budget', () => {
    expect(
      settlementBoundMs({
        sendWindowMs: 1_500,
        notFoundGraceMs: 300,
        leaseMs: 2_000,
        scanIntervalMs: 50,
        intervalMs: 100,
        maxIntervalMs: 100,
      }),
    ).toBe(2_000 + 50 + 2 * 1_800 + 2 * 60_000);
    expect(settlementBoundMs({ openPayments: 1_000, requestsPerSecond: 20 }) - settlementBoundMs()).toBe(50_000);
    expect(settlementBoundMs({ maxIntervalMs: 90_000, intervalMs: 90_000 }) - settlementBoundMs()).toBe(60_000);
  });

  it('is Infinity for a record whose window is not known (it settles by the service, or onStale reports it)', () => {
    expect(settlementBoundMs({ sendWindowMs: Number.POSITIVE_INFINITY })).toBe(Number.POSITIVE_INFINITY);
  });

  it('checks the worker options as the worker does', () => {
    expect(() => settlementBoundMs({ leaseMs: -1 })).toThrow(RequestValidationError);
  });
});
