/**
 * The till process of `npm run bench -- cashier`: the BUILT package (`dist/`), a `SqliteJournal`, one sale. It prints
 * one JSON line per thing the cashier sees, with the milliseconds since the sale (or, `CASHIER_PHASE=recover`, since
 * `recover()` started):
 *
 * - `{"event":"sending","referenceId":…}` once the record is about to be written (the parent may SIGKILL it then);
 * - `{"event":"told","ms":…,"what":…}`: what `initiate` answered (`pending`, or the error's name and message);
 * - `{"event":"definite","ms":…,"state":…}`: the first definite answer (the record `pending`, `successful`, `failed`,
 *   `not-sent` or `rejected`), after `recover()` at the record's `decidableAt` when `initiate` could not tell;
 * - `{"event":"started-over","referenceId":…,"state":…}`: on `not-sent`, the cashier's new sale (a new reference), sent
 *   to `CASHIER_RETRY_BASE_URL` (the service once reachable again).
 *
 * Settings (environment): CASHIER_BASE_URL, CASHIER_RETRY_BASE_URL (default CASHIER_BASE_URL), CASHIER_JOURNAL (a
 * file), CASHIER_AMOUNT, CASHIER_MODE (`duplicateReferences`: `unknown` or `refused`, passed untyped: a build without
 * the option refuses it or ignores it), CASHIER_TIMEOUT_MS (default 2000), CASHIER_MAX_RETRIES (default 2),
 * CASHIER_PHASE (`sale` or `recover`), CASHIER_GIVE_UP_MS (default 180000).
 */
import type * as Sdk from '../src/index.js';
import type * as SqliteEntry from '../src/sqlite/index.js';

const { CollectionsClient, UnknownOutcomeError } = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Sdk;
const { SqliteJournal } = (await import(new URL('../dist/sqlite/index.js', import.meta.url).href)) as typeof SqliteEntry;

/** The simulator's key and product of its primary partner (tap-collections-sdk/testing), and a number that succeeds. */
const API_KEY = 'col_sim_primary_8e4b1f7c3a';
const PRODUCT_ID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';
const PHONE = '260977123456';
const DEFINITE = new Set(['pending', 'successful', 'failed', 'not-sent', 'rejected']);

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`cashier-till: ${name} is required`);
  return value;
};
const say = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

const journal = new SqliteJournal(env('CASHIER_JOURNAL'));
const clientOptions = (baseUrl: string): Record<string, unknown> => ({
  apiKey: API_KEY,
  baseUrl,
  journal,
  timeoutMs: Number(env('CASHIER_TIMEOUT_MS', '2000')),
  maxRetries: Number(env('CASHIER_MAX_RETRIES', '2')),
  logLevel: 'off',
  duplicateReferences: env('CASHIER_MODE', 'unknown'),
});
// Untyped: `duplicateReferences` is an option of later builds.
const client = new CollectionsClient(clientOptions(env('CASHIER_BASE_URL')) as never);
const giveUpMs = Number(env('CASHIER_GIVE_UP_MS', '180000'));
const started = performance.now();
const since = () => Math.round(performance.now() - started);

/** Calls `recover()` until the record is definite (at its `decidableAt`, or every second while it has none). */
async function untilDefinite(referenceId: string): Promise<string | undefined> {
  for (;;) {
    const record = await journal.get(referenceId);
    if (record !== undefined && DEFINITE.has(record.state)) return record.state;
    if (since() > giveUpMs) return undefined;
    const at = record?.decidableAt === undefined ? Number.NaN : Date.parse(record.decidableAt);
    const pause = Number.isFinite(at) ? Math.min(1_000, Math.max(50, at - Date.now() + 20)) : 1_000;
    await new Promise((resolve) => setTimeout(resolve, pause));
    await client.recover().catch(() => undefined);
  }
}

async function sale(): Promise<void> {
  const referenceId = globalThis.crypto.randomUUID();
  const input = { referenceId, productId: PRODUCT_ID, phoneNumber: PHONE, amount: Number(env('CASHIER_AMOUNT')) };
  say({ event: 'sending', referenceId });
  let state: string | undefined;
  try {
    await client.initiate(input);
    say({ event: 'told', ms: since(), what: 'pending' });
  } catch (error) {
    const name = error instanceof Error ? error.name : 'Error';
    say({ event: 'told', ms: since(), what: `${name}: ${error instanceof Error ? error.message : String(error)}` });
    if (!(error instanceof UnknownOutcomeError)) {
      const record = await journal.get(referenceId);
      if (record !== undefined && DEFINITE.has(record.state)) state = record.state;
    }
  }
  state ??= await untilDefinite(referenceId);
  say({ event: 'definite', ms: since(), state: state ?? 'none' });
  await startOverIfNotSent(state, input);
}

/** On `not-sent` (or `rejected`), the cashier starts the sale over: a new reference, once the service answers again. */
async function startOverIfNotSent(state: string | undefined, input: { productId: string; phoneNumber: string; amount: number }) {
  if (state !== 'not-sent' && state !== 'rejected') return;
  const retry = new CollectionsClient(clientOptions(env('CASHIER_RETRY_BASE_URL', env('CASHIER_BASE_URL'))) as never);
  const again = globalThis.crypto.randomUUID();
  const outcome = await retry.initiate({ ...input, referenceId: again }).then(
    () => 'pending',
    (error: unknown) => (error instanceof Error ? error.name : 'Error'),
  );
  say({ event: 'started-over', referenceId: again, state: outcome });
}

async function recoverPhase(): Promise<void> {
  // The restarted till: recover() before the next sale, until its last sale is definite.
  const records = await client.recover();
  const last = records.at(-1);
  if (last === undefined) {
    say({ event: 'definite', ms: since(), state: 'no-record' });
    return;
  }
  say({ event: 'told', ms: since(), what: `recover(): ${last.state}` });
  const state = DEFINITE.has(last.state) ? last.state : await untilDefinite(last.referenceId);
  say({ event: 'definite', ms: since(), state: state ?? 'none', referenceId: last.referenceId });
  await startOverIfNotSent(state, { productId: PRODUCT_ID, phoneNumber: PHONE, amount: last.amount });
}

if (env('CASHIER_PHASE', 'sale') === 'recover') await recoverPhase();
else await sale();
await journal.close();
process.exit(0);
