/**
 * The process side of the key's shared budget (`requestsPerSecond` on a `CollectionsClient` with a journal): one
 * {@link KeyBudget} per journal and key digest in a process, shared by every client there. It spends its share
 * locally (no database round trip per request) in a sliding window, creates first, and renews the share with the
 * journal's `takeBudget` every couple of seconds (the arithmetic is `allocateBudget`'s, in src/journal/budget.ts).
 *
 * Failing safe: a share is spent only until a window before the journal stops counting it (measured from before the
 * renewal was sent), so a slow or restarting database means fewer requests, never more: past that, requests wait.
 *
 * @module
 */
import { TimeoutError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { monotonicNow } from '../core/monotonic.js';
import { boundedWait } from '../core/wait.js';
import type { BudgetGrant } from '../journal/budget.js';
import type { PaymentJournal } from '../journal/journal.js';

/** What a request is: a till's create (`'create'`, served first) or anything else. */
export type BudgetLane = 'create' | 'other';

/** The shared budget's declared limit: requests per second, or `'adaptive'`. */
export type SharedLimit = number | 'adaptive';

/**
 * A spent token stays spent this long after its request's answer (or failure): the 1 s window, plus a little for the
 * service's clock (whole milliseconds). Counted from the answer, not from the take: the request arrived somewhere
 * between the two, so however long it took to leave (a first connection, a busy event loop), no 1 s window at the
 * service can hold more arrivals than the share.
 */
export const SHARED_WINDOW_MS = 1_020;
/**
 * How long after its failure a request that got no answer (cut by its time limit, an abort or a reset) is assumed to
 * reach the service at the latest: its token stays spent a window after that. A one-way delay longer than this, after
 * the SDK gave the request up, is outside what the shared budget holds (docs/internals/assumptions-rationale.md).
 */
export const CUT_REQUEST_ARRIVAL_MS = 2_000;
/**
 * How often a holder renews its share at most; the journal's lease is shorter than the holder's by this much, so the
 * others learn of a dead holder's share within one lease period.
 */
export const RENEW_MS = 2_000;
/** The shared budget's lease by default: a process that dies leaves its share to the others within it. */
export const DEFAULT_BUDGET_LEASE_MS = 10_000;
/** The shortest lease accepted: a renewal, a window and a second of slack. */
export const MIN_BUDGET_LEASE_MS = 5_000;
/**
 * Tokens of the key every holder of this process leaves free, while it sends no creates, for a till that holds none
 * yet (`standingReserve` of the journal's renewal): a till's first create takes its token at its first renewal.
 */
export const STANDING_CREATE_RESERVE = 1;
/** While a create was sent this recently, re-checks leave one token of each window to creates. */
const CREATES_RECENT_MS = 10_000;
/** The shortest pause between two renewals asked for early (no share, a 429). */
const EARLY_RENEW_GAP_MS = 250;
/**
 * The pause before asking again for tokens others gave back: the journal lets them cool a window of time measured by
 * holders' monotonic clocks (less 0.1 % for their drift), so a little more than a window.
 */
const COOLED_RENEW_MS = 1_025; // SHARED_WINDOW_MS × 1.002, rounded up, + 2
/** How much more than it used a process whose requests had to wait asks for at its next renewal. */
const GROWTH = 2;
/** A 429 cuts the holder's own share at once by this factor (before the journal hears of it). */
const LOCAL_CUT = 0.8;

interface Waiter {
  readonly lane: BudgetLane;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  readonly detach: () => void;
}

/** One key's share in this process, on one journal. */
export class KeyBudget {
  /** This holder's id in the journal: one per process, journal and key. */
  readonly holder: string = globalThis.crypto.randomUUID();
  readonly #journal: PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>;
  readonly #key: string;
  readonly #leaseMs: number;
  /**
   * The steady renewal period: {@link RENEW_MS}, or less when the lease is short, so that a share renewed on time never
   * lapses locally (its validity, the journal's lease less a window, spans two periods: one slow renewal is absorbed).
   */
  readonly #renewEveryMs: number;
  readonly #logger: LevelLogger;
  #limit: SharedLimit;
  /** Tokens per window this process may spend (0 until the journal grants some). */
  #share = 0;
  /**
   * Tokens per window the journal counts for this process (its last grant): at least `#share`, more while tokens it
   * stopped spending may still arrive at the service (it gives them back once their requests were answered).
   */
  #held = 0;
  #target = 0;
  #learnt = 0;
  /** How many holders shared the key at the last grant. */
  #holders = 0;
  /** Local clock: the share may be spent until then (a window before the journal stops counting it). */
  #validUntil = Number.NEGATIVE_INFINITY;
  /** When each token of the current window was spent (its request answered or failed), oldest first. */
  readonly #spent: number[] = [];
  /** Tokens taken whose request has not been answered yet: spent until then, and a window after. */
  #inFlight = 0;
  readonly #creates: Waiter[] = [];
  readonly #others: Waiter[] = [];
  #lastCreateAt = Number.NEGATIVE_INFINITY;
  #lastTakeAt = Number.NEGATIVE_INFINITY;
  /** Since the last renewal: the most tokens in one window, whether a request had to wait, the service's answers. */
  #peak = 0;
  /** Requests that asked for a token since the last renewal began (granted or not), and when it began. */
  #asked = 0;
  #periodStart = Number.NEGATIVE_INFINITY;
  #saturated = false;
  #accepted = 0;
  #rateLimited = 0;
  /** Set by a local cut during a renewal in flight: its answer must not undo the cut. */
  #cutSinceRenewal = false;
  /** The demand sent with the last renewal. */
  #wanted = 0;
  #renewing: Promise<void> | undefined;
  #lastRenewAt = Number.NEGATIVE_INFINITY;
  /** The journal's event number of the last renewal answered, and when (monotonic) its answer came: `since`. */
  #answeredEvent: number | undefined;
  #answeredAt = 0;
  /** Renewals sent: each carries its number, so one given up and delivered late changes nothing. */
  #renewals = 0;
  #renewTimer: ReturnType<typeof setTimeout> | undefined;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;
  #drainAt = Number.POSITIVE_INFINITY;
  #failing = false;

  constructor(
    journal: PaymentJournal & Required<Pick<PaymentJournal, 'takeBudget'>>,
    key: string,
    limit: SharedLimit,
    leaseMs: number,
    logger: LevelLogger,
  ) {
    this.#journal = journal;
    this.#key = key;
    this.#limit = limit;
    this.#leaseMs = leaseMs;
    this.#renewEveryMs = Math.min(RENEW_MS, Math.floor((leaseMs - RENEW_MS - SHARED_WINDOW_MS) / 2));
    this.#logger = logger;
  }

  /** The share this process may spend now, its fair share and the key's limit (the learnt one with `'adaptive'`). */
  get state(): { share: number; target: number; limit: number } {
    return { share: this.#currentShare(monotonicNow()), target: this.#target, limit: this.#learnt };
  }

  /** Another client of this process declares a limit on the same key: the stricter holds (`'adaptive'` under a number). */
  declare(limit: SharedLimit): boolean {
    if (limit === this.#limit) return true;
    if (this.#limit === 'adaptive') this.#limit = limit;
    else if (limit !== 'adaptive') this.#limit = Math.min(this.#limit, limit);
    return false;
  }

  /**
   * Resolves when this request may leave: a token of the share is spent. Creates are served before every other
   * waiting request. The wait ends at the abort of `signal` (its reason) and at `deadline` (a {@link TimeoutError}).
   */
  take(lane: BudgetLane, signal?: AbortSignal, deadline?: number): Promise<void> {
    const now = monotonicNow();
    this.#lastTakeAt = now;
    this.#asked++;
    if (lane === 'create') this.#lastCreateAt = now;
    const queueFree = lane === 'create' ? this.#creates.length === 0 : this.#creates.length === 0 && this.#others.length === 0;
    if (queueFree && this.#tryTake(lane, now)) {
      this.#keepRenewing(now);
      return Promise.resolve();
    }
    signal?.throwIfAborted();
    this.#saturated = true;
    return new Promise<void>((resolve, reject) => {
      const queue = lane === 'create' ? this.#creates : this.#others;
      const leave = (reason: unknown) => {
        waiter.detach();
        const index = queue.indexOf(waiter);
        if (index !== -1) queue.splice(index, 1);
        reject(reason);
      };
      const onAbort = () => leave(signal?.reason);
      const limitMs = deadline === undefined ? undefined : Math.max(0, deadline - now);
      const timer = limitMs === undefined ? undefined : setTimeout(() => leave(new TimeoutError(limitMs)), limitMs);
      const waiter: Waiter = {
        lane,
        resolve,
        reject,
        detach: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
      this.#keepRenewing(now);
      this.#drain();
    });
  }

  /**
   * Called once for each token taken, when its request was answered (`status`) or failed (0): the token stays spent a
   * window from now. A 429 cuts this share at once and tells the journal soon.
   */
  observe(status: number): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    // A request that failed without an answer (a timeout, an abort, a reset) may have left and still be on its way:
    // its token stays spent for as long as such a request is assumed to reach the service.
    this.#spent.push(status === 0 ? monotonicNow() + CUT_REQUEST_ARRIVAL_MS : monotonicNow());
    if (this.#spent.length > 1 && (this.#spent.at(-2) as number) > (this.#spent.at(-1) as number)) this.#spent.sort((a, b) => a - b);
    if (this.#creates.length + this.#others.length > 0) this.#drain();
    if (status !== 429) {
      if (status !== 0) this.#accepted++;
      return;
    }
    this.#rateLimited++;
    if (this.#limit === 'adaptive') {
      this.#share = Math.floor(this.#share * LOCAL_CUT);
      this.#cutSinceRenewal = true;
    }
    this.#renewSoon();
  }

  #currentShare(now: number): number {
    return now < this.#validUntil ? this.#share : 0;
  }

  #tryTake(lane: BudgetLane, now: number): boolean {
    const spent = this.#spent;
    while (spent.length > 0 && (spent[0] as number) + SHARED_WINDOW_MS <= now) spent.shift();
    const share = this.#currentShare(now);
    // Re-checks leave a token of each window to creates while tills send: a create finds one at once.
    const reserve = lane === 'other' && share >= 3 && now - this.#lastCreateAt < CREATES_RECENT_MS ? 1 : 0;
    const used = spent.length + this.#inFlight;
    if (share - used <= reserve) return false;
    this.#inFlight++;
    if (used + 1 > this.#peak) this.#peak = used + 1;
    return true;
  }

  /** Serves waiters, creates first, then arms the timer for when the next token frees. */
  #drain(): void {
    const now = monotonicNow();
    for (;;) {
      const waiter = this.#creates[0] ?? this.#others[0];
      if (waiter === undefined || !this.#tryTake(waiter.lane, now)) break;
      (waiter.lane === 'create' ? this.#creates : this.#others).shift();
      waiter.detach();
      waiter.resolve();
    }
    const waiting = this.#creates.length + this.#others.length;
    if (waiting === 0) return;
    // The next token frees when the oldest spent one leaves the window, or an answer comes (observe drains), or at
    // the next renewal (no share).
    const oldest = this.#spent[0];
    const at = oldest === undefined || this.#currentShare(now) === 0 ? now + EARLY_RENEW_GAP_MS : oldest + SHARED_WINDOW_MS;
    if (this.#currentShare(now) === 0) this.#renewSoon();
    if (this.#drainTimer !== undefined && this.#drainAt <= at) return;
    clearTimeout(this.#drainTimer);
    this.#drainAt = at;
    this.#drainTimer = setTimeout(this.#onDrainTimer, Math.max(1, at - now));
  }

  readonly #onDrainTimer = () => {
    this.#drainTimer = undefined;
    this.#drainAt = Number.POSITIVE_INFINITY;
    this.#drain();
  };

  /** Keeps the renewals going while the budget is in use; an idle process lets its share lapse. */
  #keepRenewing(now: number): void {
    if (this.#renewTimer !== undefined || this.#renewing !== undefined) return;
    const due = this.#currentShare(now) === 0 ? 0 : Math.max(0, this.#lastRenewAt + this.#renewEveryMs - now);
    this.#armRenewal(due);
  }

  #armRenewal(delayMs: number): void {
    clearTimeout(this.#renewTimer);
    this.#renewTimer = setTimeout(this.#onRenewTimer, Math.max(0, delayMs));
    // Renewals alone never keep a process alive (a waiting request keeps its own timer).
    const timer = this.#renewTimer as { unref?: () => void };
    if (typeof timer.unref === 'function') timer.unref();
  }

  readonly #onRenewTimer = () => {
    this.#renewTimer = undefined;
    void this.#renew();
  };

  #renewSoon(): void {
    if (this.#renewing !== undefined) return;
    const due = Math.max(0, this.#lastRenewAt + EARLY_RENEW_GAP_MS - monotonicNow());
    this.#armRenewal(due);
  }

  #renew(): Promise<void> {
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
      const now = monotonicNow();
      const waiting = this.#creates.length + this.#others.length > 0;
      if (waiting && this.#currentShare(now) === 0) this.#renewSoon();
      // A request in flight keeps the share renewed however long it takes: its token is spent until a window after it.
      else if (waiting || this.#inFlight > 0 || now - this.#lastTakeAt < this.#leaseMs) {
        // Holding tokens it no longer spends (above its fair share, or their requests were in flight): give them back
        // once they were unused for a window (free at once for the others then, no cooling). Below its fair share while
        // waiting, or growing (its whole demand granted, still waiting): ask again once the tokens others gave back
        // have cooled; from a fair share of 8 on, one token below waits for the steady renewal (the fair shares move
        // by one whenever a till's demand does, and asking early for each cost more round trips than it is worth).
        const slack = this.#target >= 8 ? 1 : 0;
        if (this.#held > this.#share)
          this.#armRenewal(Math.max(this.#lastRenewAt + EARLY_RENEW_GAP_MS - now, this.#quietIn(now, this.#share)));
        else if (waiting && (this.#share < this.#target - slack || this.#target >= this.#wanted)) this.#armRenewal(COOLED_RENEW_MS);
        // Steady: a period after the last one was sent (not answered), so a slow journal does not stretch the period.
        else this.#armRenewal(this.#lastRenewAt + this.#renewEveryMs - now);
      }
      this.#drain();
    });
    return this.#renewing;
  }

  async #renewOnce(): Promise<void> {
    const sentAt = monotonicNow();
    this.#lastRenewAt = sentAt;
    // What it spends from now: no more than its fair share, and no more than it uses when it never had to wait. From
    // the share last granted (less a 429's cut), even when it lapsed here: the journal counts it until its own lease
    // ends, a window later, and grants only what it still counts. Keeping only what was valid here gave the whole
    // share back whenever a renewal came late, and left the holder without tokens for a window while it cooled.
    let keep = Math.min(this.#share, this.#target);
    if (!this.#saturated) keep = Math.min(keep, this.#headroom());
    this.#share = keep;
    // What the journal keeps counting: never less than the tokens whose requests may still arrive (in flight, or cut
    // without an answer): given back, they would cool from now while their requests may arrive later. A token whose
    // request was answered may be given back (it arrived before its answer, so a window from now is past its window).
    const counted = Math.max(keep, Math.min(this.#held, this.#mayStillArrive(sentAt)));
    const report = { accepted: this.#accepted, rateLimited: this.#rateLimited, saturated: this.#saturated };
    // Demand: its headroom (what it used plus a quarter and one, a till plus one: its next create finds a token), or,
    // when requests had to wait, twice what it used (and at least what waits now): a process grows while it can use
    // more, but a till whose one create waited does not claim half the key.
    const waiting = this.#creates.length + this.#others.length;
    const headroom = this.#headroom();
    // And at least what was asked for per window, plus headroom: a till's creates come at their own pace whatever its
    // share, so it asks at once for what they need instead of doubling from a token (each doubling waits for others
    // to give back and for their tokens to cool: a till joining a busy fleet waited seconds for its creates).
    const askedPerWindow = Math.ceil((this.#asked * SHARED_WINDOW_MS) / Math.max(SHARED_WINDOW_MS, sentAt - this.#periodStart));
    this.#asked = 0;
    this.#periodStart = sentAt;
    let want = this.#saturated ? Math.max(1, GROWTH * this.#peak, this.#peak + waiting, Math.ceil(askedPerWindow * 1.25) + 1) : headroom;
    if (this.#saturated && this.#holders > 0 && sentAt - this.#lastCreateAt >= CREATES_RECENT_MS)
      want = Math.max(want, Math.ceil(this.#learnt / this.#holders));
    this.#wanted = want;
    this.#accepted = 0;
    this.#rateLimited = 0;
    this.#peak = this.#spentInWindow(sentAt);
    this.#saturated = this.#creates.length + this.#others.length > 0;
    this.#cutSinceRenewal = false;
    const grantedFor = this.#leaseMs - RENEW_MS;
    let grant: BudgetGrant;
    try {
      // A renewal the database never answers (a connection that died without a reset) would otherwise hold every
      // later renewal back for good, and with them every request of the key in this process. By then the share it
      // renews has lapsed here anyway; a late answer is dropped (the journal counts what it granted until the lease
      // ends: fewer requests, never more). The timer keeps no process alive by itself.
      grant = await boundedWait(
        this.#journal.takeBudget({
          key: this.#key,
          holder: this.holder,
          limit: this.#limit,
          keep: counted,
          want,
          leaseMs: grantedFor,
          windowMs: SHARED_WINDOW_MS,
          creates: sentAt - this.#lastCreateAt < CREATES_RECENT_MS,
          inUse: this.#spentInWindow(sentAt),
          renewal: ++this.#renewals,
          standingReserve: STANDING_CREATE_RESERVE,
          // The time this process measured since the journal's last answer (sent earlier than measured: a lower bound).
          ...(this.#answeredEvent === undefined ? {} : { since: { event: this.#answeredEvent, elapsedMs: sentAt - this.#answeredAt } }),
          ...report,
        }),
        undefined,
        grantedFor,
        () => new Error(`the journal did not answer a renewal within ${grantedFor} ms`),
        false,
      );
    } catch (error) {
      // Not counted by the journal as reported: the next renewal tells it again.
      this.#accepted += report.accepted;
      this.#rateLimited += report.rateLimited;
      if (!this.#failing) {
        this.#failing = true;
        this.#logger.warn('shared rate budget: the journal could not renew this process share; spending what is left, then waiting', {
          reason: error instanceof Error ? error.message : String(error),
        });
      }
      return;
    }
    // A store of an earlier build answers without an event number: then no `since` (its leases run on its clock).
    this.#answeredEvent = Number.isSafeInteger(grant.event) ? grant.event : undefined;
    this.#answeredAt = monotonicNow();
    if (this.#failing) {
      this.#failing = false;
      this.#logger.info('shared rate budget: the journal renews this process share again');
    }
    // It spends what it kept plus what it was given; the rest of the grant is counted until it is given back. A 429
    // while the renewal was in flight cut the share below that: the cut stands.
    // Above its fair share, it stops spending the excess at once: unused for a window, it is free for the others the
    // moment it is given back (no cooling), at the renewal armed for then.
    const spendable = Math.min(grant.share, keep + Math.max(0, grant.share - counted), grant.target);
    this.#share = this.#cutSinceRenewal ? Math.min(this.#share, spendable) : spendable;
    this.#held = grant.share;
    this.#target = grant.target;
    this.#learnt = grant.limit;
    this.#holders = grant.holders;
    this.#validUntil = sentAt + grantedFor - SHARED_WINDOW_MS;
  }

  /**
   * What a process keeps when its requests did not wait: what it used plus a quarter and one; a till (creates sent
   * recently), its busiest window and one. Every token a till keeps idle is one the workers lose, and the key already
   * keeps one free for a till that starts: a quarter more and one kept a till's 4 creates a second on 8 tokens, and
   * with that token fb1's fleet used 86–88 % of the limit (90 % goal). A create beyond waits for its till's oldest
   * token to leave the window, and its next renewal asks for twice the peak, served before the workers' equal parts.
   */
  #headroom(): number {
    return monotonicNow() - this.#lastCreateAt < CREATES_RECENT_MS ? this.#peak + 1 : Math.ceil(this.#peak * 1.25) + 1;
  }

  #mayStillArrive(now: number): number {
    let count = this.#inFlight;
    for (const at of this.#spent) if (at > now) count++;
    return count;
  }

  /**
   * How long until no more than `tokens` of this process's tokens were spent within the last window (its requests in
   * flight counted as still spending): then the tokens above them may be given back free. A window when its requests
   * in flight alone are more.
   */
  #quietIn(now: number, tokens: number): number {
    const room = tokens - this.#inFlight;
    if (room < 0) return COOLED_RENEW_MS;
    const recent = this.#spent.filter((at) => at + SHARED_WINDOW_MS > now);
    if (recent.length <= room) return 0;
    return (recent[recent.length - room - 1] as number) + SHARED_WINDOW_MS - now + 1;
  }

  #spentInWindow(now: number): number {
    let count = this.#inFlight;
    for (const at of this.#spent) if (at + SHARED_WINDOW_MS > now) count++;
    return count;
  }
}
