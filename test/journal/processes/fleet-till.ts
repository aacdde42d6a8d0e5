/**
 * A till process for the fleet crash test (test/journal/crash-fleet.test.ts): several of these sell the SAME payment
 * (one referenceId) on one journal, a SqliteJournal file or a PostgreSQL table, and any of them may be killed.
 *
 * It runs recover() first (as every till does at start), then initiates the payment; on `UnknownOutcomeError` it does
 * what a till is told to do: no new reference, no new charge; it checks again (recover(), then initiate with the same
 * referenceId) until the journal gives a verdict: accepted (then it polls until settled) or `not-sent` (the sale would
 * start over under a new reference; this process ends there).
 *
 * Configured by environment: FLEET_JOURNAL (`sqlite:<file>` or `postgres`, with DATABASE_URL and JOURNAL_TABLE),
 * FLEET_BASE_URL, FLEET_API_KEY, FLEET_REFERENCE, FLEET_GRACE_MS (recover's notFoundGraceMs), FLEET_TIMEOUT_MS,
 * FLEET_MODE (`sell` or `recover-only`), FLEET_JOURNAL_CLOCK_OFFSET_MS (SQLite: the journal's clock moved on, for the
 * last recovery "a while later").
 * Lines: `recovered <json>`, `ready`, `unknown <decidableAt>`, `accepted`, `settled <status>`, `not-sent`.
 */
import { CollectionsClient, type PaymentJournal, RequestValidationError, UnknownOutcomeError } from '../../../src/index.js';
import { PostgresJournal } from '../../../src/postgres/index.js';
import { SqliteJournal } from '../../../src/sqlite/index.js';
import { PHONES, PRODUCTS } from '../../../src/testing/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};
const say = (line: string) => process.stdout.write(`${line}\n`);
const referenceId = env('FLEET_REFERENCE');
const grace = Number(env('FLEET_GRACE_MS'));
const kind = env('FLEET_JOURNAL');

// A process started with the clock-ahead preload sees a wrong `Date`; the machine's clock is kept aside by the preload.
// SQLite's journal clock is the machine's (every process on the file shares the machine), so it is read from there:
// what this process's wrong `Date` may still change is everything else the SDK times by it.
const MACHINE_NOW = Symbol.for('tap-collections-test.machineNow');
const machineNow = (globalThis as Record<symbol, unknown>)[MACHINE_NOW] as (() => number) | undefined;
const offset = Number(process.env.FLEET_JOURNAL_CLOCK_OFFSET_MS ?? 0);
const journal: PaymentJournal & { close(): Promise<void> } = kind.startsWith('sqlite:')
  ? new SqliteJournal(kind.slice('sqlite:'.length), { busyTimeoutMs: 10_000, now: () => (machineNow ?? Date.now)() + offset })
  : new PostgresJournal({ connectionString: env('DATABASE_URL'), tableName: env('JOURNAL_TABLE') });
// No retries: the attempt window (what a reader must wait out before a verdict) is one time limit.
const client = new CollectionsClient({
  apiKey: env('FLEET_API_KEY'),
  baseUrl: env('FLEET_BASE_URL'),
  journal,
  logLevel: 'off',
  timeoutMs: Number(env('FLEET_TIMEOUT_MS')),
  maxRetries: 0,
});

const recoverAll = async () => (await client.recover({ notFoundGraceMs: grace })).map((record) => [record.referenceId, record.state]);
say(`recovered ${JSON.stringify(await recoverAll())}`);
if (env('FLEET_MODE') === 'recover-only') {
  await journal.close();
  process.exit(0);
}
say('ready');
// The same payment from every till: its number (and so how it settles) follows from the reference.
const phoneNumber = Number.parseInt(referenceId.at(-1) ?? '0', 16) % 4 === 0 ? PHONES.insufficientFunds : PHONES.succeeds;
for (;;) {
  try {
    await client.initiate({ productId: PRODUCTS.primary, phoneNumber, amount: 25, referenceId });
  } catch (error) {
    if (error instanceof UnknownOutcomeError) {
      say(`unknown ${error.decidableAt ?? ''}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // recover() closes it as not-sent once the journal's clock allows; the next initiate then says so.
      await recoverAll();
      continue;
    }
    if (error instanceof RequestValidationError && /not-sent/.test(error.message)) {
      say('not-sent');
      break;
    }
    throw error;
  }
  say('accepted');
  const status = await client.pollUntilSettled(referenceId, { initialDelayMs: 5, intervalMs: 20, maxIntervalMs: 40 });
  say(`settled ${status.statusText}`);
  break;
}
await journal.close();
