/**
 * (f) Heap per client instance: 2 000 clients kept alive, heapUsed after a settled GC minus before, per client; the SDK's
 * TapClient and CollectionsClient against openai-node, stripe (fetch client) and a plain `ky.create()`. In a child
 * process with `--expose-gc`, every variant in every round (order rotated); medians over rounds.
 */
import ky from 'ky';
import OpenAI from 'openai';
import Stripe from 'stripe';
import { API_KEY, type BenchSdk, loadSdk, median, printTable, spawnBenchChild } from './harness.ts';

const CLIENTS = 2_000;
const ROUNDS = 5;
/** Never connected to (a fake answers, or nothing is sent); not a port on fetch's blocked list. */
const BASE_URL = 'http://127.0.0.1:2';

/** Runs (f) in a child process with `--expose-gc`, and waits for it. */
export async function run(_sdk: BenchSdk): Promise<void> {
  const child = spawnBenchChild(new URL(import.meta.url), 'measure', { nodeArgs: ['--expose-gc'], stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(f) failed: the child process exited with ${code}`);
}

async function settledHeapUsed(gc: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  gc();
  return process.memoryUsage().heapUsed;
}

/** The body of (f), in the child process. */
export async function measure(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('(f) needs node --expose-gc');
  const sdk = await loadSdk();
  const fetchClient = Stripe.createFetchHttpClient();
  const variants: { name: string; make: () => unknown }[] = [
    { name: 'SDK TapClient', make: () => new sdk.TapClient({ apiKey: API_KEY, baseUrl: BASE_URL, logLevel: 'off' }) },
    { name: 'SDK CollectionsClient', make: () => new sdk.CollectionsClient({ apiKey: API_KEY, baseUrl: BASE_URL, logLevel: 'off' }) },
    { name: 'openai (new OpenAI)', make: () => new OpenAI({ apiKey: API_KEY, baseURL: BASE_URL }) },
    {
      name: 'stripe (new Stripe, fetch client)',
      make: () => new Stripe(API_KEY, { httpClient: fetchClient, host: '127.0.0.1', port: 2, protocol: 'http' }),
    },
    { name: 'ky.create() (context)', make: () => ky.create({ prefix: BASE_URL, retry: 0, timeout: false }) },
  ];
  // Warm up: the first instances build shared structures (classes, shapes) that are not per-client.
  for (const variant of variants) for (let i = 0; i < 100; i++) variant.make();
  const perClient = variants.map(() => [] as number[]);
  /** The clients of the current reading, kept alive through it. */
  const held: unknown[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const offset of variants.keys()) {
      const index = (offset + round) % variants.length;
      const variant = variants[index];
      if (!variant) continue;
      // The previous variant's clients are dropped before this reading, or their collection would count against it.
      held.length = 0;
      const before = await settledHeapUsed(gc);
      held.push(Array.from({ length: CLIENTS }, () => variant.make()));
      const after = await settledHeapUsed(gc);
      perClient[index]?.push((after - before) / CLIENTS);
    }
  }
  held.length = 0;
  const openai = median(perClient[2] ?? []);
  printTable(
    `(f) Heap per client instance: ${CLIENTS} clients kept alive, heapUsed after a settled GC (3 × (gc + 10 ms) + gc) minus before, per\n` +
      `    client; ${ROUNDS} rounds, order rotated, medians; in a child process with --expose-gc. Constructor options: key, base URL,\n` +
      '    logging off (the SDK); key, base URL (the peers). Target: the SDK at or below openai-node.',
    ['client', 'heap B/client', 'vs openai'],
    variants.map((variant, index) => {
      const bytes = median(perClient[index] ?? []);
      return [variant.name, bytes.toFixed(0), `${(bytes / openai).toFixed(2)}×`];
    }),
  );
}
