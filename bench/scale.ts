/**
 * (c) Scale: 10 000 concurrent `pollUntilSettled` calls against an in-process fake, in a child process run with
 * `--expose-gc`: heap per poll (after a settled GC) waiting between checks and with a request in flight; then
 * event-loop stall and CPU per check in a realistic run (a ramp, the default schedule). The fake and the runs are in
 * `scale-gateway.ts` and `scale-runs.ts`; this file compares the SDK with a hand-written loop and prints the report.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { FetchFunction } from '../src/index.js';
import { API_KEY, loadSdk, median, passFail, printTable, spawnBenchChild } from './harness.ts';
import type { PollFactory, PollTimings } from './scale-gateway.ts';
import {
  BATCH,
  HEAP_ROUNDS,
  type HeapResult,
  IN_FLIGHT_SCHEDULE,
  inFlightRun,
  RAMP_PER_MS,
  SCALE_COUNT,
  stallRun,
  WAITING_SCHEDULE,
  waitingRun,
} from './scale-runs.ts';

/** Runs (c) in a child process with `--expose-gc` (heap readings need `gc()`), and waits for it. */
export async function run(): Promise<void> {
  const child = spawnBenchChild(new URL(import.meta.url), 'measure', { nodeArgs: ['--expose-gc'], stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(c) failed: the child process exited with ${code}`);
}

/** The body of (c), in the child process: every run, then the tables. */
export async function measure(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('section (c) needs node --expose-gc');
  const sdk = await loadSdk();
  const COUNT = SCALE_COUNT;
  // Never connected to (the fake answers); port 9 is on fetch's blocked list, which the clients refuse.
  const baseUrl = 'http://127.0.0.1:2';
  const defaults = sdk.POLL_DEFAULTS;
  const defaultSchedule = {
    initialDelayMs: defaults.initialDelayMs,
    intervalMs: defaults.intervalMs,
    maxIntervalMs: defaults.maxIntervalMs,
  };

  // The baseline: a minimal hand-written poll loop over the same fake and the same schedule. The check is its own
  // function, so the loop's frame keeps only the status (not the Response) while it sleeps.
  const checkOnce = async (fetchFunction: FetchFunction, referenceId: string) => {
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
      const client = new sdk.CollectionsClient({
        apiKey: API_KEY,
        baseUrl,
        logLevel: 'off',
        fetch: fetchFunction,
        // Every poll's request in flight at once (the default, 64, would queue the rest: another state).
        maxConcurrentRequests: Number.POSITIVE_INFINITY,
      });
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
  const sdkInFlightBytes = heapSummary(inFlight, 'sdk').heapPerPollBytes;
  const inFlightPass = sdkInFlightBytes <= 4_096;
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
      `      started (settle at check 1–5, seeded; released ${BATCH} per turn). Target ≤ 4096 B: the figure includes the\n` +
      '      Request/Response objects of the request in flight, and the fake’s held answers (those in both variants).',
    ['variant', 'pending state', 'settled', 'all correct', 'heap B/poll', 'vs baseline', 'target'],
    rows.map((row) => [
      row.variant,
      row.state,
      `${row.settled}/${COUNT}`,
      row.problems.length === 0 ? 'yes' : 'NO',
      row.heapPerPollBytes.toFixed(0),
      row.sdk ? `${row.ratio.toFixed(2)}×` : '1.00×',
      !row.sdk ? '-' : row.state === 'request in flight' ? `≤ 4096 ${passFail(inFlightPass)}` : `≤ 2048 ${passFail(heapPass)}`,
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
      `(${sdkWaitingBytes.toFixed(0)} B), heap ≤ 4096 B/poll with a request in flight ${passFail(inFlightPass)} ` +
      `(${sdkInFlightBytes.toFixed(0)} B), max stall ≤ 50 ms ${passFail(stallPass)} (${stallSdk.maxStallMs.toFixed(1)} ms; ` +
      `baseline ${stallHand.maxStallMs.toFixed(1)} ms). CPU/check: SDK ${stallSdk.cpuPerCheckUs.toFixed(1)} µs vs baseline ${stallHand.cpuPerCheckUs.toFixed(1)} µs.`,
  );
  if (handProblems.length > 0) console.log(`(baseline problems: ${handProblems.join('; ')})`);
}
