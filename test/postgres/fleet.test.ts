/**
 * The fleet on a real PostgreSQL (issue 20): a database that restarts under a running worker, rows that cannot be
 * read, tills that wait on the journal (LISTEN/NOTIFY) instead of the service, and the table name limit.
 *
 * The restart test runs a PostgreSQL server of its own (the run's shared one must never stop); the others use
 * the run's server with a table each.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { CollectionsClient, type Logger, PollTimeoutError } from '../../src/index.ts';
import { PostgresJournal } from '../../src/postgres/index.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { type RunningPostgres, startPostgres } from './server.ts';

let running: RunningSimulator;
beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 1, pendingMs: Number.POSITIVE_INFINITY } }) });
});
afterAll(() => running.close());

interface Lines {
  readonly logger: Logger;
  readonly warn: string[];
  readonly error: string[];
}
function lines(): Lines {
  const warn: string[] = [];
  const error: string[] = [];
  const text = (message: string, details: unknown[]) => `${message} ${details.map((detail) => JSON.stringify(detail)).join(' ')}`;
  return {
    warn,
    error,
    logger: {
      debug() {},
      info() {},
      warn: (message, ...details) => warn.push(text(message, details)),
      error: (message, ...details) => error.push(text(message, details)),
    },
  };
}

/** A client on `journal` whose requests to the service are counted in `paths`. */
function client(journal: PostgresJournal, paths: string[] = [], logger?: Logger): CollectionsClient {
  return new CollectionsClient({
    journal,
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: running.collectionsBaseUrl,
    logLevel: logger === undefined ? 'off' : 'warn',
    logger,
    fetch: (input, init) => {
      paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return fetch(input, init);
    },
  });
}

const FAST = { initialDelayMs: 0, intervalMs: 50, maxIntervalMs: 100, scanIntervalMs: 50, requestsPerSecond: 200 } as const;

let tables = 0;
function table(): string {
  tables += 1;
  return `fleet_${process.pid}_${tables}`;
}

describe('a database that restarts', () => {
  let server: RunningPostgres;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(() => server.stop());

  it('is logged and waited out: the worker keeps running and settles every payment after the restart', async () => {
    const unhandled: unknown[] = [];
    const onError = (error: unknown) => unhandled.push(error);
    process.on('uncaughtException', onError);
    const journalLines = lines();
    const journal = new PostgresJournal({ connectionString: server.connectionString, tableName: table(), logger: journalLines.logger });
    const till = client(journal);
    const ids: string[] = [];
    for (let index = 0; index < 30; index++) {
      ids.push((await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.neverSettles })).referenceId);
    }
    const workerLines = lines();
    const worker = client(journal, [], workerLines.logger).startSettlementWorker({ ...FAST, leaseMs: 2_000 });
    try {
      // Every pooled connection is busy or idle in the pool when the server goes down (fast shutdown).
      await new Promise((resolve) => setTimeout(resolve, 300));
      await server.halt();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      await server.resume();
      for (const id of ids) running.simulator.settle(id, 'successful');
      await vi.waitFor(async () => expect(await journal.list({ states: ['successful'] })).toHaveLength(30), {
        timeout: 15_000,
        interval: 200,
      });
    } finally {
      await worker.stop();
      await journal.close();
      process.off('uncaughtException', onError);
    }
    expect(unhandled).toEqual([]);
    // The outage was reported (by the pool's listener or the worker's failed calls), not thrown.
    expect([...journalLines.warn, ...workerLines.warn].join('\n')).toMatch(/broke|could not/);
  }, 40_000);

  it('a journal closed just before the database stops does not crash the process', async () => {
    const unhandled: unknown[] = [];
    const onError = (error: unknown) => unhandled.push(error);
    process.on('uncaughtException', onError);
    try {
      for (let round = 0; round < 3; round++) {
        const journal = new PostgresJournal({ connectionString: server.connectionString, tableName: table(), logger: lines().logger });
        await Promise.all(Array.from({ length: 8 }, () => journal.list()));
        const closing = journal.close();
        await server.halt();
        await closing;
        await server.resume();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(unhandled).toEqual([]);
  }, 40_000);
});

describe('rows that cannot be read', () => {
  const url = inject('postgresUrl');
  const admin = new pg.Pool({ connectionString: url });
  afterAll(() => admin.end());

  it('are reported once and skipped: recover(), list() and the worker go on, nothing is left leased, a foreign id is never requested', async () => {
    const name = table();
    const journalLines = lines();
    const journal = new PostgresJournal({ connectionString: url, tableName: name, logger: journalLines.logger });
    const till = client(journal);
    const ids: string[] = [];
    for (let index = 0; index < 6; index++) {
      ids.push((await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.succeeds })).referenceId);
    }
    const [corrupt] = ids as [string];
    const foreign = '../../../health?x=';
    await admin.query(`UPDATE "${name}" SET error = '"oops"'::jsonb, version = version + 1, writes = writes + 1 WHERE reference_id = $1`, [
      corrupt,
    ]);
    await admin.query(
      `INSERT INTO "${name}" SELECT $1, state, product_id, amount, currency, phone_number, narration, fingerprint, created_at, updated_at,
         status_text, transaction_code, reason, error, NULL, NULL, version, send_window_ms, contradiction, deployment, sealed_phone_number, writes
         FROM "${name}" WHERE reference_id = $2`,
      [foreign, ids[1]],
    );

    expect((await journal.list()).map((record) => record.referenceId).sort()).toEqual(ids.slice(1).sort());
    expect(await journal.list()).toHaveLength(5);
    const paths: string[] = [];
    const recoverLines = lines();
    const recovered = await client(journal, paths, recoverLines.logger).recover();
    // Every readable record was checked (the simulator answers pending once, then settles).
    expect(recovered.map((record) => record.referenceId).sort()).toEqual(ids.slice(1).sort());
    expect(paths.some((path) => path.includes('health') || path.includes('..'))).toBe(false);
    expect(journalLines.warn.filter((line) => line.includes('health?x='))).toHaveLength(1);
    expect(recoverLines.warn).toEqual([]);

    // The worker: more payments, the bad rows present; it settles the others and leaves no lease behind.
    const more: string[] = [];
    for (let index = 0; index < 5; index++) {
      more.push((await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.succeeds })).referenceId);
    }
    const workerPaths: string[] = [];
    const worker = client(journal, workerPaths).startSettlementWorker(FAST);
    try {
      await vi.waitFor(async () => expect(await journal.list({ states: ['successful'] })).toHaveLength(10), {
        timeout: 10_000,
        interval: 100,
      });
    } finally {
      await worker.stop();
    }
    expect(workerPaths.some((path) => path.includes('health') || path.includes('..'))).toBe(false);
    const leased = await admin.query(
      `SELECT reference_id FROM "${name}" WHERE leased_to IS NOT NULL AND state IN ('initiating', 'pending', 'unknown')`,
    );
    expect(leased.rows).toEqual([]);
    // Reported once each, however many reads met them.
    expect(journalLines.warn.filter((line) => line.includes(corrupt))).toHaveLength(1);
    await journal.close();
  }, 30_000);
});

describe('waitForSettlement on PostgreSQL', () => {
  const url = inject('postgresUrl');

  it('wakes every till when the worker records the outcome, with no request of its own (one LISTEN connection)', async () => {
    const name = table();
    const journal = new PostgresJournal({ connectionString: url, tableName: name });
    const tillPaths: string[] = [];
    const till = client(journal, tillPaths);
    const ids: string[] = [];
    for (let index = 0; index < 20; index++) {
      ids.push((await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.neverSettles })).referenceId);
    }
    tillPaths.length = 0;
    const waits = ids.map((id) => till.waitForSettlement(id, { maxWaitMs: 20_000 }));
    const workerPaths: string[] = [];
    const worker = client(journal, workerPaths).startSettlementWorker(FAST);
    try {
      await vi.waitFor(() => expect(workerPaths.length).toBeGreaterThan(20), { timeout: 10_000 });
      const settledAt = Date.now();
      for (const id of ids) running.simulator.settle(id, 'successful');
      const records = await Promise.all(waits);
      expect(records.map((record) => record.state)).toEqual(ids.map(() => 'successful'));
      // Woken by the notification, not by a slow schedule (the safety-net read is every 15 s).
      expect(Date.now() - settledAt).toBeLessThan(5_000);
    } finally {
      await worker.stop();
    }
    expect(tillPaths).toEqual([]);
    const listeners = await new pg.Pool({ connectionString: url }).query(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'LISTEN "${name}_settled"%'`,
    );
    expect(listeners.rows[0].n).toBeLessThanOrEqual(1);
    await journal.close();
  }, 30_000);

  it('rejects with PollTimeoutError after maxWaitMs, and with the signal’s reason when aborted', async () => {
    const journal = new PostgresJournal({ connectionString: url, tableName: table() });
    const till = client(journal);
    const { referenceId } = await till.initiate({ productId: PRODUCTS.primary, amount: 25, phoneNumber: PHONES.neverSettles });
    await expect(till.waitForSettlement(referenceId, { maxWaitMs: 200 })).rejects.toBeInstanceOf(PollTimeoutError);
    const controller = new AbortController();
    const waiting = till.waitForSettlement(referenceId, { signal: controller.signal });
    controller.abort(new Error('till closed'));
    await expect(waiting).rejects.toThrow('till closed');
    await expect(till.waitForSettlement('not-a-uuid')).rejects.toThrow(/referenceId/);
    await journal.close();
  });
});

describe('PostgreSQL schema', () => {
  it('refuses a table name too long for the names derived from it, before any I/O', () => {
    expect(() => new PostgresJournal({ connectionString: 'postgres://127.0.0.1:1/x', tableName: 'a'.repeat(48) })).toThrow(TypeError);
    expect(() => new PostgresJournal({ connectionString: 'postgres://127.0.0.1:1/x', tableName: 'a'.repeat(47) })).not.toThrow();
  });

  it('a 47-character table gets every index and the notification trigger', async () => {
    const url = inject('postgresUrl');
    const name = `t${randomUUID().replaceAll('-', '').slice(0, 16)}${'x'.repeat(30)}`;
    expect(name).toHaveLength(47);
    const journal = new PostgresJournal({ connectionString: url, tableName: name });
    await journal.migrate();
    const pool = new pg.Pool({ connectionString: url });
    const indexes = await pool.query('SELECT indexname FROM pg_indexes WHERE tablename = $1 OR tablename = $2', [name, `${name}_history`]);
    expect(indexes.rows.map((row) => row.indexname).sort()).toEqual(
      [
        `${name}_contra_idx`,
        `${name}_due_idx`,
        `${name}_history_pkey`,
        `${name}_history_ref_idx`,
        `${name}_open_idx`,
        `${name}_pkey`,
      ].sort(),
    );
    const triggers = await pool.query('SELECT tgname FROM pg_trigger WHERE tgname = $1', [`${name}_settled`]);
    expect(triggers.rows).toHaveLength(1);
    // The lock against earlier releases' writes, on the records and on the budgets, under its full names.
    const locks = await pool.query('SELECT tgname FROM pg_trigger WHERE tgname LIKE $1', [`${name}%lock%`]);
    expect(locks.rows.map((row) => row.tgname).sort()).toEqual(
      [`${name}_b_lock_insert`, `${name}_b_lock_update`, `${name}_lock_insert`, `${name}_lock_update`].sort(),
    );
    await pool.end();
    await journal.close();
  });
});
