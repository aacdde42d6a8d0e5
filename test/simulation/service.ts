/**
 * The simulated Collections Gateway: a small deterministic model of the service, reached through a `fetch`
 * function per process (the `fetch` option of that process's real `CollectionsClient`). It answers on the wire as
 * the service document says (202 `{ data }`, 404/409/422 envelopes, 429 with `Retry-After`, 5xx), and its faults
 * are drawn per seed (swarm testing): refused connections, answers lost after a commit, commits that land late
 * (up to the pushing client's window), reads that lag behind commits, duplicate delivery, unreadable 2xx bodies,
 * status words in any case and with blanks, words the client does not know while a payment is open.
 *
 * The model's physical bound (what no client rule can survive if broken): a push commits within the pushing
 * client's send window after the journal write that let it leave (or when it arrives, if it left later than that),
 * and reads see it less than the shortest grace of the world's readers later. `lateCommit` puts commits right at
 * the window's edge.
 *
 * No vitest import (see scheduler.ts).
 */
import type { Proc, Scheduler } from './scheduler.js';

export interface Collection {
  readonly id: number;
  readonly referenceId: string;
  /** The process and request whose push created it. */
  readonly by: string;
  readonly committedAt: number;
  readonly settlesAt: number;
  readonly outcome: 'successful' | 'failed';
  /**
   * From this true time the service answers the other outcome (a reversal after settlement: the service corrects
   * itself). The journal keeps the first final outcome it recorded, marked as contradicted once a reader sees this.
   */
  readonly reversedAt?: number;
}

/** What the service says of `collection` at true time `at` once it has settled: its outcome, or the reversal's. */
export function outcomeAt(collection: Collection, at: number): 'successful' | 'failed' {
  if (collection.reversedAt === undefined || at < collection.reversedAt) return collection.outcome;
  return collection.outcome === 'successful' ? 'failed' : 'successful';
}

/** The service's faults, drawn per seed; every probability is per request. */
export interface ServiceFaults {
  /** Refuses a second push of a reference (409, or the 422 uniqueness form); otherwise it creates another collection. */
  dedupe: boolean;
  /** The duplicate answer as 422 `referenceId` `unique` instead of 409. */
  duplicateAs422: boolean;
  /** Connection refused (nothing reaches the service). */
  refuse: number;
  /** 503 before processing (nothing committed). */
  failBefore: number;
  /** 429 with `Retry-After` (nothing committed). */
  rateLimit: number;
  /** Committed, then the answer is lost (the client times out). */
  dropAfterCommit: number;
  /** Committed, then answered 503. */
  failAfterCommit: number;
  /** Committed, then a 2xx whose body cannot be read as the document's. */
  garbleAfterCommit: number;
  /** A committed push reaches the service again (a duplicating proxy); only with `dedupe` (else no client can help). */
  duplicate: number;
  /** A request stalls before it leaves (connection pool, event loop, a suspended machine) for up to `maxStallMs`. */
  stall: number;
  maxStallMs: number;
  /** Commits land at the edge of the pushing client's window. */
  lateCommit: number;
  maxCommitMs: number;
  statusFail: number;
  statusDrop: number;
  statusRateLimit: number;
  maxLagMs: number;
  maxLatencyMs: number;
  maxSettleMs: number;
  /** Settled words written oddly: `SUCCESSFUL`, ` completed `, `Failed`. */
  oddWords: boolean;
  /** While pending, sometimes a word the client does not know (`queued`). */
  unknownPendingWords: boolean;
  /** After a 429 on a push, an operator closes its record by hand before the client's resend (`closeByHand`). */
  handClose: number;
  /** A status check answered by a proxy's bare 404 (no envelope). */
  bare404: number;
  /** A push answered by a proxy's bare 409 (an HTML page, nothing committed): no evidence of a duplicate. */
  bare409: number;
  /**
   * How long the service remembers a reference for refusing a duplicate (from its commit); `undefined`: for ever. Not
   * a fault: it holds after the faults stop.
   */
  memoryMs?: number;
}

/** A healthy service: answers everything at once. */
export const HEALTHY: ServiceFaults = {
  dedupe: true,
  duplicateAs422: false,
  refuse: 0,
  failBefore: 0,
  rateLimit: 0,
  dropAfterCommit: 0,
  failAfterCommit: 0,
  garbleAfterCommit: 0,
  duplicate: 0,
  stall: 0,
  maxStallMs: 0,
  lateCommit: 0,
  maxCommitMs: 0,
  statusFail: 0,
  statusDrop: 0,
  statusRateLimit: 0,
  maxLagMs: 0,
  maxLatencyMs: 0,
  maxSettleMs: 60_000,
  oddWords: false,
  unknownPendingWords: false,
  handClose: 0,
  bare404: 0,
  bare409: 0,
};

/** What each process's fetch knows of its client: how long a push of it can still take effect. */
export interface Caller {
  readonly proc: Proc;
  readonly sendWindowMs: number;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export class Service {
  readonly collections: Collection[] = [];
  readonly #byReference = new Map<string, Collection[]>();
  faults: ServiceFaults;
  readonly #sim: Scheduler;
  readonly #random: () => number;
  /** Amounts the service refuses (422 on `amount`): a definite refusal. */
  refuses: (amount: number) => boolean = () => false;
  onCreate: (collection: Collection) => void = () => {};
  /**
   * The clients say this service refuses duplicate references: a push may leave after another writer took its record
   * over (both may be in flight; the service refuses the second), so PUSH-OVERTAKEN is not checked.
   */
  resendsAtOnce = false;
  /** True time of the caller's last journal write that let a push of `referenceId` leave (journal.ts). */
  sendingWrite: (proc: Proc, referenceId: string) => number | undefined = () => undefined;
  /** True time the caller issued that write (before the journal's latency; journal.ts). */
  sendingIssue: (proc: Proc, referenceId: string) => number | undefined = () => undefined;
  /** The last write applied to a reference's record: by which process, in which state (journal.ts). */
  lastWrite: (referenceId: string) => { proc: Proc; state: string } | undefined = () => undefined;
  /** An operator's hand close of a record (journal.ts). */
  closeByHand: (referenceId: string) => void = () => {};
  /** The last status answer each process had for each reference (`404`, `bare 404`, `found`), by `proc.id:reference`. */
  readonly lastStatus = new Map<string, string>();
  /** Pushes that left when they must not have (the attempt's deadline, a writer overtaken). */
  readonly violations: string[] = [];
  readonly hits = new Map<string, number>();
  /**
   * Every request's arrival (true time, its process, and when it was handed to `fetch`: its token was taken just
   * before), in order: the shared budget's windows are counted on them.
   */
  readonly arrivals: { readonly at: number; readonly proc: Proc; readonly stalled: boolean; readonly handedAt: number }[] = [];
  /**
   * Whether `proc`'s share of the key's budget has stopped counting in the journal (its last grant's lease ran out):
   * a request leaving then from a stalled process is one no lease can stop (sim.ts).
   */
  pastLease: (proc: Proc) => boolean = () => false;
  /** Called as a process hands a request to `fetch` (its token, if it has a budget, was taken just now: sim.ts). */
  onFetch: (proc: Proc) => void = () => {};
  /**
   * A status check of `referenceId` handed to `fetch` by `proc`, and a status check's answer (or refused connection)
   * reaching `proc`: the worker's re-check invariant (invariants.ts, `Rechecks`).
   */
  onStatusAsked: (proc: Proc, referenceId: string) => void = () => {};
  onStatusAnswered: (proc: Proc, referenceId: string, what: string) => void = () => {};
  /** Its holder's renewals failed or were on their way past its share's lease (sim.ts). */
  renewalTroubled: (proc: Proc) => boolean = () => false;
  /** When each push left (true time), by `proc.id:reference`: the first of each attempt's departures (sim.ts). */
  readonly departures = new Map<string, number[]>();
  /**
   * The key's rate limit the service keeps without saying (requests per sliding second, every arrival counted),
   * in the worlds whose budget is `'adaptive'` (sim.ts); `undefined`: none. Not a fault: it holds after they stop.
   */
  hiddenLimit: number | undefined;
  /** When a collection settling at `settlesAt` is reversed, if it is (sim.ts: the contradiction world). */
  reversalAt: (settlesAt: number) => number | undefined = () => undefined;
  /** Called as a push leaves its process (sim.ts: a directed crash of its writer right then). */
  onPushLeft: (proc: Proc, referenceId: string) => void = () => {};
  /**
   * How long `proc` stops right after a 404 for `referenceId` reaches it (a stop-the-world pause between the
   * service's answer and the journal read that follows it; sim.ts's stalled deciders); 0: it does not.
   */
  pauseAfterNotFound: (proc: Proc, referenceId: string) => number = () => 0;
  /** `proc.id:reference` of each such pause, until that process is next answered that the service holds it. */
  readonly pausedAfterNotFound = new Set<string>();
  #requests = 0;

  constructor(sim: Scheduler, random: () => number, faults: ServiceFaults) {
    this.#sim = sim;
    this.#random = random;
    this.faults = faults;
  }

  /** The collections of a reference (references compared as the service does: without regard to case). */
  holding(referenceId: string): Collection[] {
    return this.#byReference.get(referenceId.toLowerCase()) ?? [];
  }

  /** More than `limit` arrivals (the one just recorded included) in the last second. */
  #overHiddenLimit(limit: number): boolean {
    const now = this.#sim.now;
    let count = 0;
    for (let i = this.arrivals.length - 1; i >= 0 && (this.arrivals[i] as { at: number }).at > now - 1_000; i--) count++;
    return count > limit;
  }

  #hit(what: string): true {
    this.hits.set(what, (this.hits.get(what) ?? 0) + 1);
    return true;
  }

  #chance(p: number): boolean {
    return p > 0 && this.#random() < p;
  }

  /** The `fetch` of one process's client. */
  fetchFor(caller: Caller): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
    return (input, init) => {
      const sim = this.#sim;
      const request = input instanceof Request ? input : new Request(String(input), init);
      const url = new URL(request.url);
      const method = init?.method ?? request.method;
      const body = typeof init?.body === 'string' ? init.body : undefined;
      const signal = init?.signal ?? undefined;
      const id = `${caller.proc.name}:${++this.#requests}`;
      this.onFetch(caller.proc);
      const checked =
        method === 'GET' && url.pathname.startsWith('/v1/collections/check/')
          ? decodeURIComponent(url.pathname.slice('/v1/collections/check/'.length)).toLowerCase()
          : undefined;
      if (checked !== undefined) this.onStatusAsked(caller.proc, checked);
      return new Promise<Response>((resolve, reject) => {
        let settled = false;
        const onAbort = () => finish(() => reject(signal?.reason));
        const finish = (settle: () => void) => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener('abort', onAbort);
          settle();
        };
        if (signal?.aborted) return finish(() => reject(signal.reason));
        signal?.addEventListener('abort', onAbort, { once: true });
        const f = this.faults;
        // Before the request leaves: the connection pool, a stalled event loop, a suspended machine. An attempt
        // aborted meanwhile (its deadline) never leaves.
        const stallMs = this.#chance(f.stall) ? this.#random() * f.maxStallMs : this.#random() * 20;
        const calledAt = sim.now;
        const dueAt = calledAt + stallMs;
        sim.at(dueAt, caller.proc, `${id} leaves`, () => {
          if (settled) {
            this.#hit('aborted before leaving');
            return;
          }
          // Its process was paused while the request waited to leave (a pause that ended after the request was handed
          // to fetch), or the departure itself ran late: no renewal could keep its share meanwhile.
          depart(sim.now > dueAt + 1 || caller.proc.pausedUntil > calledAt);
        });
        const isPush = method === 'POST' && url.pathname === '/v1/collections/mobile-money';
        const pushed = isPush ? (JSON.parse(body ?? '{}') as { referenceId: string }).referenceId.toLowerCase() : undefined;
        if (pushed !== undefined) {
          // A push is sent only under its sender's own `initiating` write: a writer overtaken between two attempts stops.
          const last = this.lastWrite(pushed);
          if (!this.resendsAtOnce && last !== undefined && (last.proc !== caller.proc || last.state !== 'initiating')) {
            this.violations.push(
              `PUSH-OVERTAKEN: ${caller.proc.name} pushed ${pushed.slice(0, 8)} after ${last.proc.name} wrote ${last.state} over its write`,
            );
          }
        }
        const depart = (delayed: boolean) => {
          // No push leaves after its sender's window (the attempt's deadline is there to stop it), counted from when
          // the write that let it leave was issued: the SDK reads its clock before issuing the write.
          const since = pushed === undefined ? undefined : this.sendingIssue(caller.proc, pushed);
          // A stalled event loop (its due work waits), or a process paused while its request waited to leave, past its
          // share's lease: the token was taken in time and the request handed to fetch in time; it leaves only now
          // (seed 3446: a request waiting 13 s in the connection pool, its process paused 9 s meanwhile, so no
          // renewal kept the share). The documented limit of the budget (docs/internals/assumptions-rationale.md).
          // Judged before `onPushLeft`, which may kill the process and with it the due work that made it busy (seed
          // 10047: the overdue deadline's timer, dropped by the crash, made a stalled loop's push read as a late one).
          const busy = sim.busy(caller.proc);
          const stalled = (busy || delayed) && this.pastLease(caller.proc);
          if (pushed !== undefined) {
            const key = `${caller.proc.id}:${pushed}`;
            this.departures.set(key, [...(this.departures.get(key) ?? []), sim.now]);
            this.onPushLeft(caller.proc, pushed);
          }
          // Clocks drift by up to 0.01 % (the deadline is read on the sender's clock): 0.02 % of slack.
          // A process whose due work waits (the scheduler let time move on while it was busy: its deadline's timer
          // may be among that work) is a stalled event loop the attempt's deadline cannot reach in time.
          const late = since !== undefined && sim.now > since + caller.sendWindowMs * (1 + 2e-4);
          if (late && busy) this.#hit('push left late from a busy process');
          else if (late && since !== undefined)
            this.violations.push(
              `LATE-PUSH: ${id} left ${Math.round(sim.now - since)} ms after it issued the write that let it leave (window ${caller.sendWindowMs} ms)`,
            );
          if (this.#chance(f.refuse)) {
            this.#hit('refused connection');
            const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
            sim.at(sim.now + this.#latency(), caller.proc, `${id} refused`, () => {
              if (!settled && checked !== undefined) this.onStatusAnswered(caller.proc, checked, 'refused');
              finish(() => reject(new TypeError('fetch failed', { cause })));
            });
            return;
          }
          // The answer reaches the client as an operation of its process (if the attempt has not been aborted).
          const answer = (response: Response, what: string, then?: () => void): true => {
            sim.at(sim.now + this.#latency(), caller.proc, `${id} ← ${what}`, () => {
              if (!settled && checked !== undefined) this.onStatusAnswered(caller.proc, checked, what);
              finish(() => resolve(response));
              then?.();
            });
            return true;
          };
          sim.at(sim.now + this.#latency(), undefined, `${id} arrives`, () => {
            this.arrivals.push({
              at: sim.now,
              handedAt: calledAt,
              proc: caller.proc,
              stalled: stalled || (this.pastLease(caller.proc) && this.renewalTroubled(caller.proc)),
            });
            if (this.hiddenLimit !== undefined && this.#overHiddenLimit(this.hiddenLimit)) {
              // The key's limit, which the service keeps and documents nowhere: past it, 429 and nothing done.
              this.#hit('429 past the hidden limit');
              answer(json(429, { success: false, message: 'Too many requests' }, { 'retry-after': '1' }), '429 (limit)');
              return;
            }
            if (method === 'POST' && url.pathname === '/v1/collections/mobile-money') {
              const payload = JSON.parse(body ?? '{}') as { referenceId: string; amount: number };
              // The effect's latest time: the caller's window after its write that let this attempt leave (the world's
              // physics); a push that arrives later than that (it left late) takes effect when it arrives.
              const since = this.sendingWrite(caller.proc, payload.referenceId.toLowerCase()) ?? sim.now;
              this.#push(payload, id, since + caller.sendWindowMs, answer);
            } else if (method === 'GET' && url.pathname.startsWith('/v1/collections/check/')) {
              this.#status(caller.proc, decodeURIComponent(url.pathname.slice('/v1/collections/check/'.length)), answer);
            } else if (!url.pathname.startsWith('/v1/') && url.pathname !== '/health') {
              // A wrong path prefix: the host's proxy answers with its own page, not the service's envelope.
              this.#hit('bare 404 (wrong prefix)');
              answer(
                new Response('<html><body>Not Found</body></html>', { status: 404, headers: { 'content-type': 'text/html' } }),
                'bare 404',
              );
            } else if (method === 'GET' && url.pathname === '/health') {
              answer(json(200, { success: true, data: { status: 'ok' } }), 'health');
            } else answer(json(404, { success: false, code: 'E_ROUTE_NOT_FOUND', message: 'No such route' }), '404 route');
          });
        };
      });
    };
  }

  #latency(): number {
    return Math.floor(this.#random() * (this.faults.maxLatencyMs + 1));
  }

  #push(
    payload: { referenceId: string; amount: number },
    id: string,
    latestEffect: number,
    answer: (r: Response, what: string) => true,
  ): boolean {
    const f = this.faults;
    const sim = this.#sim;
    const referenceId = payload.referenceId;
    if (this.#chance(f.failBefore)) {
      this.#hit('503 before commit');
      return answer(json(503, { success: false, message: 'Service unavailable' }), '503');
    }
    if (this.#chance(f.rateLimit)) {
      this.#hit('429 on push');
      // Only while the service holds nothing of it (a 429 to a duplicate delivery comes after a commit).
      if (this.#chance(f.handClose) && this.holding(referenceId).length === 0) {
        const at = sim.now + this.#random() * 300;
        sim.at(at, undefined, `operator closes ${referenceId.slice(0, 8)} by hand`, () => this.closeByHand(referenceId.toLowerCase()));
      }
      return answer(
        json(429, { success: false, message: 'Too many requests' }, { 'retry-after': String(1 + Math.floor(this.#random() * 5)) }),
        '429',
      );
    }
    if (this.#chance(f.bare409)) {
      // A proxy's conflict page: the service never saw the push (nothing committed).
      this.#hit('bare 409 (proxy)');
      return answer(
        new Response('<html><body>409 Conflict</body></html>', { status: 409, headers: { 'content-type': 'text/html' } }),
        'bare 409',
      );
    }
    if (this.refuses(payload.amount)) {
      this.#hit('422 refusal');
      return answer(
        json(422, {
          success: false,
          code: 'E_VALIDATION_ERROR',
          message: 'Invalid',
          errors: [{ field: 'amount', rule: 'max', message: 'too large' }],
        }),
        '422',
      );
    }
    const lag = this.#random() * f.maxLagMs;
    // The commit lands within the window; reads see it up to `lag` later.
    const room = Math.max(0, latestEffect - sim.now - 1);
    const late = this.#chance(f.lateCommit);
    if (late) this.#hit('commit at the window edge');
    const commitMs = late ? room : Math.min(room, this.#random() * f.maxCommitMs);
    sim.at(sim.now + commitMs, undefined, `${id} commits`, () => {
      const existing = this.holding(referenceId);
      // A reference it has forgotten (past `memoryMs`) is created again.
      const remembered = existing.filter((collection) => f.memoryMs === undefined || sim.now - collection.committedAt < f.memoryMs);
      if (f.dedupe && existing.length > remembered.length) this.#hit('reference forgotten by the service');
      if (f.dedupe && remembered.length > 0) {
        this.#hit('duplicate refused');
        return answer(
          f.duplicateAs422
            ? json(422, {
                success: false,
                code: 'E_VALIDATION_ERROR',
                errors: [{ field: 'referenceId', rule: 'unique', message: 'exists' }],
              })
            : json(409, { success: false, code: 'E_DUPLICATE', message: 'Reference exists' }),
          'duplicate',
        );
      }
      const collection: Collection = {
        id: this.collections.length + 1,
        referenceId,
        by: id,
        // Reads see it only after the lag.
        committedAt: sim.now + lag,
        settlesAt: sim.now + lag + 1_000 + this.#random() * f.maxSettleMs,
        outcome: this.#random() < 0.7 ? 'successful' : 'failed',
      };
      const reversedAt = this.reversalAt(collection.settlesAt);
      if (reversedAt !== undefined) Object.assign(collection, { reversedAt });
      this.collections.push(collection);
      this.#byReference.set(referenceId.toLowerCase(), [...existing, collection]);
      sim.log(`service: COMMIT #${collection.id} ${referenceId.slice(0, 8)} by ${id} → ${collection.outcome}`);
      this.onCreate(collection);
      // A duplicating proxy delivers the committed push again (the copy must be refused by reference).
      if (f.dedupe && this.#chance(f.duplicate)) {
        this.#hit('duplicate delivery');
        sim.at(sim.now + this.#latency(), undefined, `${id}(dup) arrives`, () =>
          this.#push(payload, `${id}(dup)`, latestEffect, () => true),
        );
      }
      if (this.#chance(f.dropAfterCommit)) return this.#hit('answer lost after commit');
      if (this.#chance(f.failAfterCommit)) {
        this.#hit('503 after commit');
        return answer(json(503, { success: false, message: 'Service unavailable' }), '503 after commit');
      }
      if (this.#chance(f.garbleAfterCommit)) {
        this.#hit('unreadable 2xx');
        return answer(new Response('<html>ok</html>', { status: 202, headers: { 'content-type': 'text/html' } }), '202 unreadable');
      }
      return answer(json(202, { success: true, data: { referenceId, status: 'pending' } }), '202');
    });
    return true;
  }

  #status(proc: Proc, referenceId: string, answer: (r: Response, what: string, then?: () => void) => true): boolean {
    const f = this.faults;
    const sim = this.#sim;
    if (this.#chance(f.statusDrop)) return this.#hit('status answer lost');
    if (this.#chance(f.statusFail)) return answer(json(503, { success: false, message: 'Service unavailable' }), '503');
    if (this.#chance(f.statusRateLimit)) {
      this.#hit('429 on status');
      return answer(
        json(429, { success: false, message: 'Slow down' }, { 'retry-after': String(1 + Math.floor(this.#random() * 3)) }),
        '429',
      );
    }
    if (this.#chance(f.bare404)) {
      // A proxy in front of the service answers for it for a while: a bare 404, which proves nothing.
      this.#hit('bare 404 (proxy)');
      this.lastStatus.set(`${proc.id}:${referenceId.toLowerCase()}`, 'bare 404');
      return answer(new Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain' } }), 'bare 404');
    }
    const visible = this.holding(referenceId).find((collection) => collection.committedAt <= sim.now);
    this.lastStatus.set(`${proc.id}:${referenceId.toLowerCase()}`, visible === undefined ? '404' : 'found');
    if (visible === undefined) {
      const pauseMs = this.pauseAfterNotFound(proc, referenceId.toLowerCase());
      if (pauseMs <= 0) return answer(json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' }), '404');
      // The answer reaches the process, which then stops before its next step (the journal read after the 404).
      return answer(json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' }), '404', () => {
        sim.pause(proc, Math.max(proc.pausedUntil, sim.now + pauseMs), ' after a 404,');
        this.pausedAfterNotFound.add(`${proc.id}:${referenceId.toLowerCase()}`);
      });
    }
    if (this.pausedAfterNotFound.delete(`${proc.id}:${referenceId.toLowerCase()}`)) this.#hit('found after a paused 404');
    const settled = visible.settlesAt <= sim.now;
    const outcome = outcomeAt(visible, sim.now);
    if (settled && outcome !== visible.outcome) this.#hit('reversed outcome answered');
    const word = settled ? this.#settledWord(outcome) : f.unknownPendingWords && this.#random() < 0.3 ? 'queued' : 'pending';
    return answer(
      json(200, {
        success: true,
        data: {
          referenceId: visible.referenceId,
          statusText: word,
          transactionCode: settled && outcome === 'successful' ? 'MP123' : null,
          reason: settled ? outcome : null,
        },
      }),
      word,
    );
  }

  #settledWord(outcome: 'successful' | 'failed'): string {
    if (!this.faults.oddWords) return outcome;
    const words = outcome === 'successful' ? ['SUCCESSFUL', ' completed ', 'Success', 'successful'] : ['Failed', ' declined', 'FAILED'];
    return words[Math.floor(this.#random() * words.length)] as string;
  }
}
