/**
 * Correctness under load, with real processes and a real PostgreSQL server: 2 000 open payments settling
 * at random times on the simulator, three workers in separate processes on one PostgreSQL journal, one of
 * them killed with SIGKILL midway. Every payment reaches its final state, `onSettled` is counted across
 * workers, the simulator's request log shows no reference checked by two workers at overlapping times,
 * and no worker sent more than its budget in any 1 s window.
 *
 * Needs the build (the worker processes import the package as users do); `npm test` builds first.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { NewPaymentRecord } from '../../src/index.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { openRecord } from './journal-records.ts';
import { checkSpans, maxInAnyWindow, overlappingChecks } from './windows.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PAYMENTS = 2_000;
const SETTLE_WITHIN_MS = 5_000;
const BUDGET = 200;
const MAX_CONCURRENT = 16;
const WORKER_OPTIONS = {
  requestsPerSecond: BUDGET,
  maxConcurrentChecks: MAX_CONCURRENT,
  initialDelayMs: 1_000,
  intervalMs: 1_000,
  maxIntervalMs: 2_000,
  leaseMs: 2_000,
  maxLeasedPayments: 800,
  scanIntervalMs: 200,
};

interface Delivery {
  readonly worker: string;
  readonly referenceId: string;
  readonly state: string;
  readonly at: number;
}

const children: ChildProcess[] = [];
let running: RunningSimulator | undefined;
let journal: PostgresJournal | undefined;
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await running?.close();
  await journal?.close();
});

describe('three worker processes on one PostgreSQL journal, one killed midway', () => {
  it('settles 2 000 payments: each once, never checked by two workers at once, within every budget', { timeout: 90_000 }, async () => {
    if (!existsSync(`${root}/dist/postgres/index.js`)) throw new Error('build first: the worker processes import the built package');
    running = await startSimulator({
      simulator: createSimulator({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY } }),
    });
    const simulator = running.simulator;
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', latencyMs: 3 });
    const tableName = `load_${process.pid}`;
    journal = new PostgresJournal({ connectionString: inject('postgresUrl'), tableName });

    // The payments, created on the service (through the simulator's handler: setup, not what is tested)
    // and written to the journal as the initiating process would.
    const setupStarted = Date.now();
    const records: NewPaymentRecord[] = Array.from({ length: PAYMENTS }, () => openRecord(PHONES.neverSettles));
    for (const record of records) {
      const outcome = await simulator.handle({
        service: 'collections',
        method: 'POST',
        path: '/v1/collections/mobile-money',
        headers: { authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          referenceId: record.referenceId,
          productId: record.productId,
          amount: record.amount,
          currency: 'ZMW',
          phoneNumber: PHONES.neverSettles,
        }),
      });
      if (outcome.kind !== 'respond' || outcome.response.status !== 202) throw new Error('the simulator refused a collection');
    }
    for (let start = 0; start < PAYMENTS; start += 100) {
      await Promise.all(records.slice(start, start + 100).map((record) => journal?.insert(record)));
    }
    const setupMs = Date.now() - setupStarted;

    const deliveries: Delivery[] = [];
    const sent = new Map<string, number[]>();
    const exits = new Map<string, Promise<number | null>>();
    const ready = new Set<string>();
    const start = (name: string) => {
      const child = fork(`${root}/test/worker/load-worker.ts`, [], {
        cwd: root,
        execPath: process.execPath,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        env: {
          ...process.env,
          WORKER_NAME: name,
          WORKER_OPTIONS: JSON.stringify(WORKER_OPTIONS),
          DATABASE_URL: inject('postgresUrl'),
          JOURNAL_TABLE: tableName,
          COLLECTIONS_API_KEY: COLLECTIONS_API_KEYS.primary,
          COLLECTIONS_BASE_URL: running?.collectionsBaseUrl,
        },
      });
      children.push(child);
      sent.set(name, []);
      exits.set(name, new Promise((resolve) => child.once('exit', (code) => resolve(code))));
      child.on('message', (message: { type: string; referenceId: string; state: string; at: number }) => {
        if (message.type === 'ready') ready.add(name);
        if (message.type === 'settled')
          deliveries.push({ worker: name, referenceId: message.referenceId, state: message.state, at: message.at });
        if (message.type === 'sent') sent.get(name)?.push(message.at);
      });
      return child;
    };
    const [a, b, c] = ['a', 'b', 'c'].map(start) as [ChildProcess, ChildProcess, ChildProcess];
    const until = async (condition: () => boolean, what: string, limitMs: number) => {
      const deadline = Date.now() + limitMs;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };

    await until(() => ready.size === 3, 'the workers to start', 20_000);
    const started = Date.now();
    // Each payment settles at a random moment of the next few seconds, a quarter of them failed.
    const settleTimers = records.map((record) =>
      setTimeout(
        () => simulator.settle(record.referenceId, Math.random() < 0.25 ? 'failed' : 'successful'),
        200 + Math.random() * SETTLE_WITHIN_MS,
      ),
    );

    // Midway, b dies without a word: its leases run out and a and c take its payments over.
    await until(() => deliveries.filter((delivery) => delivery.worker === 'b').length >= 150, 'b to settle 150 payments', 40_000);
    b.kill('SIGKILL');
    const killedAt = Date.now();
    await exits.get('b');
    const settledIds = () => new Set(deliveries.map((delivery) => delivery.referenceId));
    await until(() => settledIds().size === PAYMENTS, 'every payment to be delivered', 60_000);
    for (const child of [a, c]) child.send({ type: 'stop' });
    // Each survivor exits by itself after stop(): nothing in flight, no timer, no connection left.
    expect(await exits.get('a')).toBe(0);
    expect(await exits.get('c')).toBe(0);
    for (const timer of settleTimers) clearTimeout(timer);

    // Every payment final in the journal, as the service says.
    const stored = await journal.list();
    expect(stored.length).toBe(PAYMENTS);
    const truth = new Map(simulator.collections().map((collection) => [collection.referenceId, collection.status]));
    expect(stored.filter((record) => record.state !== truth.get(record.referenceId))).toEqual([]);

    // onSettled across workers: once per payment, except a payment b was delivering when it died, which is
    // delivered again by the worker that took it over (at-least-once; the journal never recorded b's).
    const byReference = new Map<string, Delivery[]>();
    for (const delivery of deliveries) byReference.set(delivery.referenceId, [...(byReference.get(delivery.referenceId) ?? []), delivery]);
    const twice = [...byReference.values()].filter((list) => list.length > 1);
    for (const list of twice) {
      expect(list.length).toBe(2);
      expect(list[0]?.worker).toBe('b');
      expect(list[1]?.worker).not.toBe('b');
    }
    expect(twice.length).toBeLessThanOrEqual(MAX_CONCURRENT);
    for (const [referenceId, list] of byReference) expect(list.at(-1)?.state).toBe(truth.get(referenceId));
    const survivors = deliveries.filter((delivery) => delivery.worker !== 'b');
    expect(survivors.length).toBeGreaterThan(0);

    // No reference checked by two workers at overlapping times, by the simulator's own record.
    const spans = checkSpans(simulator.requests).filter((span) => span.worker !== undefined);
    expect(overlappingChecks(spans)).toEqual([]);
    // b's payments were taken over: some reference b checked was settled by another worker after b died.
    const checkedByB = new Set(spans.filter((span) => span.worker === 'b').map((span) => span.referenceId));
    expect(survivors.some((delivery) => checkedByB.has(delivery.referenceId) && delivery.at > killedAt)).toBe(true);

    // The budget of each worker, in every 1 s window: as sent, and as the simulator received them.
    const report: Record<string, unknown> = {
      payments: PAYMENTS,
      deliveries: deliveries.length,
      deliveredTwice: twice.length,
      checks: spans.length,
    };
    for (const name of ['a', 'b', 'c']) {
      const sentTimes = sent.get(name) ?? [];
      expect(sentTimes.length).toBeGreaterThan(0);
      expect(maxInAnyWindow(sentTimes)).toBeLessThanOrEqual(BUDGET);
      report[`${name}: sent, max in 1 s (sent / received)`] = [
        sentTimes.length,
        maxInAnyWindow(sentTimes),
        maxInAnyWindow(spans.filter((span) => span.worker === name).map((span) => span.from)),
      ];
    }
    report.setupSeconds = setupMs / 1000;
    report.settlingSeconds = (Date.now() - started) / 1000;
    report.killedAfterSeconds = (killedAt - started) / 1000;
    console.log('settlement worker load test', report);
  });
});
