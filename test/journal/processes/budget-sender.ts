/**
 * A process of the shared-budget tests and benchmark: a `CollectionsClient` with `requestsPerSecond` on a shared
 * journal that sends status checks as fast as its budget lets it (a settlement worker's backlog), and creates now
 * and then when told to (a till).
 *
 * Configured by environment: BUDGET_JOURNAL (`sqlite:<file>` or `postgres`, with DATABASE_URL and JOURNAL_TABLE),
 * BUDGET_BASE_URL, BUDGET_LIMIT (a number or `adaptive`), BUDGET_LEASE_MS, BUDGET_SENDER (its name, sent as
 * `x-sender`), BUDGET_CHECKS (concurrent check loops, default 8), BUDGET_CREATE_EVERY_MS (a create every so often,
 * default none), BUDGET_RUN_MS (how long, default until killed). Lines: `ready`, then `create-wait <ms>` per create
 * (from asking to its token: measured as the time to the request leaving), and at the end `done <json>` (requests
 * answered, refused, and the statements sent to PostgreSQL).
 */
import pg from 'pg';
import { CollectionsClient, type PaymentJournal } from '../../../src/index.js';
import { PostgresJournal } from '../../../src/postgres/index.js';
import { SqliteJournal } from '../../../src/sqlite/index.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const say = (line: string) => process.stdout.write(`${line}\n`);
const kind = env('BUDGET_JOURNAL');
/** Statements sent to PostgreSQL (the journal's round trips). */
let statements = 0;
const postgresPool = () => {
  const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });
  pool.on('error', () => undefined);
  return {
    query: (text: string, values?: unknown[]) => {
      statements++;
      return pool.query(text, values);
    },
    connect: () => pool.connect(),
    end: () => pool.end(),
  };
};
const journal: PaymentJournal & { close(): Promise<void> } = kind.startsWith('sqlite:')
  ? new SqliteJournal(kind.slice('sqlite:'.length), { busyTimeoutMs: 10_000 })
  : new PostgresJournal({ pool: postgresPool() as never, tableName: env('JOURNAL_TABLE') });
const limitText = env('BUDGET_LIMIT');
const sender = env('BUDGET_SENDER');
/** When each create was asked for, by reference: its token wait ends when the request leaves (the fetch). */
const askedAt = new Map<string, number>();
const client = new CollectionsClient({
  journal,
  apiKey: 'budget-test-key-0123456789',
  baseUrl: env('BUDGET_BASE_URL'),
  requestsPerSecond: limitText === 'adaptive' ? 'adaptive' : Number(limitText),
  budgetLeaseMs: Number(env('BUDGET_LEASE_MS', '10000')),
  headers: { 'x-sender': sender },
  logLevel: 'error',
  maxRetries: 0,
  fetch: (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const referenceId = (JSON.parse(init.body) as { referenceId: string }).referenceId;
      const asked = askedAt.get(referenceId);
      if (asked !== undefined) say(`create-wait ${Date.now() - asked}`);
    }
    return fetch(input, init);
  },
});
const stop = new AbortController();
const runMs = Number(env('BUDGET_RUN_MS', '0'));
if (runMs > 0) setTimeout(() => stop.abort(), runMs);
process.on('SIGTERM', () => stop.abort());
let sent = 0;
let refused = 0;
const loops = Array.from({ length: Number(env('BUDGET_CHECKS', '8')) }, async () => {
  while (!stop.signal.aborted) {
    try {
      await client.checkStatus(globalThis.crypto.randomUUID(), { signal: stop.signal });
      sent++;
    } catch {
      refused++;
      // A 429 (or the stop): the next check waits for the budget like every other.
    }
  }
});
const createEveryMs = Number(env('BUDGET_CREATE_EVERY_MS', '0'));
const creates = (async () => {
  if (createEveryMs <= 0) return;
  while (!stop.signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, createEveryMs));
    if (stop.signal.aborted) break;
    const referenceId = globalThis.crypto.randomUUID();
    askedAt.set(referenceId, Date.now());
    await client
      .initiate(
        { referenceId, productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10', amount: 10, phoneNumber: '0977123456' },
        { signal: stop.signal },
      )
      .catch(() => undefined);
  }
})();
say('ready');
await Promise.all([...loops, creates]);
say(`done ${JSON.stringify({ sent, refused, statements })}`);
await journal.close();
process.exit(0);
