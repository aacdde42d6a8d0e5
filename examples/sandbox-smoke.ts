/**
 * The sandbox smoke flow (`npm start`): health → resolve a tag → pick its airtel_money number →
 * push a collection → wait for it to settle, printing each step with its timing and a live status line.
 * Exit code 0 only if every step passed.
 *
 * Runs against the embedded simulator unless the sandbox variables are set (see connect.ts).
 *
 * Run: `node examples/sandbox-smoke.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import { type CollectionStatus, mobileNumberFor, TapCollectionsError } from 'tap-collections-sdk';
import { connect } from './connect.ts';

interface StepResult {
  name: string;
  ok: boolean;
  ms: number;
  detail: string;
}

const results: StepResult[] = [];
const live = process.stdout.isTTY;

async function step<T>(name: string, run: () => Promise<T>, describe: (value: T) => string): Promise<T> {
  const started = performance.now();
  process.stdout.write(`• ${name} …${live ? '' : '\n'}`);
  try {
    const value = await run();
    const ms = Math.round(performance.now() - started);
    results.push({ name, ok: true, ms, detail: describe(value) });
    process.stdout.write(`${live ? '\r\x1b[2K' : ''}✔ ${name} (${ms} ms): ${describe(value)}\n`);
    return value;
  } catch (error) {
    const ms = Math.round(performance.now() - started);
    const detail = error instanceof TapCollectionsError ? `${error.name}: ${error.message}` : String(error);
    results.push({ name, ok: false, ms, detail });
    process.stdout.write(`${live ? '\r\x1b[2K' : ''}✘ ${name} (${ms} ms): ${detail}\n`);
    throw error;
  }
}

function statusLine(status: CollectionStatus, since: number): void {
  const seconds = ((performance.now() - since) / 1000).toFixed(1);
  const text = status.statusText === 'pending' ? 'waiting for the customer to approve on their phone…' : status.statusText;
  if (live) process.stdout.write(`\r\x1b[2K  ↻ ${text} (${seconds} s)`);
  else process.stdout.write(`  ↻ ${text} (${seconds} s)\n`);
}

const connection = await connect();
console.log(`tap-collections-sdk smoke flow against the ${connection.target}\n`);
const flowStarted = performance.now();
let exitCode = 1;
try {
  await step(
    'Collections health',
    () => connection.collections.health(),
    (body) => JSON.stringify(body),
  );
  const suffix = crypto.randomUUID().slice(0, 8);
  const query = await step(
    `Resolve tag ${connection.tagId}`,
    () =>
      connection.tap.submitCustomerQuery({
        merchantId: `smoke-merchant-${suffix}`,
        merchantName: 'SDK smoke test',
        terminalId: `smoke-terminal-${suffix}`,
        amount: 1,
        tagId: connection.tagId,
      }),
    (resolved) => `holder resolved, ${resolved.tag.mobileNumbers.length} number(s) on the tag, query ${resolved.id}`,
  );
  const phoneNumber = await step(
    'Pick the airtel_money number',
    async () => {
      const number = mobileNumberFor(query, 'airtel_money');
      if (number === undefined) throw new Error('the tag has no active airtel_money number');
      return number;
    },
    (number) => `${number.slice(0, 5)}*****${number.slice(-2)}`,
  );
  const collection = await step(
    'Push the collection',
    () => connection.collections.initiate({ productId: connection.productId, phoneNumber, amount: 1, narration: 'SDK smoke test' }),
    (accepted) => `${accepted.status}, referenceId ${accepted.referenceId}`,
  );
  const pollStarted = performance.now();
  const outcome = await step(
    'Wait for settlement',
    async () => {
      const settled = await connection.collections.pollUntilSettled(collection.referenceId, {
        ...connection.poll,
        maxWaitMs: 120_000,
        onUpdate: (status) => statusLine(status, pollStarted),
      });
      if (live) process.stdout.write('\r\x1b[2K');
      if (settled.statusText !== 'successful')
        throw new Error(`settled as ${settled.statusText}: ${settled.reason ?? settled.transactionCode}`);
      return settled;
    },
    (settled) => `${settled.statusText} (${settled.transactionCode ?? 'no code'})`,
  );
  exitCode = outcome.statusText === 'successful' ? 0 : 1;
} catch {
  exitCode = 1;
} finally {
  await connection.close();
}

const passed = results.filter((result) => result.ok).length;
console.log(`\n${passed} of ${results.length} steps passed in ${Math.round(performance.now() - flowStarted)} ms`);
for (const result of results) console.log(`  ${result.ok ? 'PASS' : 'FAIL'}  ${String(result.ms).padStart(6)} ms  ${result.name}`);
process.exitCode = exitCode;
