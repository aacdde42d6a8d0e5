/**
 * The unit tests' adaptations of the simulator (the one fake of the services), for the few behaviours a test needs and
 * partners would not: each is a {@link Simulator} whose answers stay the simulator's except for the one thing changed.
 * (The budget tests' limited service, which the benchmark also runs under plain Node, is in `limited-service.ts`.)
 */
import type { SetupServer } from 'msw/node';
import {
  createSimulator,
  createSimulatorHandlers,
  Simulator,
  type SimulatorOptions,
  type SimulatorOutcome,
  type SimulatorRequest,
} from '../../src/testing/index.ts';
import { COLLECTIONS_BASE_URL, TAP_BASE_URL } from './fixtures.ts';

/**
 * A simulator whose collections stay pending (no test waits on a settlement it did not ask for), served by `server` at
 * the fixtures' base URLs: the service the duplicate-reference tests push to.
 */
export async function servedPendingSimulator(server: SetupServer): Promise<Simulator> {
  const simulator = createSimulator({ settlement: { pendingPolls: Number.POSITIVE_INFINITY, pendingMs: Number.POSITIVE_INFINITY } });
  server.use(...(await createSimulatorHandlers(simulator, { tapBaseUrl: TAP_BASE_URL, collectionsBaseUrl: COLLECTIONS_BASE_URL })));
  return simulator;
}

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
