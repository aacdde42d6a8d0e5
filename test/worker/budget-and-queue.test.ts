import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DueQueue } from '../../src/core/due-queue.ts';
import { TokenBucket } from '../../src/core/token-bucket.ts';
import { maxInAnyWindow } from './windows.ts';

describe('TokenBucket', () => {
  it('allows a burst of perSecond, then one more each time a token turns one second old', () => {
    const bucket = new TokenBucket(3);
    expect([bucket.take(0), bucket.take(0), bucket.take(10), bucket.take(10)]).toEqual([true, true, true, false]);
    expect(bucket.availableAt(10)).toBe(1000);
    expect(bucket.take(999)).toBe(false);
    expect(bucket.take(1000)).toBe(true);
    expect(bucket.availableAt(1000)).toBe(1000);
    expect(bucket.take(1000)).toBe(true);
    expect(bucket.availableAt(1000)).toBe(1010);
  });

  it('never lets more than perSecond through in any 1 s window, whatever the demand', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 400 }),
        (rate, gaps) => {
          const bucket = new TokenBucket(rate);
          const taken: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            if (bucket.take(now)) taken.push(now);
            else expect(bucket.availableAt(now)).toBeGreaterThan(now);
          }
          expect(maxInAnyWindow(taken)).toBeLessThanOrEqual(rate);
        },
      ),
    );
  });

  it('a greedy caller that waits for availableAt gets exactly the rate', () => {
    const bucket = new TokenBucket(10);
    const taken: number[] = [];
    let now = 0;
    while (now < 10_000) {
      now = bucket.availableAt(now);
      if (bucket.take(now)) taken.push(now);
    }
    expect(maxInAnyWindow(taken)).toBe(10);
    expect(taken.filter((at) => at < 10_000).length).toBe(100);
  });
});

describe('DueQueue', () => {
  it('every pop hands back the earliest item waiting, however pushes and pops interleave', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant('pop' as const)), { maxLength: 300 }), (steps) => {
        const queue = new DueQueue<{ dueAt: number }>();
        const model: number[] = [];
        for (const step of steps) {
          if (step === 'pop') {
            model.sort((a, b) => a - b);
            expect(queue.peek()?.dueAt).toBe(model[0]);
            expect(queue.pop()?.dueAt).toBe(model.shift());
          } else {
            queue.push({ dueAt: step });
            model.push(step);
          }
          expect(queue.size).toBe(model.length);
        }
      }),
    );
  });
});
