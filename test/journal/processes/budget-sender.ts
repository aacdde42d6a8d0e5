/**
 * A process of the shared-budget tests and benchmark: a `CollectionsClient` with `requestsPerSecond` on a shared
 * journal that sends status checks as fast as its budget lets it (a settlement worker's backlog), and creates now
 * and then when told to (a till).
 *
 * Configured by environment: BUDGET_JOURNAL (`sqlite:<file>` or `postgres`, with DATABASE_URL and JOURNAL_TABLE),
 * BUDGET_BASE_URL, BUDGET_LIMIT (a number, `adaptive`, or `none`: no shared budget), BUDGET_LEASE_MS, BUDGET_SENDER (its name, sent as
 * `x-sender`), BUDGET_CHECKS (concurrent check loops, default 8), BUDGET_CREATE_EVERY_MS (a create every so often,
 * default none), BUDGET_WORKER (`1`: a settlement worker settles the journal's open payments instead of the check
 * loops), BUDGET_RUN_MS (how long, default until killed). Lines: `ready`, then `create-wait <ms>` per create
 * (from its last journal write to the request leaving: the wait for its token), `statement <epoch ms>` per statement
 * the shared budget sent to PostgreSQL, and at the end `done <json>`
 * (requests answered, refused, and the statements the shared budget sent to PostgreSQL).
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
/** Statements the shared budget sent to PostgreSQL (its round trips). */
let statements = 0;
const postgresPool = () => {
  const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 });
  pool.on('error', () => undefined);
  return {
    query: (text: string, values?: unknown[]) => {
      // The budget's own statements (its table), not the journal's work for payments.
      if (text.includes('_budgets')) {
        statements++;
        say(`statement ${Date.now()}`);
      }
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
/**
 * When each create's last journal write before sending resolved, by reference: from then on it waits only for its
 * token (and the client's concurrency slot), until the request leaves (the fetch).
 */
const askedAt = new Map<string, number>();
const insert = journal.insert.bind(journal);
const transition = journal.transition.bind(journal);
journal.insert = async (record) => {
  const stored = await insert(record);
  askedAt.set(record.referenceId, Date.now());
  return stored;
};
journal.transition = async (referenceId, version, change) => {
  const moved = await transition(referenceId, version, change);
  if (askedAt.has(referenceId)) askedAt.set(referenceId, Date.now());
  return moved;
};
// With BUDGET_TRACE=1, every grant of the journal (the benchmark's trace shows how the shares moved).
const takeBudget = journal.takeBudget?.bind(journal);
if (takeBudget !== undefined && process.env.BUDGET_TRACE === '1')
  journal.takeBudget = async (request) => {
    const grant = await takeBudget(request);
    say(
      `grant ${Date.now()} ${JSON.stringify({ keep: request.keep, want: request.want, share: grant.share, target: grant.target, holders: grant.holders, limit: grant.limit, limited: request.rateLimited })}`,
    );
    return grant;
  };
const client = new CollectionsClient({
  journal,
  apiKey: 'budget-test-key-0123456789',
  baseUrl: env('BUDGET_BASE_URL'),
  // `none`: no shared budget (a benchmark's baseline).
  ...(limitText === 'none'
    ? {}
    : {
        requestsPerSecond: limitText === 'adaptive' ? 'adaptive' : Number(limitText),
        budgetLeaseMs: Number(env('BUDGET_LEASE_MS', '10000')),
      }),
  headers: { 'x-sender': sender },
  logLevel: 'error',
  maxRetries: 0,
  fetch: (input, init) => {
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (method === 'POST' && typeof init?.body === 'string') {
      const referenceId = (JSON.parse(init.body) as { referenceId: string }).referenceId;
      const asked = askedAt.get(referenceId);
      if (asked !== undefined) say(`create-wait ${Date.now() - asked}`);
      askedAt.delete(referenceId);
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
const worker =
  env('BUDGET_WORKER', '0') === '1'
    ? client.startSettlementWorker({
        // Its own cap is far above the key's budget: the shared budget is what holds it.
        requestsPerSecond: 1_000,
        maxConcurrentChecks: 16,
        initialDelayMs: 0,
        intervalMs: 200,
        maxIntervalMs: 500,
        scanIntervalMs: 250,
        signal: stop.signal,
      })
    : undefined;
const loops = Array.from({ length: worker === undefined ? Number(env('BUDGET_CHECKS', '8')) : 0 }, async () => {
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
    await client
      .initiate(
        { referenceId, productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10', amount: 10, phoneNumber: '0977123456' },
        { signal: stop.signal },
      )
      .catch(() => undefined);
  }
})();
say('ready');
await Promise.all([...loops, creates, worker?.done]);
say(`done ${JSON.stringify({ sent, refused, statements })}`);
await journal.close();
process.exit(0);
