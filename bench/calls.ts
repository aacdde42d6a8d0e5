/**
 * (e) Time per call against the peers: one POST (`TapClient.submitCustomerQuery`) and one GET
 * (`CollectionsClient.checkStatus`) over loopback HTTP, with the server in this process and in a child process, each as
 * a ratio to a hand-written `fetch` and to plain ky on the same request in the same round; openai-node (`client.post` /
 * `client.get`) and stripe on its fetch client (`rawRequest`) on the equivalent request.
 * Targets: the SDK at or below openai-node, and within 1.10× of plain ky (CPU and wall both printed).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import ky from 'ky';
import OpenAI from 'openai';
import Stripe from 'stripe';
import {
  API_KEY,
  BENCH_REFERENCE_ID,
  type BenchSdk,
  CUSTOMER_QUERIES_PATH,
  CUSTOMER_QUERY_INPUT,
  CUSTOMER_QUERY_RESPONSE,
  median,
  passFail,
  printTable,
  roundOrder,
  spawnBenchChild,
} from './harness.ts';

const REFERENCE_ID = BENCH_REFERENCE_ID;
const CHECK_PATH = `/v1/collections/check/${REFERENCE_ID}`;
const ROUNDS = 11;
const CALLS = 50;
const WARMUP = 200;

/** A 200 body valid for the SDK's status-check schema. */
const CHECK_RESPONSE = JSON.stringify({
  success: true,
  data: { referenceId: REFERENCE_ID, statusText: 'pending', transactionCode: null, reason: null },
});

function listen(): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const body =
        request.method === 'POST' && request.url === CUSTOMER_QUERIES_PATH
          ? CUSTOMER_QUERY_RESPONSE
          : request.method === 'GET' && request.url === CHECK_PATH
            ? CHECK_RESPONSE
            : undefined;
      if (body === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end('{"success":false,"message":"not found"}');
        return;
      }
      response.writeHead(request.method === 'POST' ? 201 : 200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-request-id': 'req-bench',
      });
      response.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The server in the child process: prints its port, ends with the parent. */
export async function serve(): Promise<void> {
  const server = await listen();
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
}

async function startServer(where: 'in-process' | 'child process'): Promise<{ baseUrl: string; stop: () => void }> {
  if (where === 'in-process') {
    const server = await listen();
    const { port } = server.address() as AddressInfo;
    return { baseUrl: `http://127.0.0.1:${port}`, stop: () => server.close() };
  }
  const child = spawnBenchChild(new URL(import.meta.url), 'serve', { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the bench server exited (${code})`)));
    child.stdout?.setEncoding('utf8');
    child.stdout?.once('data', (line: string) => resolve((JSON.parse(line) as { port: number }).port));
  });
  child.removeAllListeners('exit');
  return { baseUrl: `http://127.0.0.1:${port}`, stop: () => child.kill() };
}

type Variant = { readonly name: string; readonly call: () => Promise<unknown> };

/** The variants of one request; the first is the hand-written fetch, the second plain ky, the third the SDK. */
function variantsFor(sdk: BenchSdk, method: 'POST' | 'GET', baseUrl: string): Variant[] {
  const headers = { accept: 'application/json', 'user-agent': `tap-collections-sdk/${sdk.SDK_VERSION}` };
  const tap = new sdk.TapClient({ apiKey: API_KEY, baseUrl, logLevel: 'off' });
  const collections = new sdk.CollectionsClient({ apiKey: API_KEY, baseUrl, logLevel: 'off' });
  const openai = new OpenAI({ apiKey: API_KEY, baseURL: baseUrl });
  const stripe = new Stripe(API_KEY, {
    httpClient: Stripe.createFetchHttpClient(),
    host: '127.0.0.1',
    port: Number(new URL(baseUrl).port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  if (method === 'POST') {
    // Every variant sends the input and a fresh referenceId, as the API requires one per query.
    const body = () => ({ ...CUSTOMER_QUERY_INPUT, referenceId: randomUUID() });
    const postHeaders = { ...headers, 'x-api-key': API_KEY };
    const target = `${baseUrl}${CUSTOMER_QUERIES_PATH}`;
    return [
      {
        name: 'hand-written fetch',
        call: async () => {
          const response = await fetch(target, {
            method: 'POST',
            headers: { ...postHeaders, 'content-type': 'application/json' },
            body: JSON.stringify(body()),
          });
          if (response.status !== 201) throw new Error(`fetch: status ${response.status}`);
          return ((await response.json()) as { data: unknown }).data;
        },
      },
      { name: 'ky.post().json()', call: () => ky.post(target, { headers: postHeaders, json: body() }).json() },
      { name: 'SDK TapClient.submitCustomerQuery', call: () => tap.submitCustomerQuery(CUSTOMER_QUERY_INPUT) },
      { name: 'openai client.post()', call: () => openai.post(CUSTOMER_QUERIES_PATH, { body: body() }) },
      // Stripe sends form-encoded parameters: the same fields, its own encoding.
      { name: 'stripe rawRequest (fetch client)', call: () => stripe.rawRequest('POST', CUSTOMER_QUERIES_PATH, body()) },
    ];
  }
  const getHeaders = { ...headers, authorization: `Bearer ${API_KEY}` };
  const target = `${baseUrl}${CHECK_PATH}`;
  return [
    {
      name: 'hand-written fetch',
      call: async () => {
        const response = await fetch(target, { headers: getHeaders });
        if (response.status !== 200) throw new Error(`fetch: status ${response.status}`);
        return ((await response.json()) as { data: unknown }).data;
      },
    },
    { name: 'ky.get().json()', call: () => ky.get(target, { headers: getHeaders }).json() },
    { name: 'SDK CollectionsClient.checkStatus', call: () => collections.checkStatus(REFERENCE_ID) },
    { name: 'openai client.get()', call: () => openai.get(CHECK_PATH) },
    { name: 'stripe rawRequest (fetch client)', call: () => stripe.rawRequest('GET', CHECK_PATH) },
  ];
}

interface ScenarioResult {
  readonly label: string;
  readonly variants: readonly Variant[];
  /** Wall µs per call, [variant][round]. */
  readonly perCall: readonly number[][];
  /** CPU µs per call of this process (user + system), [variant][round]. */
  readonly cpuPerCall: readonly number[][];
}

async function measureScenario(sdk: BenchSdk, method: 'POST' | 'GET', where: 'in-process' | 'child process'): Promise<ScenarioResult> {
  const { baseUrl, stop } = await startServer(where);
  try {
    const variants = variantsFor(sdk, method, baseUrl);
    for (const variant of variants) for (let i = 0; i < WARMUP; i++) await variant.call();
    const perCall = variants.map(() => [] as number[]);
    const cpuPerCall = variants.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      const order = roundOrder(variants.length, round);
      for (const index of order) {
        const variant = variants[index];
        if (!variant) continue;
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        for (let i = 0; i < CALLS; i++) await variant.call();
        perCall[index]?.push(((performance.now() - started) * 1000) / CALLS);
        const cpu = process.cpuUsage(cpuBefore);
        cpuPerCall[index]?.push((cpu.user + cpu.system) / CALLS);
      }
    }
    return { label: `${method}, server ${where}`, variants, perCall, cpuPerCall };
  } finally {
    stop();
  }
}

/** Runs (e) and prints its table. */
export async function run(sdk: BenchSdk): Promise<void> {
  const results: ScenarioResult[] = [];
  for (const method of ['POST', 'GET'] as const) {
    for (const where of ['in-process', 'child process'] as const) results.push(await measureScenario(sdk, method, where));
  }
  const verdicts: string[] = [];
  const rows = results.flatMap(({ label, variants, perCall, cpuPerCall }) => {
    const ratio = (series: readonly number[][], index: number, base: number) =>
      median((series[index] ?? []).map((value, round) => value / (series[base]?.[round] ?? Number.NaN)));
    const [FETCH, KY, SDK, OPENAI] = [0, 1, 2, 3];
    const cpuVsKy = ratio(cpuPerCall, SDK, KY);
    const cpuVsOpenai = ratio(cpuPerCall, SDK, OPENAI);
    const wallVsKy = ratio(perCall, SDK, KY);
    const wallVsOpenai = ratio(perCall, SDK, OPENAI);
    verdicts.push(
      `${label}: CPU SDK/ky ${cpuVsKy.toFixed(2)}× ${passFail(cpuVsKy <= 1.1)}, SDK/openai ${cpuVsOpenai.toFixed(2)}× ${passFail(cpuVsOpenai <= 1)}; ` +
        `wall SDK/ky ${wallVsKy.toFixed(2)}× ${passFail(wallVsKy <= 1.1)}, SDK/openai ${wallVsOpenai.toFixed(2)}× ${passFail(wallVsOpenai <= 1)}`,
    );
    return variants.map((variant, index) => [
      index === 0 ? label : '',
      variant.name,
      median(cpuPerCall[index] ?? []).toFixed(0),
      `${ratio(cpuPerCall, index, FETCH).toFixed(2)}×`,
      `${ratio(cpuPerCall, index, KY).toFixed(2)}×`,
      `${ratio(cpuPerCall, index, OPENAI).toFixed(2)}×`,
      median(perCall[index] ?? []).toFixed(0),
      `${ratio(perCall, index, FETCH).toFixed(2)}×`,
      `${ratio(perCall, index, KY).toFixed(2)}×`,
      `${ratio(perCall, index, OPENAI).toFixed(2)}×`,
    ]);
  });
  printTable(
    `(e) Time per call against the peers, over loopback HTTP (keep-alive, each client's defaults). POST ${CUSTOMER_QUERIES_PATH}\n` +
      `    (201, ${CUSTOMER_QUERY_RESPONSE.length} bytes of JSON) and GET ${CHECK_PATH.replace(REFERENCE_ID, ':referenceId')} (200, ${CHECK_RESPONSE.length} bytes), the server in this\n` +
      `    process or in a child process. ${ROUNDS} rounds × ${CALLS} sequential calls per variant, order rotated each round, ${WARMUP} warm-up\n` +
      '    calls each. Per call: CPU time of this process (process.cpuUsage, user + system; with the server in-process it\n' +
      "    includes the server's share, the same for every variant) and wall time, medians over rounds; ratios: median over\n" +
      '    rounds of (variant / reference) in the same round. CPU is the steadier clock on a shared machine. The SDK\n' +
      '    validates the response with its schema; openai and stripe return the parsed JSON. Stripe form-encodes the POST body.',
    ['request', 'variant', 'CPU µs', 'vs fetch', 'vs ky', 'vs openai', 'wall µs', 'vs fetch', 'vs ky', 'vs openai'],
    rows,
  );
  console.log(`\nTime per call, targets: ${verdicts.join('; ')}`);
}
