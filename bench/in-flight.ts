/**
 * (h) Heap per poll with a request in flight, against plain ky: the in-flight run of (c) (`scale-runs.ts`: every first
 * status check held until all polls started, heap read after a settled GC) for three pollers over the same fake and
 * schedule: a hand-written fetch loop, the same loop over plain ky, and `CollectionsClient.pollUntilSettled`. Plain ky's
 * row is the floor of any poller that sends through ky. Target: the SDK ≤ 4096 B per poll.
 */
import { setTimeout as delay } from 'node:timers/promises';
import ky from 'ky';
import type { FetchFunction } from '../src/index.js';
import { API_KEY, type BenchSdk, loadSdk, median, passFail, printTable, spawnBenchChild } from './harness.ts';
import type { PollFactory } from './scale-gateway.ts';
import { IN_FLIGHT_SCHEDULE, inFlightRun } from './scale-runs.ts';

const POLLS = 5_000;
const ROUNDS = 3;
/** Never connected to (a fake answers, or nothing is sent); not a port on fetch's blocked list. */
const BASE_URL = 'http://127.0.0.1:2';

/** Runs (h) in a child process with `--expose-gc`, and waits for it. */
export async function run(_sdk: BenchSdk): Promise<void> {
  const child = spawnBenchChild(new URL(import.meta.url), 'measure', { nodeArgs: ['--expose-gc'], stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(h) failed: the child process exited with ${code}`);
}

type StatusBody = { data: { referenceId: string; statusText: string } };

/** The body of (h), in the child process. */
export async function measure(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('(h) needs node --expose-gc');
  const sdk = await loadSdk();
  const headers = { accept: 'application/json', authorization: `Bearer ${API_KEY}` };
  // The loops keep only the status while they sleep: each check is its own function.
  const loop =
    (check: (fetchFunction: FetchFunction, referenceId: string) => Promise<StatusBody>): PollFactory =>
    (fetchFunction) =>
    async (referenceId) => {
      for (let pauseNumber = 0; ; pauseNumber++) {
        const { data } = await check(fetchFunction, referenceId);
        if (data.statusText === 'successful' || data.statusText === 'failed') return data;
        await delay(sdk.pollPauseMs(pauseNumber, IN_FLIGHT_SCHEDULE));
      }
    };
  const url = (referenceId: string) => `${BASE_URL}/v1/collections/check/${referenceId}`;
  const variants: { name: string; poller: PollFactory }[] = [
    {
      name: 'hand-written fetch loop',
      poller: loop(async (fetchFunction, referenceId) => (await (await fetchFunction(url(referenceId), { headers })).json()) as StatusBody),
    },
    {
      name: 'the same loop over plain ky',
      poller: loop((fetchFunction, referenceId) =>
        ky.get(url(referenceId), { headers, fetch: fetchFunction, retry: 0, timeout: false }).json<StatusBody>(),
      ),
    },
    {
      name: 'SDK CollectionsClient.pollUntilSettled',
      poller: (fetchFunction) => {
        const client = new sdk.CollectionsClient({
          apiKey: API_KEY,
          baseUrl: BASE_URL,
          logLevel: 'off',
          fetch: fetchFunction,
          // Every poll's request in flight at once (the default, 64, would queue the rest: another state).
          maxConcurrentRequests: Number.POSITIVE_INFINITY,
        });
        return (referenceId) => client.pollUntilSettled(referenceId, { ...IN_FLIGHT_SCHEDULE, maxWaitMs: 600_000 });
      },
    },
  ];
  for (const variant of variants) await inFlightRun(variant.poller, 500, 1, gc); // JIT warm-up
  const bytes = variants.map(() => [] as number[]);
  const problems = variants.map(() => new Set<string>());
  for (let round = 0; round < ROUNDS; round++) {
    for (const offset of variants.keys()) {
      const index = (offset + round) % variants.length;
      const variant = variants[index];
      if (!variant) continue;
      const result = await inFlightRun(variant.poller, POLLS, 300 + round, gc);
      bytes[index]?.push(result.heapPerPollBytes);
      for (const problem of result.problems) problems[index]?.add(problem);
    }
  }
  const ratio = (index: number, base: number) =>
    median((bytes[index] ?? []).map((value, round) => value / (bytes[base]?.[round] ?? Number.NaN)));
  const sdkBytes = median(bytes[2] ?? []);
  printTable(
    `(h) Heap per poll with a request in flight: ${POLLS} polls whose first status check is held by the fake (see (c)); heapUsed\n` +
      `    after a settled GC with all of them in flight, minus before, per poll. ${ROUNDS} rounds, order rotated, medians; ratios per round.\n` +
      '    The same fake and schedule for all three. Plain ky holds its Ky instance, options, Headers, AbortController and\n' +
      '    Request for each request in flight: a floor for anything that sends through ky. Target: the SDK ≤ 4096 B.',
    ['poller', 'all correct', 'heap B/poll', 'vs fetch loop', 'vs ky loop', 'target'],
    variants.map((variant, index) => [
      variant.name,
      problems[index]?.size === 0 ? 'yes' : `NO (${[...(problems[index] ?? [])].join('; ')})`,
      median(bytes[index] ?? []).toFixed(0),
      `${ratio(index, 0).toFixed(2)}×`,
      `${ratio(index, 1).toFixed(2)}×`,
      index === 2 ? `≤ 4096 ${passFail(sdkBytes <= 4096)}` : '-',
    ]),
  );
}
