/**
 * (d) The settlement worker at scale, against the simulator in another process (loopback HTTP), on the BUILT package.
 *
 * - d1: 100 000 open payments in one worker (MemoryJournal): heap per open payment, CPU per status check as a ratio of
 *   one `checkStatus` call measured in the same run, and the event-loop stall while checking at its budget.
 * - d2: time from settlement to `onSettled` (p50/p95) for a given budget, side by side with N independent
 *   `pollUntilSettled` calls limited by `maxConcurrentRequests` (the only limit there was before the worker).
 *
 * `npm run bench -- worker`, or on its own: `npx node bench/worker.ts`. Runs in a child process with `--expose-gc`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { CollectionsClient, NewPaymentRecord } from '../src/index.js';
import { loadSdk, median, passFail, percentile, printTable, seededRandom, spawnBenchChild } from './harness.ts';

const OPEN_PAYMENTS = Number(process.env.BENCH_WORKER_PAYMENTS ?? 100_000);
const SCALE_BUDGET = 2_000;
const LATENCY_PAYMENTS = 2_000;
const SETTLE_FROM_MS = 6_000;
const SETTLE_SPREAD_MS = 10_000;

type Testing = typeof import('../src/testing/index.js');
const loadTesting = async () => (await import(new URL('../dist/testing/index.js', import.meta.url).href)) as Testing;

/** Runs (d) in a child process with `--expose-gc` and waits for it. */
export async function run(): Promise<void> {
  const child = spawnBenchChild(new URL(import.meta.url), 'measure', { nodeArgs: ['--expose-gc'], stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(d) failed: the child process exited with ${code}`);
}

// ─── The simulator's process ───────────────────────────────────────────────────────────────────────

interface SimulatorMessage {
  type: 'create' | 'settle' | 'report';
  ids?: string[];
  delays?: number[];
}

/** The simulator's process: serves on loopback; creates collections and settles them on its parent's request. */
export async function serveSimulator(): Promise<void> {
  const { createSimulator, startSimulator, COLLECTIONS_API_KEYS, PRODUCTS, PHONES } = await loadTesting();
  const simulator = createSimulator({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY } });
  const running = await startSimulator({ simulator });
  const settledAt = new Map<string, number>();
  const timers: ReturnType<typeof setTimeout>[] = [];
  process.on('message', async (message: SimulatorMessage) => {
    if (message.type === 'create') {
      const headers = { authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}`, 'content-type': 'application/json' };
      for (const referenceId of message.ids ?? []) {
        const body = JSON.stringify({
          referenceId,
          productId: PRODUCTS.primary,
          amount: 10,
          currency: 'ZMW',
          phoneNumber: PHONES.neverSettles,
        });
        await simulator.handle({ service: 'collections', method: 'POST', path: '/v1/collections/mobile-money', headers, body });
      }
      process.send?.({ type: 'created' });
    } else if (message.type === 'settle') {
      const ids = message.ids ?? [];
      ids.forEach((referenceId, index) => {
        timers.push(
          setTimeout(() => {
            simulator.settle(referenceId, 'successful');
            settledAt.set(referenceId, Date.now());
          }, message.delays?.[index] ?? 0),
        );
      });
      process.send?.({ type: 'settling' });
    } else if (message.type === 'report') {
      process.send?.({ type: 'settledAt', entries: [...settledAt] });
      settledAt.clear();
    }
  });
  process.once('disconnect', () => {
    for (const timer of timers) clearTimeout(timer);
    void running.close();
  });
  process.send?.({ type: 'ready', baseUrl: running.collectionsBaseUrl, apiKey: COLLECTIONS_API_KEYS.primary });
}

class SimulatorProcess {
  readonly #child: ChildProcess;
  constructor(child: ChildProcess) {
    this.#child = child;
  }

  static async start(): Promise<{ simulator: SimulatorProcess; baseUrl: string; apiKey: string }> {
    const child = fork(fileURLToPath(new URL('./child.ts', import.meta.url)), [import.meta.url, 'serveSimulator'], { stdio: 'inherit' });
    const simulator = new SimulatorProcess(child);
    const ready = (await simulator.#next('ready')) as { baseUrl: string; apiKey: string };
    return { simulator, ...ready };
  }

  #next(type: string): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type) return;
        this.#child.off('message', onMessage);
        resolve(message as Record<string, unknown>);
      };
      this.#child.on('message', onMessage);
    });
  }

  async create(ids: string[]): Promise<void> {
    this.#child.send({ type: 'create', ids });
    await this.#next('created');
  }

  async settle(ids: string[], delays: number[]): Promise<void> {
    this.#child.send({ type: 'settle', ids, delays });
    await this.#next('settling');
  }

  async settledAt(): Promise<Map<string, number>> {
    this.#child.send({ type: 'report' });
    return new Map((await this.#next('settledAt')).entries as [string, number][]);
  }

  stop(): void {
    this.#child.disconnect();
  }
}

// ─── The measurements (child process) ──────────────────────────────────────────────────────────────

function openRecords(ids: readonly string[]): NewPaymentRecord[] {
  return ids.map((referenceId) => ({
    referenceId,
    state: 'pending',
    productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b',
    amount: 10,
    currency: 'ZMW',
    phoneNumber: '260*******09',
    fingerprint: 'bench',
  }));
}

const gcNow = () => {
  for (let round = 0; round < 3; round++) (globalThis as { gc?: () => void }).gc?.();
};
const heapUsed = () => {
  gcNow();
  return process.memoryUsage().heapUsed;
};
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const maxInAnySecond = (times: number[]) => {
  times.sort((a, b) => a - b);
  let most = 0;
  for (let end = 0, start = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= 1_000) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
};

const benchStarted = performance.now();
const progress = (step: string) => console.error(`  (d) ${((performance.now() - benchStarted) / 1000).toFixed(1)} s: ${step}`);

/** The body of (d), in the child process. */
export async function measure(): Promise<void> {
  if (!(globalThis as { gc?: () => void }).gc) throw new Error('(d) needs node --expose-gc');
  const sdk = await loadSdk();
  const { simulator, baseUrl, apiKey } = await SimulatorProcess.start();
  const sent: number[] = [];
  const client = (options: { maxConcurrentRequests?: number } = {}): CollectionsClient =>
    new sdk.CollectionsClient({
      apiKey,
      baseUrl,
      logLevel: 'off',
      ...options,
      fetch: (input, init) => {
        sent.push(Date.now());
        return fetch(input, init);
      },
    });

  // ── d1: 100 000 open payments ──
  const ids = Array.from({ length: OPEN_PAYMENTS }, () => crypto.randomUUID());
  progress('creating the collections');
  await simulator.create(ids);
  progress('created');
  const heapEmpty = heapUsed();
  const journal = new sdk.MemoryJournal();
  for (const record of openRecords(ids)) await journal.insert(record);
  const heapJournal = heapUsed();

  // Baseline: one checkStatus call, 16 at a time, same simulator, same client settings.
  const baselineClient = client();
  const baseline = async (count: number) => {
    const before = cpuMs();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) await baselineClient.checkStatus(ids[next++ % ids.length] as string);
      }),
    );
    return (cpuMs() - before) / count;
  };
  await baseline(2_000); // warm-up
  const baselineBefore = await baseline(10_000);
  progress('baseline measured; leasing');

  // Lease every payment, first checks far away: the heap of a worker with 100 000 payments waiting.
  const leaseStarted = performance.now();
  const waiting = client().startSettlementWorker({
    journal,
    maxLeasedPayments: OPEN_PAYMENTS,
    // A worker leases only what its budget checks (issue 20): this budget and schedule cover all of them.
    requestsPerSecond: SCALE_BUDGET,
    maxIntervalMs: 60_000,
    intervalMs: 60_000,
    initialDelayMs: 3_600_000,
    leaseMs: 600_000,
  });
  while ((await journal.lease({ owner: 'probe', leaseMs: 1, limit: 1 })).length > 0) await wait(500);
  progress('leased');
  const leaseSeconds = (performance.now() - leaseStarted) / 1000;
  const heapWorker = heapUsed();
  await waiting.stop();

  // Check at the budget for 15 s: CPU per check and the event-loop stall.
  sent.length = 0;
  const checking = client().startSettlementWorker({
    journal,
    requestsPerSecond: SCALE_BUDGET,
    maxLeasedPayments: OPEN_PAYMENTS,
    // Every payment due at once, then again a minute later: a backlog the budget works through for ~50 s,
    // never a minute behind, so the worker keeps leasing until it holds all of them.
    initialDelayMs: 0,
    intervalMs: 60_000,
    maxIntervalMs: 60_000,
    // Long enough that its share is every payment (and none is parked): the heap and CPU of one worker holding all.
    leaseMs: 600_000,
  });
  while ((await journal.lease({ owner: 'probe', leaseMs: 1, limit: 1 })).length > 0) await wait(500);
  await wait(2_000);
  progress('checking at the budget');
  const stall = monitorEventLoopDelay({ resolution: 10 });
  stall.enable();
  const sentBefore = sent.length;
  const cpuBefore = cpuMs();
  await wait(15_000);
  const checks = sent.length - sentBefore;
  const workerCpuPerCheck = (cpuMs() - cpuBefore) / checks;
  stall.disable();
  const peakRate = maxInAnySecond([...sent]);
  await checking.stop();
  progress('stopped');
  // The same stall measure around plain checkStatus calls: what this machine's load alone costs.
  const baselineStall = monitorEventLoopDelay({ resolution: 10 });
  baselineStall.enable();
  const baselineAfter = await baseline(20_000);
  baselineStall.disable();
  const baselineCpu = (baselineBefore + baselineAfter) / 2;

  const perPayment = (heapWorker - heapJournal) / OPEN_PAYMENTS;
  const cpuRatio = workerCpuPerCheck / baselineCpu;
  const stallMs = stall.max / 1e6;
  printTable(
    `(d1) Settlement worker, ${OPEN_PAYMENTS} open payments in one worker (MemoryJournal), simulator in another process over loopback.\n` +
      '     Heap read after a forced GC; CPU = this process’s user+system time; baseline = one checkStatus call (16 at a time) in the same run.',
    ['measure', 'value', 'target', ''],
    [
      ['heap per open payment, the worker (leased, waiting)', `${perPayment.toFixed(0)} B`, '≤ 1 024 B', passFail(perPayment <= 1_024)],
      ['heap per record, the MemoryJournal (for reference)', `${((heapJournal - heapEmpty) / OPEN_PAYMENTS).toFixed(0)} B`, '', ''],
      ['leasing all of them', `${leaseSeconds.toFixed(1)} s`, '', ''],
      ['CPU per status check, checkStatus (baseline)', `${(baselineCpu * 1000).toFixed(0)} µs`, '', ''],
      [`CPU per status check, worker at ${SCALE_BUDGET}/s`, `${(workerCpuPerCheck * 1000).toFixed(0)} µs`, '', ''],
      ['  ratio worker / checkStatus', `${cpuRatio.toFixed(2)}×`, '≤ 1.2×', passFail(cpuRatio <= 1.2)],
      [`checks in 15 s (peak in any 1 s)`, `${checks} (${peakRate})`, `≤ ${SCALE_BUDGET}/s`, passFail(peakRate <= SCALE_BUDGET)],
      [
        'event-loop stall while checking (max, p99)',
        `${stallMs.toFixed(0)} ms, ${(stall.percentile(99) / 1e6).toFixed(0)} ms`,
        '≤ 50 ms',
        passFail(stallMs <= 50),
      ],
      [
        'event-loop stall, checkStatus calls (baseline: max, p99)',
        `${(baselineStall.max / 1e6).toFixed(0)} ms, ${(baselineStall.percentile(99) / 1e6).toFixed(0)} ms`,
        '',
        '',
      ],
    ],
  );

  if (process.env.BENCH_WORKER_PARTS === 'd1') {
    simulator.stop();
    return;
  }

  // ── d2: settlement → outcome, worker vs independent polls ──
  const random = seededRandom(7);
  const rows: string[][] = [];
  const latencyRun = async (label: string, budget: number | undefined) => {
    progress(label);
    const runIds = Array.from({ length: LATENCY_PAYMENTS }, () => crypto.randomUUID());
    await simulator.create(runIds);
    const delays = runIds.map(() => SETTLE_FROM_MS + random() * SETTLE_SPREAD_MS);
    const outcomeAt = new Map<string, number>();
    sent.length = 0;
    const started = Date.now();
    let finished: Promise<unknown>;
    if (budget !== undefined) {
      const runJournal = new sdk.MemoryJournal();
      for (const record of openRecords(runIds)) await runJournal.insert(record);
      const worker = client().startSettlementWorker({
        journal: runJournal,
        requestsPerSecond: budget,
        onSettled: (record) => void outcomeAt.set(record.referenceId, Date.now()),
      });
      await simulator.settle(runIds, delays);
      finished = (async () => {
        while (outcomeAt.size < LATENCY_PAYMENTS) await wait(50);
        await worker.stop();
      })();
    } else {
      const polling = client({ maxConcurrentRequests: 16 });
      await simulator.settle(runIds, delays);
      finished = Promise.all(
        runIds.map((referenceId) =>
          polling.pollUntilSettled(referenceId, { maxWaitMs: 600_000 }).then(() => void outcomeAt.set(referenceId, Date.now())),
        ),
      );
    }
    await finished;
    const settledAt = await simulator.settledAt();
    const latencies = runIds.map((referenceId) => (outcomeAt.get(referenceId) ?? Number.NaN) - (settledAt.get(referenceId) ?? Number.NaN));
    rows.push([
      label,
      `${(percentile(latencies, 0.5) / 1000).toFixed(2)} s`,
      `${(percentile(latencies, 0.95) / 1000).toFixed(2)} s`,
      String(sent.length),
      String(maxInAnySecond([...sent])),
      `${((Date.now() - started) / 1000).toFixed(0)} s`,
    ]);
  };
  await latencyRun('settlement worker, requestsPerSecond 50', 50);
  await latencyRun('settlement worker, requestsPerSecond 200', 200);
  await latencyRun(`${LATENCY_PAYMENTS} × pollUntilSettled, maxConcurrentRequests 16`, undefined);
  printTable(
    `(d2) Settlement → outcome: ${LATENCY_PAYMENTS} payments created at once, each settling at a random moment ${SETTLE_FROM_MS / 1000}–${(SETTLE_FROM_MS + SETTLE_SPREAD_MS) / 1000} s later;\n` +
      '     default poll schedule everywhere. Latency = onSettled (or the poll resolving) − the moment the simulator settled it.',
    ['variant', 'p50', 'p95', 'status checks', 'peak req in 1 s', 'took'],
    rows,
  );
  console.log(`\n(d) median of the two baselines' CPU per call: ${(median([baselineBefore, baselineAfter]) * 1000).toFixed(0)} µs`);
  simulator.stop();
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
