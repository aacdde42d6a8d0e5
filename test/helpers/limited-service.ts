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
type Testing = typeof import('../../src/testing/index.ts');
type SimulatorRequest = import('../../src/testing/index.ts').SimulatorRequest;
type SimulatorOutcome = import('../../src/testing/index.ts').SimulatorOutcome;

const CHECK_PATH = /^\/v1\/collections\/check\/([^/?]+)/;

/** One request as the limited service saw it. */
export interface Arrival {
  readonly at: number;
  readonly method: string;
  readonly status: number;
  /** The `x-sender` header (which process sent it), when given. */
  readonly sender: string | undefined;
}

/** The product the budget's senders create collections for, owned by the primary partner here. */
const SENDERS_PRODUCT = '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10';

/**
 * The testing entry: its source under the test runner; under plain Node (the benchmark, which runs after a build) the
 * source's `.js` specifiers do not resolve, so the built entry.
 */
async function testingEntry(): Promise<Testing> {
  try {
    return await import('../../src/testing/index.ts');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return (await import(new URL('../../dist/testing/index.js', import.meta.url).href)) as Testing;
  }
}

interface LimitedSimulator extends InstanceType<Testing['Simulator']> {
  limit: number | undefined;
  readonly arrivals: Arrival[];
}

/**
 * The simulator with an arrival count and a per-key limit in front of it (`limit` accepted requests in any 1 s sliding
 * window, beyond that the simulator's own 429 fault), lenient where the budget's senders need it: any key is taken as the
 * primary partner's, a status check of a reference never seen answers as a collection created elsewhere (`pending`),
 * and nothing settles.
 */
function limitedSimulator(testing: Testing, limit: number | undefined): LimitedSimulator {
  const { COLLECTIONS_API_KEYS, defaultFixtures, PARTNERS, PHONES, PRODUCTS, Simulator } = testing;
  class Limited extends Simulator {
    limit: number | undefined;
    readonly arrivals: Arrival[] = [];
    /** Arrival times of the requests accepted in the last second (for the limit). */
    readonly #accepted: number[] = [];
    /** The references the simulator holds, without copying its collections at every check. */
    readonly #held = new Set<string>();

    constructor(limit: number | undefined) {
      const fixtures = defaultFixtures();
      super({
        fixtures: {
          ...fixtures,
          products: [...fixtures.products, { productId: SENDERS_PRODUCT, partnerId: PARTNERS.primary.partnerId, name: 'Budget senders' }],
        },
        settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY },
      });
      this.limit = limit;
    }

    override async handle(request: SimulatorRequest): Promise<SimulatorOutcome> {
      const at = Date.now();
      const sender = request.headers['x-sender'];
      while (this.#accepted.length > 0 && (this.#accepted[0] as number) + 1_000 <= at) this.#accepted.shift();
      const limited = this.limit !== undefined && this.#accepted.length >= this.limit;
      const asPrimary = { ...request, headers: { ...request.headers, authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}` } };
      if (limited) {
        // Taken by the very next handle, synchronously: no other request can take it first.
        this.injectFault({ route: '*', service: 'collections', status: 429, retryAfter: 1, times: 1 });
      } else {
        this.#accepted.push(at);
        await this.#createIfUnseen(asPrimary);
      }
      const outcome = await super.handle(asPrimary);
      const status = outcome.kind === 'drop' ? 0 : outcome.response.status;
      if (status === 202) this.#held.add(String((JSON.parse(request.body ?? '{}') as { referenceId?: unknown }).referenceId));
      this.arrivals.push({ at, method: request.method.toUpperCase(), status, sender });
      return outcome;
    }

    /** Before a status check of a reference never created here, creates it (the senders check references at random). */
    async #createIfUnseen(request: SimulatorRequest): Promise<void> {
      const referenceId = request.method.toUpperCase() === 'GET' ? CHECK_PATH.exec(request.path)?.[1] : undefined;
      if (referenceId === undefined || this.#held.has(referenceId)) return;
      this.#held.add(referenceId);
      const body = { referenceId, productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 1, currency: 'ZMW' };
      // A reference the simulator refuses (not a UUID) stays unseen: the check then answers as the simulator does.
      await super.handle({ ...request, method: 'POST', path: '/v1/collections/mobile-money', body: JSON.stringify(body) });
    }
  }
  return new Limited(limit);
}

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
  const testing = await testingEntry();
  const simulator = limitedSimulator(testing, options.limit);
  const running = await testing.startSimulator({ simulator });
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
