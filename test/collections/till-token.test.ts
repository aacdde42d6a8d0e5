/**
 * A till's create and the key's shared budget, through the public API: processes of one machine are `SqliteJournal`
 * objects on one file (each its own holder), the service a loopback server that records every arrival. A till that
 * starts while the other processes spend the whole key (and while more processes want tokens than the key has) sends
 * its first create at its first renewal: it waits for no other process to renew, give tokens back or let them cool.
 * Counted in renewals, not in milliseconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BudgetGrant, type BudgetRequest, CollectionsClient } from '../../src/index.ts';
import { SqliteJournal } from '../../src/sqlite/index.ts';
import { type LimitedService, startLimitedService } from '../helpers/limited-service.ts';
import { maxInAnyWindow } from '../worker/windows.ts';

const directory = mkdtempSync(join(tmpdir(), 'tap-till-token-'));
let service: LimitedService;
beforeAll(async () => {
  service = await startLimitedService();
});
afterAll(async () => {
  await service.close();
  rmSync(directory, { recursive: true, force: true });
});

const apiKey = 'till-token-key-0123456789';
const collection = () => ({
  referenceId: globalThis.crypto.randomUUID(),
  productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
  amount: 10,
  phoneNumber: '0977123456',
});

/**
 * A process: its own journal object on the shared file (its own holder), recording its renewals, and for each push it
 * sends, how many renewals it had sent when the push left.
 */
function processOn(file: string, limit: number) {
  const journal = new SqliteJournal(file);
  const renewals: { request: BudgetRequest; grant: BudgetGrant }[] = [];
  const renewalsAtPush: number[] = [];
  const takeBudget = journal.takeBudget.bind(journal);
  journal.takeBudget = async (request) => {
    const grant = await takeBudget(request);
    renewals.push({ request, grant });
    return grant;
  };
  const client = new CollectionsClient({
    apiKey,
    baseUrl: service.baseUrl,
    journal,
    requestsPerSecond: limit,
    // The shortest lease: the earlier till's share ends sooner.
    budgetLeaseMs: 5_000,
    maxRetries: 0,
    logLevel: 'off',
    fetch: (input, init) => {
      if ((init?.method ?? (input instanceof Request ? input.method : 'GET')) === 'POST') renewalsAtPush.push(renewals.length);
      return fetch(input, init);
    },
  });
  return { journal, client, renewals, renewalsAtPush };
}

/** Status checks as fast as the process's share lets them go (a worker's backlog), until `stop`. */
function saturate(client: CollectionsClient, stop: AbortSignal): Promise<unknown> {
  return Promise.all(
    Array.from({ length: 6 }, async () => {
      while (!stop.aborted) await client.checkStatus(globalThis.crypto.randomUUID(), { signal: stop }).catch(() => undefined);
    }),
  );
}

/** Resolves once `check` holds, looking every 50 ms (a condition, not a timed assertion). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * `workers` processes send status checks as fast as their shares let them, on a key a till has used before, until
 * they hold every token the key leaves them; then a till process starts and sends one create. Returns how many
 * renewals the till had sent when its push left, and how many the workers sent from the till's start until then.
 */
async function freshTillJoins(name: string, limit: number, workers: number, otherTillSells = false) {
  const file = join(directory, `${name}.db`);
  // A till has used the key before (an earlier shift): the key is one tills use. Or it still sells, a create a second.
  const earlier = processOn(file, limit);
  await earlier.client.initiate(collection());
  const stop = new AbortController();
  const selling = otherTillSells
    ? (async () => {
        while (!stop.signal.aborted) {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          await earlier.client.initiate(collection(), { signal: stop.signal }).catch(() => undefined);
        }
      })()
    : earlier.journal.close();
  const fleet = Array.from({ length: workers }, () => processOn(file, limit));
  const running = fleet.map((worker) => saturate(worker.client, stop.signal));
  const workerRenewals = () => fleet.reduce((sum, worker) => sum + worker.renewals.length, 0);
  // Settled: the earlier till's lease ended (only the workers hold shares; or the selling till too) and each worker
  // renewed since.
  const holders = otherTillSells ? workers + 1 : workers;
  const settled = (worker: (typeof fleet)[number]) => worker.renewals.slice(-2).every((entry) => entry.grant.holders === holders);
  await until(() => fleet.every((worker) => worker.renewals.length >= 4 && settled(worker)));
  const till = processOn(file, limit);
  const before = workerRenewals();
  const created = await till.client.initiate(collection(), { signal: AbortSignal.timeout(20_000) });
  const meanwhile = workerRenewals() - before;
  const arrivals = [...service.arrivals];
  stop.abort();
  await Promise.all([...running, selling]);
  await Promise.all([...fleet.map((worker) => worker.journal.close()), till.journal.close()]);
  if (otherTillSells) await earlier.journal.close();
  return { created, tillRenewalsAtPush: till.renewalsAtPush[0], workerRenewalsMeanwhile: meanwhile, arrivals };
}

it("a till joining processes that spend the whole key sends its first create at its first renewal, waiting for no other process's", async () => {
  service.arrivals.length = 0;
  const seen = await freshTillJoins('saturated', 10, 2);
  expect(seen.created.status).toBe('pending');
  // One renewal: the tokens the workers leave free for a till were there. (Before, the till renewed again and again
  // while the workers renewed, gave tokens back and those cooled: 1.9 s for its first create.)
  expect(seen.tillRenewalsAtPush).toBe(1);
  expect(maxInAnyWindow(seen.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(10);
}, 30_000);

it('a till joining more processes than the key has tokens (5 per second, 8 workers) sends its first create at its first renewal', async () => {
  service.arrivals.length = 0;
  const seen = await freshTillJoins('crowded', 5, 8);
  expect(seen.created.status).toBe('pending');
  expect(seen.tillRenewalsAtPush).toBe(1);
  expect(maxInAnyWindow(seen.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(5);
}, 40_000);

it('a till joining while another till sells finds a token too: the one kept free is beyond what live tills keep', async () => {
  service.arrivals.length = 0;
  const seen = await freshTillJoins('selling', 10, 2, true);
  expect(seen.created.status).toBe('pending');
  expect(seen.tillRenewalsAtPush).toBe(1);
  expect(maxInAnyWindow(seen.arrivals.map((arrival) => arrival.at))).toBeLessThanOrEqual(10);
}, 30_000);
