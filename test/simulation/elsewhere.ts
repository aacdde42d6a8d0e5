/**
 * A second deployment of the Collections service (a sandbox, another region) and the processes configured for it
 * by a copied `.env`: another base URL, the same journal. It answers exactly as the service does (its own error
 * envelope on a 404, `/health` that proves the base URL, duplicates refused with 409), but every status it gives is
 * its own: it holds collections of its own under the world's references (a settled outcome drawn when first asked),
 * and creates one when a create reaches it. None of it is evidence about a record whose push went to the world's
 * service: the SDK's deployment check is what keeps it out (CONTRACT, "Evidence from the deployment the push went
 * to"), and `journal.ts` fails any record a process of this deployment moves.
 *
 * No vitest import (see scheduler.ts).
 */
import type { CollectionsClient } from '../../src/collections/client.js';
import type { SettlementWorkerOptions } from '../../src/collections/settlement-worker-options.js';
import { ConfigurationError } from '../../src/core/errors.js';
import { isOpenPaymentState, type PaymentRecord } from '../../src/journal/journal.js';
import { ELSEWHERE_BASE_URL, SERVICE_BASE_URL, type World } from './processes.js';
import type { Proc, Scheduler } from './scheduler.js';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

export class Elsewhere {
  /** Its own collections, by lower-case reference: the outcome it says. */
  readonly #held = new Map<string, 'successful' | 'failed' | 'pending'>();
  readonly #sim: Scheduler;
  readonly #random: () => number;
  /** How often each of its answers was given (probes). */
  readonly hits = new Map<string, number>();
  /** Creates that reached it (a resend sent to the wrong deployment, were the check skipped). */
  readonly creates: string[] = [];

  constructor(sim: Scheduler, random: () => number) {
    this.#sim = sim;
    this.#random = random;
  }

  #hit(what: string): void {
    this.hits.set(what, (this.hits.get(what) ?? 0) + 1);
  }

  /** The `fetch` of a process configured for this deployment. */
  fetchFor(proc: Proc): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
    return (input, init) => {
      const request = input instanceof Request ? input : new Request(String(input), init);
      const url = new URL(request.url);
      const method = init?.method ?? request.method;
      const body = typeof init?.body === 'string' ? init.body : undefined;
      const signal = init?.signal ?? undefined;
      return new Promise<Response>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const onAbort = () => reject(signal?.reason);
        signal?.addEventListener('abort', onAbort, { once: true });
        const response = this.#answer(method, url.pathname, body);
        this.#sim.at(this.#sim.now + Math.floor(this.#random() * 400), proc, `elsewhere ← ${response.status}`, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(response);
        });
      });
    };
  }

  #answer(method: string, path: string, body: string | undefined): Response {
    if (method === 'GET' && path === '/health') return json(200, { success: true, data: { status: 'ok' } });
    if (method === 'POST' && path === '/v1/collections/mobile-money') {
      const referenceId = (JSON.parse(body ?? '{}') as { referenceId: string }).referenceId.toLowerCase();
      this.creates.push(referenceId);
      this.#hit('elsewhere: create');
      if (this.#held.has(referenceId)) return json(409, { success: false, code: 'E_DUPLICATE', message: 'Reference exists' });
      this.#held.set(referenceId, 'pending');
      return json(202, { success: true, data: { referenceId, status: 'pending' } });
    }
    if (method === 'GET' && path.startsWith('/v1/collections/check/')) {
      const referenceId = decodeURIComponent(path.slice('/v1/collections/check/'.length));
      const key = referenceId.toLowerCase();
      // Its own history for the reference, drawn when first asked: half the time a collection of its own, settled.
      if (!this.#held.has(key) && this.#random() < 0.5) this.#held.set(key, this.#random() < 0.5 ? 'successful' : 'failed');
      const held = this.#held.get(key);
      if (held === undefined) {
        this.#hit('elsewhere: 404');
        return json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' });
      }
      this.#hit(`elsewhere: ${held}`);
      return json(200, {
        success: true,
        data: {
          referenceId,
          statusText: held,
          transactionCode: held === 'successful' ? 'SB1' : null,
          reason: held === 'pending' ? null : held,
        },
      });
    }
    return json(404, { success: false, code: 'E_ROUTE_NOT_FOUND', message: 'No such route' });
  }
}

/**
 * The open records whose push went to the world's service (not to this deployment), by lower-case reference: what a
 * process of this deployment must leave open and report.
 */
async function openElsewhereOf(world: World): Promise<Set<string>> {
  const records = await world.journal.store.list({ states: ['initiating', 'pending', 'unknown'] });
  return new Set(
    records
      .filter((record) => record.deployment !== undefined && record.deployment.baseUrl !== ELSEWHERE_BASE_URL)
      .map((r) => r.referenceId),
  );
}

/** Whether `error` is the mismatch said as the contract asks: a `ConfigurationError` naming both base URLs. */
function namesBoth(error: unknown): boolean {
  return error instanceof ConfigurationError && error.message.includes(ELSEWHERE_BASE_URL) && error.message.includes(SERVICE_BASE_URL);
}

/**
 * A `recover()` job of the second deployment: a record of the world's service open before the call and still open
 * after it was listed by it, so the call must reject with `ConfigurationError` naming both base URLs
 * (`MISMATCH-UNSAID` otherwise). That it moved nothing is `journal.ts`'s judgement.
 */
export async function recoverElsewhere(world: World, client: CollectionsClient): Promise<void> {
  const before = await openElsewhereOf(world);
  let failure: unknown;
  try {
    await client.recover();
  } catch (error) {
    failure = error;
  }
  const after = await openElsewhereOf(world);
  const stayed = [...before].filter((referenceId) => after.has(referenceId));
  if (stayed.length === 0) {
    if (failure !== undefined) world.ledger.expected(failure, 'recover() of the second deployment');
    return;
  }
  // A journal that failed (the list, a read) stopped the call before it saw anything: nothing to say then.
  if (namesBoth(failure)) world.ledger.probe('deployment mismatch said by recover()');
  else if (failure === undefined || failure instanceof ConfigurationError)
    world.ledger.violations.push(
      `MISMATCH-UNSAID: recover() configured for ${ELSEWHERE_BASE_URL} ${failure === undefined ? 'resolved' : `failed with ${(failure as Error).name}: ${(failure as Error).message.slice(0, 120)}`} while ${stayed.length} payment(s) pushed to the world's service (${stayed[0]?.slice(0, 8)}…) stayed open`,
    );
  else world.ledger.expected(failure, 'recover() of the second deployment');
}

/** How long after a lease handed it such a record the worker must report the mismatch (its vetting does no I/O). */
const REPORT_WITHIN_MS = 5_000;

/**
 * A settlement worker of the second deployment: every time its lease hands it an open record pushed to the world's
 * service, its `configurationProblem` (what the CLI's `/healthz` reports) must name both base URLs within
 * {@link REPORT_WITHIN_MS} (`MISMATCH-UNREPORTED` otherwise). Runs until the process is stopped.
 */
export async function settleElsewhere(
  world: World,
  proc: Proc,
  makeClient: (onLeased: (records: readonly PaymentRecord[]) => void) => CollectionsClient,
  options: SettlementWorkerOptions,
): Promise<void> {
  let worker: { readonly configurationProblem: ConfigurationError | undefined } | undefined;
  const client = makeClient((records) => {
    const theirs = records.find(
      (record) => isOpenPaymentState(record.state) && record.deployment !== undefined && record.deployment.baseUrl !== ELSEWHERE_BASE_URL,
    );
    if (theirs === undefined) return;
    const judge = (since: number) => {
      // A pause of the process (the scheduler's) holds its vetting back as much: only a process that ran is judged.
      if (proc.dead || proc.pausedUntil > since) return;
      if (namesBoth(worker?.configurationProblem)) {
        world.ledger.probe('deployment mismatch reported by a worker');
        return;
      }
      // An event loop that stalled meanwhile (the scheduler ran this process's due work late, by up to minutes: seeds
      // 2452, 4347) ran its vetting just now at best: it is given the whole time again from here.
      if (world.sim.ranLate(proc, since, world.sim.now)) {
        const from = world.sim.now;
        setTimeout(() => judge(from), REPORT_WITHIN_MS);
        return;
      }
      world.ledger.violations.push(
        `MISMATCH-UNREPORTED: ${proc.name} (configured for ${ELSEWHERE_BASE_URL}) leased ${theirs.referenceId.slice(0, 8)}, pushed to the world's service, and ${REPORT_WITHIN_MS} ms later reports ${worker?.configurationProblem === undefined ? 'no configuration problem' : `"${worker.configurationProblem.message.slice(0, 100)}"`}`,
      );
    };
    const leasedAt = world.sim.now;
    setTimeout(() => judge(leasedAt), REPORT_WITHIN_MS);
  });
  const started = client.startSettlementWorker(options);
  worker = started;
  await started.done;
}
