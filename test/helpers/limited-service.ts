/**
 * The Collections service on loopback for the shared budget's tests and benchmark: the simulator (the one fake of the
 * service), with two things only these tests need. It counts every arrival (its own clock, at arrival) and, with a
 * `limit`, answers 429 beyond `limit` accepted requests in any 1 s sliding window (the service's per-key rate limit,
 * value undocumented) through the simulator's own fault, so the envelope is the simulator's.
 *
 * The senders measure arrivals, not answers, so the service is lenient where the simulator is strict: any key is taken
 * as the primary partner's, a status check of a reference it never saw answers as a collection created elsewhere
 * (`pending`), and nothing settles.
 */
import { type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { type Arrival, LimitedSimulator } from './simulator.ts';

export type { Arrival } from './simulator.ts';

/** A running limited service. */
export interface LimitedService {
  /** The Collections base URL. */
  readonly baseUrl: string;
  /** Every arrival so far, in order. */
  readonly arrivals: Arrival[];
  /** Changes the limit (undefined: none). */
  setLimit(limit: number | undefined): void;
  close(): Promise<void>;
}

/** Starts the service on 127.0.0.1 at a free port. */
export async function startLimitedService(options: { limit?: number } = {}): Promise<LimitedService> {
  const simulator = new LimitedSimulator(options.limit);
  const running: RunningSimulator = await startSimulator({ simulator });
  return {
    baseUrl: running.collectionsBaseUrl,
    arrivals: simulator.arrivals,
    setLimit: (value) => {
      simulator.limit = value;
    },
    close: () => running.close(),
  };
}

/**
 * Arrivals per second while every sender of `senders` was sending, from `settleMs` after the last one's first arrival
 * to the first one's last arrival (processes start and stop at slightly different times).
 */
export function steadyRate(arrivals: readonly Arrival[], senders: readonly string[], settleMs: number): number {
  const firsts = senders.map((sender) => arrivals.find((arrival) => arrival.sender === sender)?.at ?? Number.POSITIVE_INFINITY);
  const lasts = senders.map((sender) => arrivals.findLast((arrival) => arrival.sender === sender)?.at ?? Number.NEGATIVE_INFINITY);
  const from = Math.max(...firsts) + settleMs;
  const to = Math.min(...lasts);
  if (!(to - from >= 1_000)) return 0;
  return (arrivals.filter((arrival) => arrival.at >= from && arrival.at < to).length * 1_000) / (to - from);
}
