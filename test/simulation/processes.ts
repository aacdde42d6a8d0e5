/**
 * The simulated processes, each driving its own real `CollectionsClient` (its `fetch` is the simulated service,
 * its journal the shared one through its own latency and faults, its clock its own): tills selling (`initiate`,
 * then `pollUntilSettled`, `waitForSettlement` or `checkStatus`), settlement workers (`startSettlementWorker`),
 * status checkers and back-office `recover()` jobs. What each call tells its caller goes to the ledger of what
 * callers were told (invariants.ts).
 *
 * No vitest import (see scheduler.ts).
 */
import { CollectionsClient } from '../../src/collections/client.js';
import type { SettlementWorkerOptions } from '../../src/collections/settlement-worker-options.js';
import {
  ApiError,
  ConfigurationError,
  JournalError,
  PaymentContradictionError,
  RequestValidationError,
  UnknownOutcomeError,
} from '../../src/core/errors.js';
import { isOpenPaymentState, type PaymentJournal, type PaymentRecord } from '../../src/journal/journal.js';
import type { Elsewhere } from './elsewhere.js';
import type { Ledger } from './invariants.js';
import type { SimJournal } from './journal.js';
import { attemptWindow, isSettledWord } from './oracle.js';
import type { Proc, Scheduler } from './scheduler.js';
import type { Service } from './service.js';
import { seededUuid } from './virtual-time.js';

export const PRODUCT_ID = '6f1f1d3e-0000-4000-a000-00000000abcd';
const API_KEY = 'sk_sim_0123456789abcdef';
/** The world's service. */
export const SERVICE_BASE_URL = 'https://collections.sim.test';
const BASE_URL = SERVICE_BASE_URL;
/** A second deployment of the service (elsewhere.ts): a sandbox, another region. */
export const ELSEWHERE_BASE_URL = 'https://collections-sandbox.sim.test';

export interface Sale {
  readonly id: number;
  /** Every reference this sale was pushed under, oldest first (lower case; a new one only after a definite "not created"). */
  readonly references: string[];
  readonly amount: number;
  /** How the till writes this sale's details on each try (letter case, number form): the same payment. */
  readonly phoneNumber: string;
}

export interface ClientSettings {
  readonly timeoutMs: number;
  readonly maxRetries: number;
}

/** The world the processes share. */
export interface World {
  readonly sim: Scheduler;
  readonly service: Service;
  readonly journal: SimJournal;
  readonly random: () => number;
  readonly ledger: Ledger;
  readonly saleOf: Map<string, Sale>;
  /** Grace values the readers of this seed use (`undefined`: the default). */
  readonly graces: readonly (number | undefined)[];
  /** Processes whose baseUrl has a wrong prefix: they must never close a record `not-sent` (journal.ts). */
  readonly wrongPrefix: Set<Proc>;
  /** Sometimes starts a `recover()` right around a verdict's earliest time (journal clock): a directed race to decide. */
  readonly decideAround: (decidableAt: string) => void;
  /** The key's shared budget of this world (`requestsPerSecond` on every client), if it has one. */
  readonly budget?: WorldBudget | undefined;
  /** Processes whose client draws on the shared budget: their arrivals at the service are counted against it. */
  readonly budgeted: Set<Proc>;
  /** References a till of the previous release inserted (without a window), in lower case. */
  readonly windowless: Set<string>;
  /** Every client says the service refuses duplicate references (only in worlds whose service does). */
  readonly duplicatesRefused?: boolean;
  /** The clients' `duplicateMemoryMs` (with `duplicatesRefused`). @defaultValue the SDK's (24 h) */
  readonly duplicateMemoryMs?: number | undefined;
  /** The faults have stopped (a slow key function is one of them: it answers at once from then on). */
  readonly healed?: () => boolean;
  /** Some keys come from a key function that takes its time (world.ts's `slowKeys`). @defaultValue true */
  readonly slowKeys?: boolean;
}

/** A world's shared budget: the key's limit, and the leases its processes draw from (`undefined`: the default). */
export interface WorldBudget {
  readonly limit: number;
  readonly leases: readonly (number | undefined)[];
  /**
   * `requestsPerSecond: 'adaptive'` on every client: the service keeps `limit` without saying (429 past it), and the
   * fleet must learn it.
   */
  readonly adaptive: boolean;
  /** Draws of this world's budget (its own stream: worlds without a budget keep their draws). */
  readonly random: () => number;
}

/** The service-side bound of a push of this client (the world's physics, not the SDK's rule). */
export function windowOf(settings: ClientSettings): number {
  return attemptWindow(settings);
}

/** How a process is set up beyond its client's settings (issue 26's vocabulary). */
export interface Setup {
  /** Its baseUrl has a wrong path prefix: the service's host answers there with a proxy's bare 404. */
  readonly wrongPrefix?: boolean;
  /** Writes records as the previous release did: without `sendWindowMs`. */
  readonly previousRelease?: boolean;
  /** The key as a string (no key function taking its time): directed measures of a create's wait (sim.ts). */
  readonly plainKey?: boolean;
  /** Configured for a second deployment (a copied `.env`): its base URL and its answers, the same journal (elsewhere.ts). */
  readonly elsewhere?: Elsewhere;
  /** Told what each of its journal's leases returned (a worker of the second deployment: elsewhere.ts). */
  readonly onLeased?: (records: readonly PaymentRecord[]) => void;
}

/** The journal as a writer of the previous release sees it: its inserts carry no window. */
function previousReleaseJournal(journal: PaymentJournal, windowless: Set<string>): PaymentJournal {
  return {
    ...journal,
    insert: (record) => {
      windowless.add(record.referenceId.toLowerCase());
      const { sendWindowMs: _window, ...withoutWindow } = record;
      return journal.insert(withoutWindow);
    },
  };
}

export function clientFor(world: World, proc: Proc, settings: ClientSettings, setup: Setup = {}): CollectionsClient {
  if (setup.wrongPrefix) world.wrongPrefix.add(proc);
  world.journal.senderWindows.set(proc, windowOf(settings));
  const own = world.journal.forProcess(proc);
  const onLeased = setup.onLeased;
  const journal: PaymentJournal =
    onLeased === undefined
      ? own
      : {
          ...own,
          lease: async (request) => {
            const leased = await own.lease(request);
            onLeased(leased);
            return leased;
          },
        };
  const budget = world.budget;
  let shared = {};
  if (budget !== undefined) {
    world.budgeted.add(proc);
    const leaseMs = pick(budget.random, budget.leases);
    shared = {
      requestsPerSecond: budget.adaptive ? 'adaptive' : budget.limit,
      ...(leaseMs === undefined ? {} : { budgetLeaseMs: leaseMs }),
    };
  }
  // (The draw is made either way: a world without slow keys keeps every other draw.)
  const slowKey = world.random() < 0.3 && setup.plainKey !== true && world.slowKeys !== false;
  return new CollectionsClient({
    // Sometimes a key function that takes its time (a vault): the attempt's deadline must still hold.
    apiKey: slowKey
      ? () =>
          world.healed?.() === true
            ? Promise.resolve(API_KEY)
            : new Promise<string>((resolve) => setTimeout(() => resolve(API_KEY), world.random() * 15_000))
      : API_KEY,
    ...shared,
    baseUrl: setup.elsewhere !== undefined ? ELSEWHERE_BASE_URL : setup.wrongPrefix ? `${BASE_URL}/api/v2` : BASE_URL,
    fetch: setup.elsewhere?.fetchFor(proc) ?? world.service.fetchFor({ proc, sendWindowMs: windowOf(settings) }),
    journal: setup.previousRelease ? previousReleaseJournal(journal, world.windowless) : journal,
    timeoutMs: settings.timeoutMs,
    maxRetries: settings.maxRetries,
    ...(world.duplicatesRefused === true ? { duplicateReferences: 'refused' as const } : {}),
    ...(world.duplicatesRefused === true && world.duplicateMemoryMs !== undefined ? { duplicateMemoryMs: world.duplicateMemoryMs } : {}),
    logLevel: 'off',
  });
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Sleeps on the process's virtual timers. */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(1, ms)));
}

export function newReference(world: World, sale: Sale): string {
  const reference = seededUuid(world.random);
  sale.references.push(reference);
  world.saleOf.set(reference, sale);
  world.sim.log(`sale ${sale.id} → reference ${reference.slice(0, 8)}`);
  return reference;
}

/** A definite "start over" from `initiate`: the journal closed the reference as not sent or rejected. */
function startsOver(error: unknown): boolean {
  return error instanceof RequestValidationError && /start the sale over/.test(error.message);
}

/** A till's work on one sale: what the docs tell a till to do with each answer. */
export async function sell(world: World, proc: Proc, client: CollectionsClient, sale: Sale, tries: number): Promise<void> {
  const { random, sim, ledger } = world;
  for (let attempt = 0; attempt < tries; attempt++) {
    const reference = sale.references[sale.references.length - 1] ?? newReference(world, sale);
    // The same payment written differently on each try: the SDK must see one payment.
    const sent = random() < 0.3 ? reference.toUpperCase() : reference;
    const productId = random() < 0.3 ? PRODUCT_ID.toUpperCase() : PRODUCT_ID;
    const phoneNumber = random() < 0.5 ? sale.phoneNumber : `0${sale.phoneNumber.slice(3)}`;
    // Sometimes the till gives up waiting (the caller's abort): the outcome is then unknown to it.
    const signal = random() < 0.15 ? AbortSignal.timeout(1_000 + Math.floor(random() * 40_000)) : undefined;
    // This call's own writes of `initiating` after its first are resends, not takeovers (journal.ts).
    const call = `${proc.id}:${reference}`;
    world.journal.callsWriting.set(call, false);
    try {
      const result = await client.initiate(
        { referenceId: sent, productId, phoneNumber, amount: sale.amount, narration: `sale ${sale.id}` },
        signal === undefined ? undefined : { signal },
      );
      world.journal.callsWriting.delete(call);
      ledger.accepted(reference, result.referenceId);
      await follow(world, client, reference);
      return;
    } catch (error) {
      world.journal.callsWriting.delete(call);
      sim.log(`sale ${sale.id} ${reference.slice(0, 8)} initiate → ${error instanceof Error ? error.name : String(error)}`);
      if (signal?.aborted && error === signal.reason) {
        ledger.probe('initiate aborted by the caller');
        await pause(5_000 + random() * 60_000);
        continue;
      }
      if (error instanceof UnknownOutcomeError) {
        ledger.unknown(reference, error, await world.journal.store.get(reference), world.windowless.has(reference.toLowerCase()));
        if (error.decidableAt !== undefined) world.decideAround(error.decidableAt);
        const untilDecidable = error.decidableAt === undefined ? undefined : Date.parse(error.decidableAt) - Date.now();
        // Back at decidableAt (or up to the grace before it: a takeover must still wait its grace), or any time.
        const back = random();
        await pause(
          untilDecidable === undefined || back >= 0.7
            ? 5_000 + random() * 90_000
            : back < 0.5
              ? untilDecidable + random() * 1_500
              : untilDecidable - random() * 10_500,
        );
        continue;
      }
      if (error instanceof PaymentContradictionError) {
        // The journal's final record and the service disagree (a reversal): a person settles the sale
        // (docs/guide/operating.md); it is never started over, and the record keeps its mark.
        ledger.probe('initiate told of a contradiction');
        return;
      }
      if (startsOver(error)) {
        ledger.definite(reference, error);
        if (sale.references[sale.references.length - 1] === reference) newReference(world, sale);
        continue;
      }
      if (error instanceof JournalError) {
        // The journal failed; the payment may have been sent by an earlier call: try the same reference again.
        await pause(1_000 + random() * 20_000);
        continue;
      }
      // A till goes by the journal's record (docs/guide/journal.md): an error whose closing write failed left the record
      // open, and the sale's outcome is still unknown (recover() or the worker decide it; another call may send it).
      const record = await world.journal.store.get(reference);
      if (record !== undefined && isOpenPaymentState(record.state) && ledger.expected(error, `initiate ${reference.slice(0, 8)}`)) {
        ledger.probe('answer not recorded (journal failed): record left open');
        await pause(1_000 + random() * 20_000);
        continue;
      }
      if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429) {
        ledger.definite(reference, error);
        return;
      }
      if (!ledger.definite(reference, error)) return;
      // A definite "nothing was created": the next call for this reference is told to start over.
      await pause(1_000 + random() * 10_000);
    }
  }
}

/** After an accepted push: learn the outcome as a till does (poll it, wait for the journal, or check now and then). */
async function follow(world: World, client: CollectionsClient, reference: string): Promise<void> {
  const { random, ledger } = world;
  const way = random();
  try {
    if (way < 0.4) await pollAndTell(world, client, reference, 10 * 60_000);
    else if (way < 0.7) {
      const record = await client.waitForSettlement(reference, { maxWaitMs: 15 * 60_000 });
      ledger.finalRecord(reference, 'waitForSettlement', record);
    } else {
      for (let check = 0; check < 3; check++) {
        await pause(5_000 + random() * 60_000);
        await checkAndTell(world, client, reference);
      }
    }
  } catch (error) {
    ledger.expected(error, 'following a payment');
  }
}

/** `pollUntilSettled`: its final word is what the caller is told. */
async function pollAndTell(world: World, client: CollectionsClient, reference: string, maxWaitMs: number): Promise<void> {
  const status = await client.pollUntilSettled(reference, { maxWaitMs });
  world.ledger.settledWord(reference, 'pollUntilSettled', status.statusText);
}

/** `checkStatus`: a settled word is what the caller is told. */
async function checkAndTell(world: World, client: CollectionsClient, reference: string): Promise<void> {
  const status = await client.checkStatus(reference);
  if (isSettledWord(status.statusText)) world.ledger.settledWord(reference, 'checkStatus', status.statusText);
}

/** The options of a settlement worker that are drawn (with the world's plan, or when a worker restarts). */
export interface DrawnWorkerOptions {
  readonly grace: number | undefined;
  readonly leaseMs: number;
  readonly requestsPerSecond: number;
  readonly scanIntervalMs: number;
}

/** Draws a settlement worker's options: its grace among the world's readers', its lease, rate and scan interval. */
export function drawWorkerOptions(random: () => number, graces: readonly (number | undefined)[]): DrawnWorkerOptions {
  const grace = pick(random, graces);
  return {
    grace,
    leaseMs: pick(random, [30_000, 30_000, 90_000]),
    requestsPerSecond: pick(random, [10, 10, 2]),
    scanIntervalMs: pick(random, [1_000, 5_000, 15_000, 15_000]),
  };
}

/** The options of one settlement worker (the liveness bound is computed from the fleet worker's). */
export function workerOptions(world: World, drawn = drawWorkerOptions(world.random, world.graces)): SettlementWorkerOptions {
  const { random } = world;
  return {
    onSettled: (record: PaymentRecord) => {
      world.ledger.finalRecord(record.referenceId, 'onSettled', record);
      // Sometimes the till's handler fails: the worker must deliver it again.
      if (random() < 0.05) throw new Error('handler failed (simulated)');
    },
    ...(drawn.grace === undefined ? {} : { notFoundGraceMs: drawn.grace }),
    leaseMs: drawn.leaseMs,
    requestsPerSecond: drawn.requestsPerSecond,
    scanIntervalMs: drawn.scanIntervalMs,
  };
}

/** A settlement worker of this process; reports every `onSettled`. Runs until the process dies. */
export async function settle(client: CollectionsClient, options: SettlementWorkerOptions): Promise<void> {
  const worker = client.startSettlementWorker(options);
  await worker.done;
}

/** Status checks and polls of references the tills made. */
export async function check(world: World, client: CollectionsClient, rounds: number): Promise<void> {
  const { random, ledger, saleOf } = world;
  for (let round = 0; round < rounds; round++) {
    await pause(1_000 + random() * 40_000);
    const known = [...saleOf.keys()];
    if (known.length === 0) continue;
    const reference = pick(random, known);
    try {
      if (random() < 0.5) await pollAndTell(world, client, reference, 60_000);
      else await checkAndTell(world, client, reference);
    } catch (error) {
      ledger.expected(error, 'a status check');
    }
  }
}

/**
 * `verify()` at start-up: it sends nothing that creates or journals anything; a wrong base URL is refused with
 * `ConfigurationError` (the process goes on: the simulation keeps the misconfigured process in the world).
 */
export async function verifyOnce(world: World, client: CollectionsClient): Promise<void> {
  try {
    await client.verify();
    world.ledger.probe('verify passed');
  } catch (error) {
    if (error instanceof ConfigurationError) world.ledger.probe('verify refused the base URL');
    else world.ledger.expected(error, 'verify()');
  }
}

/** One `recover()`: every record it returns in a final state is what a till would be told. */
export async function recoverOnce(world: World, client: CollectionsClient, grace = pick(world.random, world.graces)): Promise<void> {
  try {
    const records = await client.recover(grace === undefined ? {} : { notFoundGraceMs: grace });
    for (const record of records) world.ledger.finalRecord(record.referenceId, 'recover', record);
  } catch (error) {
    world.ledger.expected(error, 'recover()');
  }
}
