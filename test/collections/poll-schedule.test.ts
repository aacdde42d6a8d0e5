import { describe, expect, it } from 'vitest';
import { POLL_DEFAULTS, pollPauseMs } from '../../src/index.js';

const fixed = (value: number) => () => value;
const SCHEDULE = { initialDelayMs: 1_000, intervalMs: 100, maxIntervalMs: 1_000 };

describe('POLL_DEFAULTS', () => {
  it('has the documented values', () => {
    expect(POLL_DEFAULTS).toEqual({
      maxWaitMs: 120_000,
      initialDelayMs: 5_000,
      intervalMs: 1_500,
      maxIntervalMs: 2_000,
      notFoundGraceMs: 10_000,
    });
  });
});

describe('pollPauseMs', () => {
  it.each([
    [0, 900],
    [0.5, 1_000],
    [1, 1_100],
  ])('pause 0 is initialDelayMs ±10%% (random %s → %i)', (random, pause) => {
    expect(pollPauseMs(0, SCHEDULE, fixed(random))).toBe(pause);
  });

  it('grows ×1.5 from intervalMs, rounded, up to maxIntervalMs', () => {
    const pauses = Array.from({ length: 10 }, (_unused, n) => pollPauseMs(n + 1, SCHEDULE, fixed(0.5)));
    expect(pauses).toEqual([100, 150, 225, 338, 506, 759, 1_000, 1_000, 1_000, 1_000]);
  });

  it.each([
    [0, [90, 135, 203, 304, 456, 683, 900, 900]],
    [1, [110, 165, 248, 371, 557, 835, 1_100, 1_100]],
  ])('jitters every pause, the capped ones too (random %s)', (random, pauses) => {
    expect(Array.from({ length: 8 }, (_unused, n) => pollPauseMs(n + 1, SCHEDULE, fixed(random)))).toEqual(pauses);
  });

  it('follows the default schedule: 5 s, then 1.5 s, then 2 s', () => {
    expect([0, 1, 2, 3, 50].map((n) => pollPauseMs(n, POLL_DEFAULTS, fixed(0.5)))).toEqual([5_000, 1_500, 2_000, 2_000, 2_000]);
    expect([0, 1, 2].map((n) => pollPauseMs(n, POLL_DEFAULTS, fixed(0)))).toEqual([4_500, 1_350, 1_800]);
    expect([0, 1, 2].map((n) => pollPauseMs(n, POLL_DEFAULTS, fixed(1)))).toEqual([5_500, 1_650, 2_200]);
  });

  it('caps at once when intervalMs equals maxIntervalMs', () => {
    const flat = { initialDelayMs: 0, intervalMs: 250, maxIntervalMs: 250 };
    expect([0, 1, 2, 3].map((n) => pollPauseMs(n, flat, fixed(0.5)))).toEqual([0, 250, 250, 250]);
  });

  it('stays within ±10% with the default random source', () => {
    for (let round = 0; round < 200; round++) {
      const first = pollPauseMs(0, SCHEDULE);
      const capped = pollPauseMs(20, SCHEDULE);
      expect(first).toBeGreaterThanOrEqual(900);
      expect(first).toBeLessThanOrEqual(1_100);
      expect(capped).toBeGreaterThanOrEqual(900);
      expect(capped).toBeLessThanOrEqual(1_100);
    }
  });

  it('never overflows for a very long poll', () => {
    expect(pollPauseMs(100_000, SCHEDULE, fixed(0.5))).toBe(1_000);
  });
});
