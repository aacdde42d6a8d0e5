/**
 * The PostgreSQL variant of the simulation: the same worlds (the same draws) with the journal the model of
 * `PostgresJournal` under READ COMMITTED (postgres-model.ts): statements that start, stamp `now()` then, wait for the
 * row locks of in-flight statements and commit later; a failed transition's read as a second statement; leases that
 * skip locked rows; the shared budget's read and compare-and-set as two statements. Its seeds hold the same
 * invariants; the model's behaviours are pinned first, on a scheduler of their own.
 *
 * More seeds: `SIM_POSTGRES_SEEDS=500 npx vitest run test/simulation/simulation-postgres.test.ts`; a long sweep on
 * every core: `npm run sim -- --seeds N --journal postgres`; one seed: `SIM_JOURNAL=postgres SIM_SEED=<seed> npx
 * vitest run test/simulation`.
 */
import { describe, expect, it } from 'vitest';
import type { BudgetRequest } from '../../src/journal/budget.js';
import type { NewPaymentRecord, PaymentRecord, PaymentTransition } from '../../src/journal/journal.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { PostgresModel } from './postgres-model.js';
import { explain, sweep } from './runner.js';
import { type Proc, Scheduler, T0 } from './scheduler.js';
import { runSimulation } from './sim.js';

/**
 * About 17 s on this project's 2-core machine when it is quiet (8.9 seeds/s, against the memory store's 11.3 measured
 * seed by seed in the same process: docs/internals/simulation.md), two or three times that under the load of other runs.
 */
const SEEDS = Number(process.env.SIM_POSTGRES_SEEDS ?? 150);
const SAME_WORLD_SEEDS = 5;

const REFERENCE = '0b3a1c52-7a55-4c1e-9f3e-6f1d2a7b9c01';
const OTHER = '5d0c9e1b-2f4a-4b8e-8c6d-1a2b3c4d5e6f';

function newRecord(referenceId: string): NewPaymentRecord {
  return {
    referenceId,
    state: 'initiating',
    productId: 'p',
    amount: 10,
    currency: 'ZMW',
    phoneNumber: '260*******56',
    fingerprint: 'f',
    sendWindowMs: 60_000,
  };
}

/** The model on a scheduler of its own: every write holds its locks 50 ms, a round trip between statements is 100 ms. */
function model() {
  const sim = new Scheduler(seededRandom(1), false);
  const hits = new Map<string, number>();
  const store = new PostgresModel(
    sim,
    () => 0.999,
    () => sim.now,
    () => 100,
    () => 50,
    hits,
  );
  /** Runs `body` as a process starting at `T0 + at` ms. */
  const at = (ms: number, body: (proc: Proc) => Promise<void>) => sim.spawn(`p${ms}`, T0 + ms, body, { mortal: false });
  return { sim, hits, store, at, iso: (ms: number) => new Date(T0 + ms).toISOString() };
}

describe('the PostgreSQL model (READ COMMITTED)', () => {
  it('stamps a write at its statement start, makes a write on a locked row wait, and evaluates its compare-and-set on the newest version', async () => {
    const { sim, hits, store, at, iso } = model();
    const seen: Record<string, PaymentTransition | PaymentRecord | undefined> = {};
    at(0, async () => {
      await store.insert(newRecord(REFERENCE), () => {});
    });
    at(100, async (p) => {
      seen.a = await store.transition(p, REFERENCE, 1, { state: 'pending', by: 'a' }, () => {});
    });
    // Starts while a holds the row: waits until a commits at 150, then finds version 2.
    at(120, async (p) => {
      seen.b = await store.transition(p, REFERENCE, 1, { state: 'unknown', by: 'b' }, () => {});
    });
    at(130, async (p) => {
      seen.c = await store.transition(p, REFERENCE, 2, { state: 'successful', by: 'c' }, () => {});
    });
    // A read while c holds the row: what was committed when it started.
    at(160, async () => {
      seen.read = await store.get(REFERENCE);
    });
    await sim.run(T0 + 1_000, 1_000);

    // a started at 100, committed at 150: stamped 100.
    expect(seen.a).toMatchObject({ applied: true, record: { version: 2, state: 'pending', updatedAt: iso(100) } });
    // c waited behind a and b (first come, first served): it committed at 250, stamped at its start, 130.
    expect(seen.c).toMatchObject({ applied: true, record: { version: 3, state: 'successful', updatedAt: iso(130) } });
    expect(seen.read).toMatchObject({ version: 2, state: 'pending' });
    // b lost to a (version 2); its second statement, a round trip later, read the version c wrote meanwhile.
    expect(seen.b).toMatchObject({ applied: false, record: { version: 3, state: 'successful' } });
    expect(hits.get('postgres: transition waited for a row lock')).toBe(2);
    expect(hits.get("postgres: a failed transition's read saw a newer version than the one that beat it")).toBe(1);
    expect((await store.rows.history(REFERENCE)).map((event) => [event.to, event.at])).toEqual([
      ['initiating', iso(0)],
      ['pending', iso(100)],
      ['successful', iso(130)],
    ]);
  });

  it('skips rows an in-flight statement holds when leasing', async () => {
    const { sim, hits, store, at } = model();
    const leased: string[][] = [];
    at(0, async () => {
      await Promise.all([store.insert(newRecord(REFERENCE), () => {}), store.insert(newRecord(OTHER), () => {})]);
    });
    at(100, async (p) => {
      await store.transition(p, REFERENCE, 1, { state: 'pending', by: 'a' }, () => {});
    });
    at(110, async () => {
      leased.push((await store.lease({ owner: 'w1', leaseMs: 1_000, limit: 10 })).map((record) => record.referenceId));
    });
    at(200, async () => {
      leased.push((await store.lease({ owner: 'w2', leaseMs: 1_000, limit: 10 })).map((record) => record.referenceId));
    });
    await sim.run(T0 + 1_000, 1_000);
    expect(leased).toEqual([[OTHER], [REFERENCE]]);
    expect(hits.get('postgres: a lease skipped a locked row')).toBe(1);
  });

  it("runs the real takeBudgetRow: two holders reading one version, the second's compare-and-set lost and read again", async () => {
    const { sim, hits, store, at } = model();
    const request = (holder: string): BudgetRequest => ({
      key: 'key',
      holder,
      limit: 10,
      keep: 0,
      want: 4,
      leaseMs: 2_000,
      windowMs: 1_000,
      accepted: 0,
      rateLimited: 0,
      saturated: false,
    });
    const shares: number[] = [];
    at(0, async (p) => {
      shares.push((await store.takeBudget(p, request('h1'))).share);
    });
    at(10, async (p) => {
      shares.push((await store.takeBudget(p, request('h2'))).share);
    });
    await sim.run(T0 + 5_000, 1_000);
    expect(shares).toHaveLength(2);
    expect(shares.reduce((sum, share) => sum + share, 0)).toBeLessThanOrEqual(10);
    expect(hits.get('postgres: a budget write lost its compare-and-set')).toBeGreaterThan(0);
  });
});

if (process.env.SIM_SEED === undefined)
  describe('the simulation on the PostgreSQL model', () => {
    it(`seeds 1–${SEEDS} on the READ COMMITTED model: callers told the truth, one collection per sale, every payment final once faults stop`, async () => {
      const result = await sweep(1, SEEDS, 1, 'postgres');
      const failure = result.failures[0];
      if (failure !== undefined) expect.fail(await explain(failure));
      expect(result.seeds).toBe(SEEDS);
      // READ COMMITTED's own paths ran: writes waited for row locks, leases skipped locked rows, the budget's
      // compare-and-set was lost and read again, and the journal's compare-and-set was lost.
      for (const probe of [
        'postgres: transition waited for a row lock',
        'postgres: a lease skipped a locked row',
        'postgres: a budget write lost its compare-and-set',
        'compare-and-set lost',
        'takeBudget failed',
      ])
        expect(result.probes.get(probe) ?? 0, probe).toBeGreaterThan(0);
    }, 600_000);

    it(`seeds 1–${SAME_WORLD_SEEDS}: the same worlds as on MemoryJournal`, async () => {
      for (let seed = 1; seed <= SAME_WORLD_SEEDS; seed++) {
        const memory = await runSimulation({ seed, store: 'memory' });
        const postgres = await runSimulation({ seed, store: 'postgres' });
        expect(postgres.store).toBe('postgres');
        expect(postgres.world).toBe(memory.world.replace('"store":"memory"', '"store":"postgres"'));
        expect(postgres.stats.sales).toBe(memory.stats.sales);
      }
    }, 600_000);
  });
