/**
 * (a) Tap request overhead: `TapClient.submitCustomerQuery` against a hand-written `fetch` and plain ky, over loopback
 * HTTP to a server in a child process, interleaved in rounds. Target: the SDK ≤ 1.10× plain ky on the same request (ky is
 * the transport, so its cost over fetch is the floor; the peers are compared in `calls.ts`).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import ky from 'ky';
import {
  API_KEY,
  type BenchSdk,
  CUSTOMER_QUERIES_PATH,
  CUSTOMER_QUERY_INPUT,
  CUSTOMER_QUERY_RESPONSE,
  median,
  passFail,
  percentile,
  printTable,
  roundOrder,
  spawnBenchChild,
} from './harness.ts';

/** The HTTP server of (a), run in the child process: a fixed 201 for the customer-query endpoint, 404 otherwise. Prints its port. */
export function serve(): void {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'POST' && request.url === CUSTOMER_QUERIES_PATH) {
        response.writeHead(201, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(CUSTOMER_QUERY_RESPONSE),
          'x-request-id': 'req-bench',
        });
        response.end(CUSTOMER_QUERY_RESPONSE);
      } else {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end('{"success":false,"message":"not found"}');
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
  process.on('disconnect', () => process.exit(0));
}

/** Starts the server in a child process (its own core: the client's cost is not diluted by the server's). */
async function startServer(): Promise<{ baseUrl: string; stop: () => void }> {
  const child = spawnBenchChild(new URL(import.meta.url), 'serve', { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bench server exited (${code})`)));
    const stdout = child.stdout;
    if (!stdout) return reject(new Error('the bench server has no stdout'));
    stdout.setEncoding('utf8');
    stdout.once('data', (line: string) => resolve((JSON.parse(line) as { port: number }).port));
  });
  child.removeAllListeners('exit');
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

type Variant = { readonly name: string; readonly call: () => Promise<unknown> };

/** Runs (a) and prints its table. */
export async function run(sdk: BenchSdk): Promise<void> {
  const ROUNDS = 40;
  const CALLS = 200;
  const WARMUP = 500;
  const { baseUrl, stop } = await startServer();
  try {
    const url = `${baseUrl}${CUSTOMER_QUERIES_PATH}`;
    const headers = { accept: 'application/json', 'user-agent': `tap-collections-sdk/${sdk.SDK_VERSION}`, 'x-api-key': API_KEY };
    const tap = new sdk.TapClient({ apiKey: API_KEY, baseUrl, logLevel: 'off' });
    // Every variant sends the same body: the input and a fresh referenceId, as the API requires one.
    const variants: Variant[] = [
      {
        name: 'hand-written fetch',
        call: async () => {
          const response = await fetch(url, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({ ...CUSTOMER_QUERY_INPUT, referenceId: randomUUID() }),
          });
          if (response.status !== 201) throw new Error(`fetch: status ${response.status}`);
          return ((await response.json()) as { data: unknown }).data;
        },
      },
      {
        name: 'ky.post().json()',
        call: async () => ky.post(url, { headers, json: { ...CUSTOMER_QUERY_INPUT, referenceId: randomUUID() } }).json(),
      },
      { name: 'TapClient.submitCustomerQuery', call: () => tap.submitCustomerQuery(CUSTOMER_QUERY_INPUT) },
    ];
    const sdkQuery = (await tap.submitCustomerQuery(CUSTOMER_QUERY_INPUT)) as { id?: unknown };
    if (sdkQuery.id !== 'cq_0001') throw new Error('the SDK did not return the customer query');
    for (const variant of variants) for (let i = 0; i < WARMUP; i++) await variant.call();

    const perCall = variants.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = roundOrder(variants.length, round);
      for (const index of order) {
        const variant = variants[index];
        if (!variant) continue;
        const started = performance.now();
        for (let i = 0; i < CALLS; i++) await variant.call();
        perCall[index]?.push(((performance.now() - started) * 1000) / CALLS);
      }
    }

    const baseline = perCall[0] ?? [];
    const ratioTo = (index: number) => median((perCall[index] ?? []).map((value, round) => value / (baseline[round] ?? Number.NaN)));
    const sdkRatio = ratioTo(2);
    // The SDK against plain ky, round by round: the SDK's own share of the cost.
    const sdkOverKy = median((perCall[2] ?? []).map((value, round) => value / ((perCall[1] ?? [])[round] ?? Number.NaN)));
    printTable(
      `(a) Tap request overhead: POST ${CUSTOMER_QUERIES_PATH}, 201 JSON (${CUSTOMER_QUERY_RESPONSE.length} bytes) from a loopback node:http server in a child process.\n` +
        `    Baseline: the hand-written fetch. ${ROUNDS} rounds × ${CALLS} sequential calls per variant, order rotated each round, ` +
        `${WARMUP} warm-up calls each; keep-alive (fetch defaults) for all.\n` +
        '    µs/call: median over rounds, with the p25–p75 spread across rounds; ratio: median over rounds of (variant / fetch) in the same round.',
      ['variant', 'µs/call', 'p25–p75', 'ratio vs fetch', 'target'],
      variants.map((variant, index) => {
        const values = perCall[index] ?? [];
        const target = index === 2 ? `≤ 1.10× ky ${passFail(sdkOverKy <= 1.1)}` : '-';
        return [
          variant.name,
          median(values).toFixed(1),
          `${percentile(values, 0.25).toFixed(1)}–${percentile(values, 0.75).toFixed(1)}`,
          `${ratioTo(index).toFixed(3)}×`,
          target,
        ];
      }),
    );
    console.log(
      `\nSDK/ky = ${sdkOverKy.toFixed(3)}× (target ≤ 1.10×: ${passFail(sdkOverKy <= 1.1)}); SDK/fetch = ${sdkRatio.toFixed(3)}×; ky/fetch = ${ratioTo(1).toFixed(3)}×`,
    );
  } finally {
    stop();
  }
}
