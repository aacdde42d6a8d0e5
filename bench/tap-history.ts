/**
 * (tap-history) The Tap list at any history size: the list is unpaginated (every query the partner ever made,
 * about 700 bytes each), so a reconcile of a timed-out `submitCustomerQuery` and `tap.verify()` read it. The
 * list is generated on the fly by a loopback server in a child process (written only as fast as it is read),
 * with 1 000 / 10 000 / 100 000 / 1 000 000 earlier queries before the call's own. Per size: the reconcile's
 * time (the list GET, from sending it to its body's end or cancel), the bytes the client read, and the client's
 * peak heap above its idle heap; the baseline is a hand-written `fetch` reading the same list's bytes and
 * dropping them (the floor for any reader of the whole list). Then the reconcile of a query near the start,
 * and `verify()`, at 1 000 000.
 * Targets: time linear at worst (per query at 1 000 000 within 2× of per query at 10 000), peak heap ≤ 64 MiB
 * at 1 000 000, a query near the start found after < 1 MiB, verify() at most 64 KiB at 1 000 000 (one read of
 * Node's fetch body, the least any fetch reader consumes).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { countingFetch, historyInput, startHistoryServer } from '../test/helpers/tap-history.ts';
import { API_KEY, type BenchSdk, passFail, printTable, spawnBenchChild } from './harness.ts';

const SIZES = [1_000, 10_000, 100_000, 1_000_000];
const MiB = 1024 * 1024;

/** The server in the child process: each IPC message `{ count }` sets the list's length (the call's own query last). */
export async function serve(): Promise<void> {
  const options = { count: 0 };
  const server = await startHistoryServer(options);
  process.on('message', (message: { count: number }) => {
    options.count = message.count;
    server.posts = 0;
    process.send?.('ready');
  });
  process.send?.({ url: server.url });
  process.on('disconnect', () => process.exit(0));
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Runs `call` while sampling the heap; returns its result and the peak heap above the idle heap. */
async function withPeakHeap<T>(call: () => Promise<T>): Promise<{ value: T; peakBytes: number }> {
  gc();
  const idle = process.memoryUsage().heapUsed;
  let peak = idle;
  const sample = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 2);
  try {
    const value = await call();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { value, peakBytes: peak - idle };
  } finally {
    clearInterval(sample);
  }
}

/** Reads the whole list with a hand-written fetch, dropping each chunk: ms and bytes. */
async function rawRead(url: string): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const response = await fetch(`${url}/v1/tap/partners/customer-queries`, { headers: { 'x-api-key': API_KEY } });
  let bytes = 0;
  for await (const chunk of response.body ?? []) bytes += (chunk as Uint8Array).byteLength;
  return { ms: performance.now() - started, bytes };
}

export async function run(sdk: BenchSdk): Promise<void> {
  const child = spawnBenchChild(new URL(import.meta.url), 'serve', { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) => child.once('message', (message: { url: string }) => resolve(message.url)));
  const setCount = (count: number) =>
    new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send({ count });
    });
  try {
    const rows: string[][] = [];
    const perQuery = new Map<number, number>();
    let peakAtMillion = Number.NaN;
    for (const size of SIZES) {
      await setCount(size + 1);
      const raw = await rawRead(url);
      await setCount(size + 1);
      const counting = countingFetch();
      const tap = new sdk.TapClient({ apiKey: API_KEY, baseUrl: url, logLevel: 'off', maxRetries: 1, fetch: counting.fetch });
      const { value: query, peakBytes } = await withPeakHeap(() => tap.submitCustomerQuery(historyInput(size)));
      const get = counting.lastGet();
      const ms = (get?.ended ?? Number.NaN) - (get?.started ?? Number.NaN);
      if (query.transaction.referenceId !== historyInput(size).referenceId) throw new Error('the reconcile found another query');
      perQuery.set(size, ms / size);
      if (size === 1_000_000) peakAtMillion = peakBytes;
      rows.push([
        size.toLocaleString('en'),
        `${(raw.bytes / MiB).toFixed(1)} MiB`,
        raw.ms.toFixed(0),
        ms.toFixed(0),
        `${(ms / raw.ms).toFixed(2)}×`,
        `${(counting.consumed() / MiB).toFixed(1)} MiB`,
        `${(peakBytes / MiB).toFixed(1)} MiB`,
      ]);
    }

    await setCount(1_000_001);
    const early = countingFetch();
    const earlyTap = new sdk.TapClient({ apiKey: API_KEY, baseUrl: url, logLevel: 'off', maxRetries: 1, fetch: early.fetch });
    // The call's own query is the list's last; a till that retries a create made at once finds its query among the first.
    const { peakBytes: earlyPeak } = await withPeakHeap(() => earlyTap.submitCustomerQuery(historyInput(10)));
    const earlyGet = early.lastGet();
    const earlyMs = (earlyGet?.ended ?? Number.NaN) - (earlyGet?.started ?? Number.NaN);
    rows.push([
      '1,000,000 (own query 11th)',
      '',
      '',
      earlyMs.toFixed(1),
      '',
      `${(early.consumed() / 1024).toFixed(0)} KiB`,
      `${(earlyPeak / MiB).toFixed(1)} MiB`,
    ]);

    const verifying = countingFetch();
    const verifyTap = new sdk.TapClient({ apiKey: API_KEY, baseUrl: url, logLevel: 'off', fetch: verifying.fetch });
    const verifyStarted = performance.now();
    await verifyTap.verify();
    const verifyMs = performance.now() - verifyStarted;
    rows.push(['1,000,000: verify()', '', '', verifyMs.toFixed(1), '', `${verifying.consumed()} bytes`, '']);

    printTable(
      '(tap-history) Reconciling a timed-out submitCustomerQuery against a Tap list of every earlier query (about 700 bytes each),\n' +
        '    generated by a loopback server in a child process; the call\'s own query is last. "reconcile ms": the list GET from\n' +
        '    sending to its body\'s end or cancel. "fetch ms": a hand-written fetch reading the same list\'s bytes and dropping\n' +
        '    them. "read": body bytes the client consumed. "peak heap": the client\'s heap above its idle heap (sampled every 2 ms).',
      ['earlier queries', 'list', 'fetch ms', 'reconcile ms', 'vs fetch', 'read', 'peak heap'],
      rows,
    );
    const growth = (perQuery.get(1_000_000) ?? Number.NaN) / (perQuery.get(10_000) ?? Number.NaN);
    const verdicts = [
      `time per query at 1 000 000 / at 10 000 ${growth.toFixed(2)}× ${passFail(growth <= 2)}`,
      `peak heap at 1 000 000 ${(peakAtMillion / MiB).toFixed(1)} MiB ${passFail(peakAtMillion <= 64 * MiB)}`,
      `near the start at 1 000 000: read ${(early.consumed() / 1024).toFixed(0)} KiB ${passFail(early.consumed() < MiB)}`,
      // One read of the runtime's fetch body is the least any reader consumes (Node's undici hands over up to 64 KiB).
      `verify() at 1 000 000: read ${verifying.consumed()} bytes, one fetch read ${passFail(verifying.consumed() <= 64 * 1024)}`,
    ];
    console.log(`\nTap history, targets: ${verdicts.join('; ')}`);
  } finally {
    child.kill();
  }
}
