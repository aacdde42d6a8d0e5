/**
 * Virtual time and its escape guard: the globals are the scheduler's during a run and the real ones after, and
 * code that reaches real time during a run is reported with its stack.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/seeded-random.js';
import { Scheduler, T0 } from './scheduler.js';
import { VirtualTime } from './virtual-time.js';

function installed() {
  const sim = new Scheduler(seededRandom(1), false);
  const time = new VirtualTime(sim, seededRandom(2));
  return { sim, time };
}

describe('virtual time', () => {
  it('runs timers, Date and performance.now in simulated time, per process clock, and restores the real ones', async () => {
    const realSetTimeout = globalThis.setTimeout;
    const realDate = Date;
    const { sim, time } = installed();
    const seen: number[] = [];
    sim.spawn(
      'p',
      T0,
      async () => {
        seen.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        seen.push(Date.now(), Date.parse(new Date().toISOString()), performance.now());
      },
      { offset: 5_000 },
    );
    time.install();
    try {
      await sim.run(T0 + 120_000, 1_000);
    } finally {
      time.restore();
    }
    expect(seen).toEqual([T0 + 5_000, T0 + 65_000, T0 + 65_000, 60_000]);
    expect(time.escapes).toEqual([]);
    expect(globalThis.setTimeout).toBe(realSetTimeout);
    expect(Date).toBe(realDate);
  });

  it('reports setImmediate and a clock read outside a step as escapes, naming where they came from', async () => {
    const { sim, time } = installed();
    sim.spawn('p', T0, async () => {
      setImmediate(() => undefined);
    });
    time.install();
    try {
      await sim.run(T0 + 1_000, 100);
      Date.now();
    } finally {
      time.restore();
    }
    expect(time.escapes).toHaveLength(2);
    expect(time.escapes[0]).toMatch(/^setImmediate: .*virtual-time\.test\.ts/);
    expect(time.escapes[1]).toMatch(/^a clock read outside a simulated step/);
  });

  it("counts a process as late while its due work still waits, and for a pause from the pause's start", async () => {
    const { sim } = installed();
    // An event loop stalled past a lease: the renewal's timer is due but has not run yet when the judge asks.
    const stalled = sim.spawn('stalled', T0, async () => {});
    sim.enqueue(stalled, 'renewal timer', () => undefined);
    sim.now = T0 + 900;
    expect(sim.ranLate(stalled, T0, sim.now)).toBe(false);
    sim.now = T0 + 5_000;
    expect(sim.ranLate(stalled, T0, sim.now)).toBe(true);
    // Paused for 20 s from t+10 s: late in any interval that meets the pause, before any of its work ran late.
    const paused = sim.spawn('paused', T0, async () => {});
    sim.now = T0 + 10_000;
    sim.pause(paused, sim.now + 20_000);
    expect(sim.ranLate(paused, T0 + 12_000, T0 + 13_000)).toBe(true);
    expect(sim.ranLate(paused, T0, T0 + 9_000)).toBe(false);
    // A pause shorter than a late run is not one.
    const brief = sim.spawn('brief', T0, async () => {});
    sim.pause(brief, sim.now + 500);
    expect(sim.ranLate(brief, T0, sim.now + 1_000)).toBe(false);
  });
});
