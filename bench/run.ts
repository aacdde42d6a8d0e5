/**
 * `npm run bench`: three benchmarks of the BUILT package (`dist/index.js`, what ships).
 *
 * (a) Tap request overhead: `TapClient.submitCustomerQuery` against a hand-written `fetch` and plain ky,
 *     over loopback HTTP to a server in a child process, interleaved in rounds.
 * (b) Polling efficiency: the status-check schedules on a virtual clock (no real waiting).
 * (c) Scale: 10 000 concurrent `pollUntilSettled` calls against an in-process fake, in a child process run
 *     with `--expose-gc`: heap per poll (after a settled GC) waiting between checks and with a request in
 *     flight; then event-loop stall and CPU per check in a realistic run (a ramp, the default schedule).
 *
 * The machine is shared and noisy: every figure is reported against a baseline measured in the same run,
 * variants alternate in rounds, and medians are taken. Targets print PASS/FAIL; the exit code stays 0.
 *
 * Roles of this one file (so it needs no sibling imports): no argument runs everything; `--role=server`
 * is the HTTP server of (a); `--role=scale` is section (c).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import ky from 'ky';
// Types come from the sources (so this file typechecks before a build); the code run is the build.
import type * as Sdk from '../src/index.js';

const SELF = fileURLToPath(import.meta.url);
const CUSTOMER_QUERIES_PATH = '/v1/tap/partners/customer-queries';
const API_KEY = 'bench-key-0123456789';

async function loadSdk(): Promise<typeof Sdk> {
  return (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof Sdk;
}

// ─── helpers ──────────────────────────────────────────────────────────────────────────────────────────

/** A small seeded PRNG (mulberry32), so every run simulates the same collections. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Nearest-rank percentile (`p` in 0..1) of unsorted values. */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

function printTable(title: string, headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  // The first column is text (left-aligned); the others are figures (right-aligned).
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  console.log(`\n${title}\n`);
  console.log(line(headers));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

const passFail = (pass: boolean) => (pass ? 'PASS' : 'FAIL');

// ─── (a) Tap request overhead ─────────────────────────────────────────────────────────────────────────

const CUSTOMER_QUERY_INPUT = {
  merchantId: 'MERCHANT-0001',
  merchantName: 'Bench Store',
  terminalId: 'TERMINAL-0001',
  amount: 25,
  tagId: 'TAG-0001',
} as const;

/** A 201 body valid for `SubmitCustomerQueryResponseSchema` (src/tap/schemas.ts). */
const CUSTOMER_QUERY_RESPONSE = JSON.stringify({
  success: true,
  data: {
    id: 'cq_0001',
    partner: { partnerId: 'partner-0001', partnerName: 'Bench Partner' },
    customer: { firstName: 'Chanda', lastName: 'Mwale' },
    tag: {
      tagId: 'TAG-0001',
      tagNumber: '0001-0001',
      mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260977123456', status: 'active' }],
      status: 'active',
    },
    transaction: {
      merchantId: 'MERCHANT-0001',
      merchantName: 'Bench Store',
      terminalId: 'TERMINAL-0001',
      referenceId: '7d3f2c1e-4b5a-4c6d-8e7f-901234567890',
      currency: 'ZMW',
      amount: 25,
      serviceCharge: 0.5,
      status: 'pending',
    },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  },
});

/** The HTTP server of (a): a fixed 201 for the customer-query endpoint, 404 otherwise. Prints its port. */
function runServer(): void {
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
  const child = spawn(process.execPath, [SELF, '--role=server'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
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

async function tapOverhead(sdk: typeof Sdk): Promise<void> {
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
      // Rotate the order each round so no variant always runs first (or right after a GC-heavy one).
      const order = variants.map((_, index) => (index + round) % variants.length);
      if (round % 2 === 1) order.reverse();
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
    printTable(
      `(a) Tap request overhead: POST ${CUSTOMER_QUERIES_PATH}, 201 JSON (${CUSTOMER_QUERY_RESPONSE.length} bytes) from a loopback node:http server in a child process.\n` +
        `    Baseline: the hand-written fetch. ${ROUNDS} rounds × ${CALLS} sequential calls per variant, order rotated each round, ` +
        `${WARMUP} warm-up calls each; keep-alive (fetch defaults) for all.\n` +
        '    µs/call: median over rounds, with the p25–p75 spread across rounds; ratio: median over rounds of (variant / fetch) in the same round.',
      ['variant', 'µs/call', 'p25–p75', 'ratio vs fetch', 'target'],
      variants.map((variant, index) => {
        const values = perCall[index] ?? [];
        const target = index === 2 ? `≤ 1.10× ${passFail(sdkRatio <= 1.1)}` : '-';
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
      `\nSDK/fetch = ${sdkRatio.toFixed(3)}× (target ≤ 1.10×: ${passFail(sdkRatio <= 1.1)}); ky/fetch = ${ratioTo(1).toFixed(3)}×`,
    );
  } finally {
    stop();
  }
}

// ─── (b) Polling efficiency ───────────────────────────────────────────────────────────────────────────

interface Schedule {
  readonly name: string;
  /** The pause after status check number `pauseNumber + 1`, in ms. */
  readonly pauseMs: (pauseNumber: number, random: () => number) => number;
}

interface PollingResult {
  readonly meanRequests: number;
  readonly p50DelayMs: number;
  readonly p95DelayMs: number;
}

/** Checks at t = 0 and after each pause, until the first check at or after settlement. Network time is left out. */
function simulate(schedule: Schedule, settlementsMs: readonly number[], seed: number): PollingResult {
  const random = seededRandom(seed);
  let requests = 0;
  const delays: number[] = [];
  for (const settlesAt of settlementsMs) {
    let t = 0;
    requests++;
    for (let pauseNumber = 0; t < settlesAt; pauseNumber++) {
      t += schedule.pauseMs(pauseNumber, random);
      requests++;
    }
    delays.push(t - settlesAt);
  }
  return { meanRequests: requests / settlementsMs.length, p50DelayMs: percentile(delays, 0.5), p95DelayMs: percentile(delays, 0.95) };
}

function pollingEfficiency(sdk: typeof Sdk): void {
  const COLLECTIONS = 20_000;
  const settlementRandom = seededRandom(20_260_101);
  const settlementsMs = Array.from({ length: COLLECTIONS }, () => 5_000 + settlementRandom() * 85_000);
  const fixed = (ms: number): Schedule => ({ name: `fixed ${ms / 1000} s`, pauseMs: () => ms });
  const shaped = (name: string, initialDelayMs: number, intervalMs: number, maxIntervalMs: number): Schedule => ({
    name: `${name} ${initialDelayMs / 1000} s, ${intervalMs / 1000} s → ${maxIntervalMs / 1000} s`,
    pauseMs: (pauseNumber, random) => sdk.pollPauseMs(pauseNumber, { initialDelayMs, intervalMs, maxIntervalMs }, random),
  });
  const defaults = sdk.POLL_DEFAULTS;
  const defaultSchedule = shaped('SDK default:', defaults.initialDelayMs, defaults.intervalMs, defaults.maxIntervalMs);
  const schedules: Schedule[] = [
    fixed(1_000),
    fixed(2_000),
    fixed(5_000),
    defaultSchedule,
    shaped('alt:', 0, 1_000, 2_000),
    shaped('alt:', 3_000, 1_000, 2_000),
    shaped('alt:', 3_000, 1_500, 2_500),
    shaped('alt:', 5_000, 1_000, 2_500),
  ];
  const results = schedules.map((schedule) => simulate(schedule, settlementsMs, 42));
  const baseline = results[0];
  if (!baseline) return;
  const defaultResult = results[3];
  const defaultPass =
    defaultResult !== undefined && defaultResult.p95DelayMs <= 2_000 && defaultResult.meanRequests / baseline.meanRequests <= 0.5;
  printTable(
    `(b) Polling efficiency: ${COLLECTIONS} simulated collections settling uniformly over 5–90 s (seeded), virtual clock, no waiting.\n` +
      '    Baseline: fixed 1 s polling. Requests per collection count the check at t = 0; detection delay = first check at or after\n' +
      '    settlement − settlement (network time left out). Shaped schedules: initial pause, first interval → largest interval, ×1.5\n' +
      '    growth and ±10 % jitter, computed by the exported pollPauseMs. Targets for the default: p95 ≤ 2 s and requests ≤ 0.5× fixed 1 s.',
    ['schedule', 'mean requests', 'requests vs fixed 1 s', 'p50 delay s', 'p95 delay s', 'target'],
    schedules.map((schedule, index) => {
      const result = results[index];
      if (!result) return [schedule.name];
      return [
        schedule.name,
        result.meanRequests.toFixed(1),
        `${(result.meanRequests / baseline.meanRequests).toFixed(3)}×`,
        (result.p50DelayMs / 1000).toFixed(2),
        (result.p95DelayMs / 1000).toFixed(2),
        schedule === defaultSchedule ? `${passFail(defaultPass)} (p95 ≤ 2 s, ≤ 0.5×)` : '-',
      ];
    }),
  );
}

// ─── (c) Scale ────────────────────────────────────────────────────────────────────────────────────────

const SCALE_COUNT = 10_000;
/** Polls started, and held responses released, per event-loop turn (heap runs). */
const BATCH = 200;
/** Polls started per millisecond in the ramp of the stall run (10 000 over 1 s). */
const RAMP_PER_MS = 10;
/** Heap runs per state and variant (alternating). */
const HEAP_ROUNDS = 3;
/** Waiting between checks: a long first pause, so that once every first check is answered every poll is asleep. */
const WAITING_SCHEDULE = { initialDelayMs: 3_000, intervalMs: 5, maxIntervalMs: 20 } as const;
/** Request in flight: the schedule is irrelevant to the reading; short, so the run ends quickly. */
const IN_FLIGHT_SCHEDULE = { initialDelayMs: 1, intervalMs: 1, maxIntervalMs: 5 } as const;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const activeTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

/**
 * heapUsed after a settled GC. undici's fetch/Request registers request signals in a FinalizationRegistry;
 * what it holds is freed only after its finalizer has run, which takes an event-loop turn after a GC:
 * back-to-back GCs would count that garbage.
 */
async function settledHeapUsed(gc: () => void): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await delay(20);
  }
  gc();
  return process.memoryUsage().heapUsed;
}

interface FakeCollection {
  readonly settlesAfter: number;
  checks: number;
}

/** How the fake answers: at once, in a setImmediate (like a network), or holding every first check until released. */
type Answering = 'at once' | 'next turn' | 'hold first';

/** An in-process fake of `GET /v1/collections/check/:referenceId`: `pending` until check number `settlesAfter`. */
class FakeGateway {
  readonly collections: Map<string, FakeCollection>;
  readonly held: Array<() => void> = [];
  checks = 0;
  unknownChecks = 0;
  #allHeld: () => void = () => undefined;
  /** Resolves when every first check is held (`hold first` only). */
  readonly allHeld = new Promise<void>((resolve) => {
    this.#allHeld = resolve;
  });

  readonly answering: Answering;

  constructor(ids: readonly string[], settlesAfter: () => number, answering: Answering) {
    this.collections = new Map(ids.map((id) => [id, { settlesAfter: settlesAfter(), checks: 0 }]));
    this.answering = answering;
  }

  readonly fetch: Sdk.FetchFunction = (input) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const id = url.slice(url.lastIndexOf('/') + 1);
    const collection = this.collections.get(id);
    if (!collection) {
      this.unknownChecks++;
      return Promise.resolve(new Response('{"success":false}', { status: 404, headers: { 'content-type': 'application/json' } }));
    }
    this.checks++;
    collection.checks++;
    const settled = collection.checks >= collection.settlesAfter;
    const body = `{"success":true,"data":{"referenceId":"${id}","statusText":"${settled ? 'successful' : 'pending'}","transactionCode":${settled ? '"SUCCESS"' : 'null'},"reason":null}}`;
    const answer = () => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    if (this.answering === 'at once' || (this.answering === 'hold first' && collection.checks > 1)) return Promise.resolve(answer());
    return new Promise((resolve) => {
      if (this.answering === 'next turn') {
        setImmediate(() => resolve(answer()));
        return;
      }
      this.held.push(() => resolve(answer()));
      if (this.held.length === this.collections.size) this.#allHeld();
    });
  };

  /** Collections checked more or fewer times than needed to see them settle. */
  miscounted(): number {
    let count = 0;
    for (const collection of this.collections.values()) if (collection.checks !== collection.settlesAfter) count++;
    return count;
  }
}

/** The timings of a poll schedule (what pollPauseMs takes). */
type PollTimings = { readonly initialDelayMs: number; readonly intervalMs: number; readonly maxIntervalMs: number };

type Poll = (referenceId: string) => Promise<{ referenceId: string; statusText: string }>;
/** Makes the poll function of one run over the run's fake `fetch` (an SDK variant creates its one client here). */
type PollFactory = (fetchFunction: Sdk.FetchFunction) => Poll;

/** The polls of one run and what they resolved with. */
class PollTracker {
  readonly #resolutions: Uint8Array;
  readonly #promises: Promise<void>[] = [];
  #wrong = 0;
  #rejected = 0;

  readonly ids: readonly string[];
  readonly poll: Poll;

  constructor(ids: readonly string[], poll: Poll) {
    this.ids = ids;
    this.poll = poll;
    this.#resolutions = new Uint8Array(ids.length);
  }

  start(index: number): void {
    const id = this.ids[index] ?? '';
    this.#promises.push(
      this.poll(id).then(
        (status) => {
          this.#resolutions[index] = (this.#resolutions[index] ?? 0) + 1;
          if (status.referenceId !== id || status.statusText !== 'successful') this.#wrong++;
        },
        () => {
          this.#rejected++;
        },
      ),
    );
  }

  /** Resolves when every poll started has ended. */
  async allEnded(): Promise<void> {
    await Promise.all(this.#promises);
  }

  /** After `allEnded`: nothing may go on after the last result (no further checks, no timer left behind). */
  async problems(fake: FakeGateway): Promise<{ settled: number; problems: string[] }> {
    await delay(50);
    const count = this.ids.length;
    const problems: string[] = [];
    let settled = 0;
    for (let index = 0; index < count; index++) if (this.#resolutions[index] === 1) settled++;
    if (settled !== count) problems.push(`${count - settled} not resolved exactly once`);
    if (this.#wrong > 0) problems.push(`${this.#wrong} resolved with the wrong referenceId or status`);
    if (this.#rejected > 0) problems.push(`${this.#rejected} rejected`);
    if (fake.unknownChecks > 0) problems.push(`${fake.unknownChecks} checks of unknown references`);
    const miscounted = fake.miscounted();
    if (miscounted > 0) problems.push(`${miscounted} collections checked more or fewer times than needed`);
    const timers = activeTimers();
    if (timers > 0) problems.push(`${timers} timers left behind`);
    return { settled, problems };
  }
}

/** `count` work items, `batch` per event-loop turn (as requests and responses arrive over time, not all in one tick). */
async function inBatches(count: number, batch: number, work: (index: number) => void): Promise<void> {
  for (let start = 0; start < count; start += batch) {
    for (let index = start; index < Math.min(count, start + batch); index++) work(index);
    await nextTurn();
  }
}

interface HeapResult {
  readonly settled: number;
  readonly problems: readonly string[];
  readonly heapPerPollBytes: number;
  /** When the heap was read, in ms after the first poll started. */
  readonly readAfterMs: number;
}

/**
 * Waiting between checks: the fake answers every check at once, `pending` until check 2–5 (seeded). Once every
 * first check is answered, every poll sleeps out its long first pause: the heap is read then (it must find
 * exactly one timer per poll and no second check yet), and the polls run on to the end.
 */
async function waitingRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<HeapResult> {
  const random = seededRandom(seed);
  const ids = Array.from({ length: count }, () => randomUUID());
  const fake = new FakeGateway(ids, () => 2 + Math.floor(random() * 4), 'at once');
  const tracker = new PollTracker(ids, makePoll(fake.fetch));
  const heapBefore = await settledHeapUsed(gc);
  const started = performance.now();
  await inBatches(count, BATCH, (index) => tracker.start(index));
  while (fake.checks < count && performance.now() - started < WAITING_SCHEDULE.initialDelayMs) await nextTurn();
  const heapWaiting = await settledHeapUsed(gc);
  const readAfterMs = performance.now() - started;
  const checksAtReading = fake.checks;
  const timersAtReading = activeTimers();
  await tracker.allEnded();
  const { settled, problems } = await tracker.problems(fake);
  if (checksAtReading !== count || timersAtReading !== count) {
    problems.push(
      `not every poll asleep at the heap reading (${checksAtReading} checks, ${timersAtReading} timers, ${readAfterMs.toFixed(0)} ms in)`,
    );
  }
  return { settled, problems, heapPerPollBytes: (heapWaiting - heapBefore) / count, readAfterMs };
}

/**
 * Request in flight: every first check is held until all polls have started (each collection settles at
 * check 1–5, seeded); the heap is read then, and the held checks are released.
 */
async function inFlightRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<HeapResult> {
  const random = seededRandom(seed);
  const ids = Array.from({ length: count }, () => randomUUID());
  const fake = new FakeGateway(ids, () => 1 + Math.floor(random() * 5), 'hold first');
  const tracker = new PollTracker(ids, makePoll(fake.fetch));
  const heapBefore = await settledHeapUsed(gc);
  const started = performance.now();
  await inBatches(count, BATCH, (index) => tracker.start(index));
  await fake.allHeld;
  const heapInFlight = await settledHeapUsed(gc);
  const readAfterMs = performance.now() - started;
  const release = fake.held.splice(0);
  await inBatches(release.length, BATCH, (index) => release[index]?.());
  await tracker.allEnded();
  const { settled, problems } = await tracker.problems(fake);
  return { settled, problems, heapPerPollBytes: (heapInFlight - heapBefore) / count, readAfterMs };
}

interface StallResult {
  readonly settled: number;
  readonly problems: readonly string[];
  readonly checks: number;
  readonly wallMs: number;
  readonly cpuPerCheckUs: number;
  readonly maxStallMs: number;
  readonly p99StallMs: number;
}

/**
 * A realistic run: polls started in a ramp (`RAMP_PER_MS` per ms, like tills starting independently), the
 * poll's default schedule, collections settling at check 1–3 (seeded), the fake answering in a setImmediate.
 */
async function stallRun(makePoll: PollFactory, count: number, seed: number, gc: () => void): Promise<StallResult> {
  const random = seededRandom(seed);
  const ids = Array.from({ length: count }, () => randomUUID());
  const fake = new FakeGateway(ids, () => 1 + Math.floor(random() * 3), 'next turn');
  const tracker = new PollTracker(ids, makePoll(fake.fetch));
  await settledHeapUsed(gc); // Start clean: no garbage of earlier runs collected during this one.
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  const cpuBefore = process.cpuUsage();
  stalls.enable();
  const started = performance.now();
  await new Promise<void>((resolve) => {
    let next = 0;
    const tick = () => {
      const due = Math.min(count, Math.floor((performance.now() - started) * RAMP_PER_MS));
      while (next < due) tracker.start(next++);
      if (next < count) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  await tracker.allEnded();
  const wallMs = performance.now() - started;
  stalls.disable();
  const cpu = process.cpuUsage(cpuBefore);
  const { settled, problems } = await tracker.problems(fake);
  return {
    settled,
    problems,
    checks: fake.checks,
    wallMs,
    cpuPerCheckUs: (cpu.user + cpu.system) / fake.checks,
    // As recorded: the histogram holds the intervals between its 10 ms ticks, so a stall of S ms reads as S to S + 10 ms.
    maxStallMs: stalls.max / 1e6,
    p99StallMs: stalls.percentile(99) / 1e6,
  };
}

async function scale(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('section (c) needs node --expose-gc');
  const sdk = await loadSdk();
  const COUNT = SCALE_COUNT;
  const baseUrl = 'http://127.0.0.1:9';
  const defaults = sdk.POLL_DEFAULTS;
  const defaultSchedule = {
    initialDelayMs: defaults.initialDelayMs,
    intervalMs: defaults.intervalMs,
    maxIntervalMs: defaults.maxIntervalMs,
  };

  // The baseline: a minimal hand-written poll loop over the same fake and the same schedule. The check is its own
  // function, so the loop's frame keeps only the status (not the Response) while it sleeps.
  const checkOnce = async (fetchFunction: Sdk.FetchFunction, referenceId: string) => {
    const response = await fetchFunction(`${baseUrl}/v1/collections/check/${referenceId}`, {
      headers: { accept: 'application/json', authorization: `Bearer ${API_KEY}` },
    });
    return ((await response.json()) as { data: { referenceId: string; statusText: string } }).data;
  };
  const handWritten =
    (schedule: PollTimings | undefined): PollFactory =>
    (fetchFunction) =>
    async (referenceId) => {
      for (let pauseNumber = 0; ; pauseNumber++) {
        const data = await checkOnce(fetchFunction, referenceId);
        if (data.statusText === 'successful' || data.statusText === 'failed') return data;
        await delay(sdk.pollPauseMs(pauseNumber, schedule ?? defaultSchedule));
      }
    };
  // One client per run, as an application would have: created once, every poll goes through it.
  // `undefined`: no schedule passed, the SDK's defaults.
  const viaSdk =
    (schedule: PollTimings | undefined): PollFactory =>
    (fetchFunction) => {
      const client = new sdk.CollectionsClient({ apiKey: API_KEY, baseUrl, logLevel: 'off', fetch: fetchFunction });
      return schedule
        ? (referenceId) => client.pollUntilSettled(referenceId, { ...schedule, maxWaitMs: 600_000 })
        : (referenceId) => client.pollUntilSettled(referenceId);
    };

  // Warm up both paths (JIT), then alternate the variants.
  await inFlightRun(handWritten(IN_FLIGHT_SCHEDULE), 1_000, 1, gc);
  await inFlightRun(viaSdk(IN_FLIGHT_SCHEDULE), 1_000, 1, gc);

  type Pair<T> = { hand: T[]; sdk: T[] };
  const waiting: Pair<HeapResult> = { hand: [], sdk: [] };
  const inFlight: Pair<HeapResult> = { hand: [], sdk: [] };
  for (let round = 0; round < HEAP_ROUNDS; round++) {
    const seed = 100 + round;
    const runs: Array<() => Promise<void>> = [
      async () => void waiting.hand.push(await waitingRun(handWritten(WAITING_SCHEDULE), COUNT, seed, gc)),
      async () => void waiting.sdk.push(await waitingRun(viaSdk(WAITING_SCHEDULE), COUNT, seed, gc)),
      async () => void inFlight.hand.push(await inFlightRun(handWritten(IN_FLIGHT_SCHEDULE), COUNT, seed, gc)),
      async () => void inFlight.sdk.push(await inFlightRun(viaSdk(IN_FLIGHT_SCHEDULE), COUNT, seed, gc)),
    ];
    if (round % 2 === 1) runs.reverse();
    for (const run of runs) await run();
  }
  // One realistic run per variant (each takes ~8 s): the SDK defaults.
  const stallHand = await stallRun(handWritten(undefined), COUNT, 200, gc);
  const stallSdk = await stallRun(viaSdk(undefined), COUNT, 200, gc);

  const heapSummary = (runs: Pair<HeapResult>, pick: 'hand' | 'sdk') => {
    const mine = runs[pick];
    return {
      settled: Math.min(...mine.map((run) => run.settled)),
      problems: [...new Set(mine.flatMap((run) => run.problems))],
      heapPerPollBytes: median(mine.map((run) => run.heapPerPollBytes)),
      ratio: median(runs.sdk.map((run, round) => run.heapPerPollBytes / (runs.hand[round]?.heapPerPollBytes ?? Number.NaN))),
    };
  };
  const rows = [
    { variant: 'hand-written loop (baseline)', sdk: false, state: 'waiting between checks', ...heapSummary(waiting, 'hand') },
    { variant: 'CollectionsClient.pollUntilSettled', sdk: true, state: 'waiting between checks', ...heapSummary(waiting, 'sdk') },
    { variant: 'hand-written loop (baseline)', sdk: false, state: 'request in flight', ...heapSummary(inFlight, 'hand') },
    { variant: 'CollectionsClient.pollUntilSettled', sdk: true, state: 'request in flight', ...heapSummary(inFlight, 'sdk') },
  ];
  const sdkWaitingBytes = heapSummary(waiting, 'sdk').heapPerPollBytes;
  const heapPass = sdkWaitingBytes <= 2_048;
  const latestReadingMs = Math.max(...waiting.hand.map((run) => run.readAfterMs), ...waiting.sdk.map((run) => run.readAfterMs));
  const earliestWakeMs = WAITING_SCHEDULE.initialDelayMs * (1 - sdk.POLL_JITTER);
  printTable(
    `(c) Scale: ${COUNT} concurrent polls against an in-process fake fetch (a Map), in a child process run with --expose-gc.\n` +
      '    SDK: CollectionsClient.pollUntilSettled, one client per run. Baseline: a minimal hand-written loop (fetch → json → pause by\n' +
      '    pollPauseMs) over the same fake and the same schedule. Correct = every promise resolved exactly once with its own\n' +
      '    referenceId and `successful`, none rejected, each collection checked exactly as often as needed, no timer left behind.\n' +
      `\n(c1) Heap per pending poll: heapUsed with all ${COUNT} polls pending − heapUsed before starting, per poll, each read after a\n` +
      '    settled GC (3 × (gc + a 20 ms turn) + gc: undici’s FinalizationRegistry holds request signals until its finalizer runs).\n' +
      `    ${HEAP_ROUNDS} rounds, the runs alternating; medians over rounds; ratio = median of (SDK / baseline) per round.\n` +
      `    waiting between checks: schedule ${JSON.stringify(WAITING_SCHEDULE)}; the fake answers each\n` +
      `      check at once, \`pending\` until check 2–5 (seeded); read once all ${COUNT} first checks are answered and every poll is\n` +
      `      asleep (checked: one timer each, no second check yet; read ≤ ${latestReadingMs.toFixed(0)} ms after the first poll started, the first pause\n` +
      `      ends ≥ ${earliestWakeMs} ms after it), then the polls run to the end. The target (≤ 2048 B) applies to this row: a fleet poller\n` +
      '      spends almost all its life here.\n' +
      `    request in flight: schedule ${JSON.stringify(IN_FLIGHT_SCHEDULE)}; every first check held until all polls\n` +
      `      started (settle at check 1–5, seeded; released ${BATCH} per turn). Target not applied: the figure includes undici’s\n` +
      '      Request/Response objects of the request in flight, and the fake’s held answers (those in both variants).',
    ['variant', 'pending state', 'settled', 'all correct', 'heap B/poll', 'vs baseline', 'target'],
    rows.map((row) => [
      row.variant,
      row.state,
      `${row.settled}/${COUNT}`,
      row.problems.length === 0 ? 'yes' : 'NO',
      row.heapPerPollBytes.toFixed(0),
      row.sdk ? `${row.ratio.toFixed(2)}×` : '1.00×',
      !row.sdk ? '-' : row.state === 'request in flight' ? 'not applied' : `≤ 2048 ${passFail(heapPass)}`,
    ]),
  );

  const stallRows = [
    { variant: 'hand-written loop (baseline)', run: stallHand },
    { variant: 'CollectionsClient.pollUntilSettled', run: stallSdk },
  ];
  const stallPass = stallSdk.maxStallMs <= 50;
  printTable(
    `(c2) Stall and CPU, a realistic run: ${COUNT} polls started in a ramp (${RAMP_PER_MS} per ms over ${COUNT / RAMP_PER_MS / 1000} s, like tills starting independently),\n` +
      `    the default schedule (SDK: no options passed; baseline: POLL_DEFAULTS ${defaults.initialDelayMs / 1000} s, ${defaults.intervalMs / 1000} s → ${defaults.maxIntervalMs / 1000} s by pollPauseMs), each collection\n` +
      '    settling at check 1–3 (seeded), the fake answering in a setImmediate like a network. One run per variant. Max stall:\n' +
      '    monitorEventLoopDelay (resolution 10 ms) over the whole run, as recorded (it reads up to +10 ms over the true stall; GC\n' +
      '    pauses included); p99 delay from the same histogram. CPU/check: process.cpuUsage (user + system) over the run / status\n' +
      '    checks; it includes the fake’s and the harness’s share (the same in both) and is what limits a fleet.',
    ['variant', 'settled', 'all correct', 'checks', 'wall s', 'CPU µs/check', 'p99 delay ms', 'max stall ms'],
    stallRows.map(({ variant, run }, index) => [
      variant,
      `${run.settled}/${COUNT}`,
      run.problems.length === 0 ? 'yes' : 'NO',
      String(run.checks),
      (run.wallMs / 1000).toFixed(1),
      index === 0
        ? run.cpuPerCheckUs.toFixed(1)
        : `${run.cpuPerCheckUs.toFixed(1)} (${(run.cpuPerCheckUs / stallHand.cpuPerCheckUs).toFixed(2)}×)`,
      run.p99StallMs.toFixed(1),
      index === 0 ? run.maxStallMs.toFixed(1) : `${run.maxStallMs.toFixed(1)} ≤ 50 ${passFail(stallPass)}`,
    ]),
  );

  const sdkProblems = [
    ...new Set([...heapSummary(waiting, 'sdk').problems, ...heapSummary(inFlight, 'sdk').problems, ...stallSdk.problems]),
  ];
  const handProblems = [
    ...new Set([...heapSummary(waiting, 'hand').problems, ...heapSummary(inFlight, 'hand').problems, ...stallHand.problems]),
  ];
  const sdkCorrect = sdkProblems.length === 0;
  const lost = COUNT - Math.min(...rows.filter((row) => row.sdk).map((row) => row.settled), stallSdk.settled);
  console.log(
    `\nSDK, all ${HEAP_ROUNDS * 2 + 1} runs: ${lost} of ${COUNT} lost in the worst run; every promise resolved exactly once with its own referenceId, ` +
      `each collection checked exactly as often as needed, no timer left behind: ${sdkCorrect ? 'yes' : `NO (${sdkProblems.join('; ')})`}.`,
  );
  console.log(
    `Targets: correctness ${passFail(sdkCorrect)}, heap ≤ 2048 B/poll waiting between checks ${passFail(heapPass)} ` +
      `(${sdkWaitingBytes.toFixed(0)} B), max stall ≤ 50 ms ${passFail(stallPass)} (${stallSdk.maxStallMs.toFixed(1)} ms; ` +
      `baseline ${stallHand.maxStallMs.toFixed(1)} ms). CPU/check: SDK ${stallSdk.cpuPerCheckUs.toFixed(1)} µs vs baseline ${stallHand.cpuPerCheckUs.toFixed(1)} µs.`,
  );
  if (handProblems.length > 0) console.log(`(baseline problems: ${handProblems.join('; ')})`);
}

// ─── main ─────────────────────────────────────────────────────────────────────────────────────────────

async function runScaleInChild(): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', SELF, '--role=scale'], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(c) failed: the child process exited with ${code}`);
}

async function main(): Promise<void> {
  const role = process.argv.find((argument) => argument.startsWith('--role='))?.slice('--role='.length);
  if (role === 'server') return runServer();
  if (role === 'scale') return scale();

  const started = performance.now();
  const sdk = await loadSdk();
  console.log(`tap-collections-sdk ${sdk.SDK_VERSION} benchmarks (dist/index.js), ${new Date().toISOString()}, Node ${process.version}`);
  console.log('Shared, noisy machine: compare the ratios, not the absolute figures. Targets print PASS/FAIL; the exit code stays 0.');
  await tapOverhead(sdk);
  pollingEfficiency(sdk);
  await runScaleInChild();
  console.log(`\nTotal ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

await main();
