/**
 * The unit tests' adaptations of the simulator (the one fake of the services), for the few behaviours a test needs and
 * partners would not: each is a {@link Simulator} whose answers stay the simulator's except for the one thing changed.
 */
import {
  COLLECTIONS_API_KEYS,
  defaultFixtures,
  PARTNERS,
  PHONES,
  PRODUCTS,
  Simulator,
  type SimulatorOptions,
  type SimulatorOutcome,
  type SimulatorRequest,
} from '../../src/testing/index.ts';

/** A status check's path, its reference captured. */
export const CHECK_PATH = /^\/v1\/collections\/check\/([^/?]+)/;

/** What a status check of one reference answers: the word, and the field it is carried in. */
export interface StatusAnswer {
  readonly word: string;
  /** @defaultValue `'statusText'` */
  readonly field?: 'statusText' | 'status';
}

/**
 * A simulator whose status checks answer, for the references in {@link WordingSimulator.answers}, any word (the
 * simulator's vocabulary is one word per status, fixed at creation), in `statusText` or alone in `status`. Everything
 * else (keys, creates, 404s, the request log) is the simulator's; nothing settles unless told to.
 */
export class WordingSimulator extends Simulator {
  /** The word each reference's status check answers, from now on; set or change it at any time. */
  readonly answers = new Map<string, StatusAnswer>();

  constructor(options: SimulatorOptions = {}) {
    super({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY }, ...options });
  }

  override async handle(request: SimulatorRequest): Promise<SimulatorOutcome> {
    const outcome = await super.handle(request);
    const referenceId = request.method.toUpperCase() === 'GET' ? CHECK_PATH.exec(request.path)?.[1] : undefined;
    const answer = referenceId === undefined ? undefined : this.answers.get(decodeURIComponent(referenceId));
    if (answer === undefined || outcome.kind !== 'respond' || outcome.response.status !== 200) return outcome;
    const body = JSON.parse(outcome.response.body) as { data: Record<string, unknown> };
    const { statusText: _documented, ...data } = body.data;
    const worded = { ...body, data: { ...data, [answer.field ?? 'statusText']: answer.word } };
    return { ...outcome, response: { ...outcome.response, body: JSON.stringify(worded) } };
  }
}

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
 * The simulator with an arrival count and a per-key limit in front of it (`limit` accepted requests in any 1 s sliding
 * window, beyond that the simulator's own 429 fault), lenient where the budget's senders need it: any key is taken as the
 * primary partner's, a status check of a reference never seen answers as a collection created elsewhere (`pending`),
 * and nothing settles.
 */
export class LimitedSimulator extends Simulator {
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
