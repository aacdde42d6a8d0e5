/**
 * One request budget per API key, kept by the journal and shared by every process that uses the key on it.
 *
 * The budget is `limit` requests in any 1 s window. It is handed out as **shares**: each process (a *holder*) keeps
 * a whole number of tokens per window and spends them locally, with no database round trip per request. The journal
 * only decides who keeps how many, once every couple of seconds per holder, so that the shares of every live holder,
 * plus what was given back too recently to be spent again, never add up to more than the limit:
 *
 * - a holder **grows** only into tokens nobody keeps (free now), so the sum never exceeds the limit;
 * - a holder **shrinks** by itself, before it asks (it stops spending the tokens it gives back when it sends the
 *   request), and the journal keeps what it gave back *cooling* for one window, since that window may still hold
 *   its spending; tokens it had not spent within the window before it asked ({@link BudgetRequest.inUse}) are free
 *   at once;
 * - a holder that stops asking (a process that died) keeps its share until its lease runs out; it stopped spending
 *   one window before that (its local lease is shorter by a window), so the share is free at once then. Heard again
 *   after that (its renewals failed), the tokens it says may still be spent (`keep`, at most `inUse`: requests on
 *   their way) count for it again from the free ones, before anyone grows into them.
 *
 * **Time is what the holders measured, never the journal's clock.** A lease runs out, and given-back tokens cool, only
 * once holders' monotonic clocks have measured that much time since (each renewal says how long its holder waited
 * since the journal answered one of its earlier renewals: {@link BudgetRequest.since}). Those measurements, chained
 * after the event that started a lease or a cooling, are a lower bound of the time that truly passed, so a step of the
 * journal's clock (forward or back) never ends a lease early. The journal's clock only paces `'adaptive'`.
 *
 * Who keeps what: the fair shares of the live holders' demands (water-filling: a holder that wants less than an equal
 * part gets what it wants, the rest is split among the others). A holder above its fair share gives the excess back at
 * its next renewal; the others take it once it has cooled. While a holder that sends creates (a till) lives, the
 * others never grow into a tenth of the limit that tills do not keep yet ({@link createReserve}): a till's
 * creates find tokens at its next renewal. And on every key from 5/s, whether a till ever used it or not, they leave
 * one token free for a till that starts ({@link BudgetRequest.standingReserve}): its first create finds it at its
 * first renewal.
 *
 * With `limit: 'adaptive'` the journal also keeps the rate: raised while holders report they could send more and the
 * service accepts, cut on 429s (slow start, then additive increase towards the rate the last 429s came at, then a
 * slow probe past it; a multiplicative cut on 429s), once for the whole fleet.
 *
 * This file is the one place of that arithmetic: every store only loads and saves {@link BudgetState} atomically
 * around {@link allocateBudget}.
 *
 * @module
 */

/** What a holder sends to {@link PaymentJournal.takeBudget}. */
export interface BudgetRequest {
  /** The key's budget: a digest of the API key (never the key). */
  readonly key: string;
  /** Who asks: one id per process and journal (unique across machines). */
  readonly holder: string;
  /** The holder's declared budget: requests per second, or `'adaptive'` (the journal learns it). */
  readonly limit: number | 'adaptive';
  /**
   * How many tokens per window the holder keeps from now on (at most what it held): it has stopped spending more. A
   * holder whose lease ran out keeps them only from the free tokens, and no more than {@link BudgetRequest.inUse}.
   */
  readonly keep: number;
  /** How many tokens per window the holder could use (its demand); larger than the limit means "as many as possible". */
  readonly want: number;
  /** How long the share counts from the journal's now unless renewed, in ms (the holder stops spending a window sooner). */
  readonly leaseMs: number;
  /** The window a spent token stays spent, in ms (at least 1 000): how long given-back tokens cool. */
  readonly windowMs: number;
  /** Requests the service answered without 429 since the holder's last report. */
  readonly accepted: number;
  /** Requests the service answered 429 since the holder's last report. */
  readonly rateLimited: number;
  /** True when the holder's requests waited for tokens since its last report (it could send more). */
  readonly saturated: boolean;
  /** True when the holder leaves: it keeps nothing (its tokens cool, then are free). */
  readonly release?: boolean;
  /**
   * True when the holder sent creates recently (a till): while such a holder lives, the others never grow into the
   * last {@link createReserve} tokens that creating holders do not already keep.
   */
  readonly creates?: boolean;
  /**
   * How many of its tokens may have been spent within the last window when it sent this request: its requests in
   * flight, answered less than a window ago, or cut without an answer and maybe still on their way. Of the tokens it
   * gives back, only those it may have spent that recently cool (`inUse` less `keep`); the others have been unused for a
   * whole window by its own monotonic clock before the journal saw this request, so they are free at once. Absent:
   * every token given back cools.
   */
  readonly inUse?: number | undefined;
  /**
   * How long this holder measured on its own monotonic clock since the journal answered one of its renewals: `event` is
   * that answer's {@link BudgetGrant.event}, `elapsedMs` the time from receiving the answer to sending this request (a
   * lower bound of the time between the two renewals at the journal). Absent on a holder's first renewal: then this
   * renewal lets no lease or cooling run.
   */
  readonly since?:
    | {
        /** The {@link BudgetGrant.event} of the answer it measured from. */
        readonly event: number;
        /** Milliseconds from receiving that answer to sending this request, on the holder's monotonic clock. */
        readonly elapsedMs: number;
      }
    | undefined;
  /**
   * Tokens of the key this holder leaves free for a till that holds none yet, whether a till ever used the key or
   * not (one may start at any moment): a holder that does not send creates never grows into them, and its fair share
   * is counted from the limit less them, so it gives them back when a till took them. A till that starts (or whose
   * share lapsed while it was idle) finds them at its first renewal instead of waiting for every other holder to give
   * tokens back and for them to cool. At most the limit less one. Absent: 0 (a holder of an earlier build). None below
   * 5 requests per second (see {@link createReserve}).
   */
  readonly standingReserve?: number | undefined;
  /**
   * The holder's renewal number, increasing with each renewal it sends. A renewal numbered no higher than one the
   * journal already applied for the holder changes nothing: one its holder gave up waiting for, delivered late, after
   * a later renewal (its `keep` is stale).
   */
  readonly renewal?: number | undefined;
}

/** What {@link PaymentJournal.takeBudget} answers. */
export interface BudgetGrant {
  /** Tokens per window the holder may spend now (its `keep` plus what it was given). */
  readonly share: number;
  /** Its fair share: it gives back whatever it keeps above this at its next renewal. */
  readonly target: number;
  /** The key's limit now (the learnt one with `'adaptive'`), in requests per second. */
  readonly limit: number;
  /** How many holders share the key now. */
  readonly holders: number;
  /** The key's event number of this renewal: the holder names it in its next request's {@link BudgetRequest.since}. */
  readonly event: number;
}

/**
 * One holder as the journal keeps it. Its lease and its cooling run in measured time: `…Elapsed` is a lower bound of
 * the time since the event `…From` that started them, from holders' monotonic clocks. A report measured from event k
 * adds its measure to what was known at k (`…Marks`, the bound at each recent event), so measures of several holders
 * chain exactly however their renewals interleave.
 */
export interface BudgetHolder {
  /** Tokens per window it may spend. */
  share: number;
  /** Tokens per window it could use (its last report). */
  want: number;
  /** The limit it declared: requests per second, or `'adaptive'`. */
  declared: number | 'adaptive';
  /** How long its share counts from its last renewal, in measured ms (its `leaseMs`). */
  leaseMs: number;
  /** Measured ms since its last renewal: its share stops counting once this reaches `leaseMs`. */
  leaseElapsed: number;
  /** The event of its last renewal, from which `leaseElapsed` is measured. */
  leaseFrom: number;
  /** `[event, leaseElapsed then]` for the most recent events (oldest first). */
  leaseMarks?: [number, number][];
  /** Tokens it gave back that may still be spent in the current window. */
  cooling: number;
  /** How long `cooling` counts from when it was given back, in measured ms (the holder's `windowMs`). */
  coolMs: number;
  /** Measured ms since it last gave tokens back: `cooling` stops counting once this reaches `coolMs`. */
  coolElapsed: number;
  /** The event at which it last gave tokens back, from which `coolElapsed` is measured. */
  coolFrom: number;
  /** `[event, coolElapsed then]` for the most recent events (oldest first). */
  coolMarks?: [number, number][];
  /** It sent creates recently (its last report). */
  creates?: boolean;
  /** The number of its last renewal applied ({@link BudgetRequest.renewal}). */
  renewal?: number;
}

/** The state of one key's budget, stored as JSON by every store. */
export interface BudgetState {
  /** The learnt rate (`'adaptive'`), requests per second. */
  rate: number;
  /** The rate the last 429s came at (`'adaptive'`); absent until the first. */
  ceiling?: number;
  /** The learnt rate before its last raise in the slow start (`'adaptive'`): it bound two windows without a 429. */
  raisedFrom?: number;
  /** Since when (epoch ms) the learnt rate has bound: every token but the tills' reserve handed out (`'adaptive'`). */
  bindingSince?: number;
  /** When the learnt rate last rose (epoch ms). */
  raisedAt: number;
  /** When the learnt rate was last cut (epoch ms). */
  cutAt: number;
  /** The number of the last renewal (every renewal of the key is one event). */
  event: number;
  /**
   * A holder has sent creates on this key (a till). Not read here (the standing reserve is kept on every key); still
   * written for holders of earlier releases sharing the journal, which leave it free only once this is set.
   */
  tillsSeen?: boolean;
  /** Every holder by id, live or with tokens still cooling. */
  holders: Record<string, BudgetHolder>;
}

/** What {@link allocateBudget} returns: the state to save and the holder's grant. */
export interface BudgetAllocation {
  /** The key's new state: save it in the same atomic step as the read. */
  readonly state: BudgetState;
  /** What the holder may spend now. */
  readonly grant: BudgetGrant;
}

/** The learnt rate a key starts from with `'adaptive'`. */
export const ADAPTIVE_START_RATE = 4;
/** The climb per second before the first 429 (slow start). */
const ADAPTIVE_SLOW_START = 1.5;
/** The cut on 429s. */
const ADAPTIVE_CUT = 0.8;
/** Below this share of the last 429s' rate the rate climbs fast; above it, slowly. */
const ADAPTIVE_NEAR = 0.9;
/** The slow climb past `ADAPTIVE_NEAR` of the ceiling, in requests per second per second. */
const ADAPTIVE_PROBE = 0.2;
/** The slowest climb, over the last request per second below the ceiling (where the last 429s came). */
const ADAPTIVE_AT_CEILING = 0.05;
/** The climb once past the ceiling without a 429 (the limit may have moved). */
const ADAPTIVE_PAST_CEILING = 0.5;

/** Checks a request's fields (a store may receive one from code that is not the SDK's). */
export function budgetRequestProblem(request: BudgetRequest): string | undefined {
  if (typeof request?.key !== 'string' || request.key === '') return 'key must be a non-empty string';
  if (typeof request.holder !== 'string' || request.holder === '') return 'holder must be a non-empty string';
  if (request.limit !== 'adaptive' && !(Number.isSafeInteger(request.limit) && request.limit >= 1)) return 'limit must be ≥ 1 or adaptive';
  for (const field of ['keep', 'want', 'accepted', 'rateLimited'] as const) {
    if (!(Number.isFinite(request[field]) && request[field] >= 0)) return `${field} must be a number ≥ 0`;
  }
  if (!(Number.isFinite(request.leaseMs) && request.leaseMs > request.windowMs)) return 'leaseMs must be longer than windowMs';
  if (!(Number.isFinite(request.windowMs) && request.windowMs >= 1_000)) return 'windowMs must be ≥ 1000';
  if (request.creates !== undefined && typeof request.creates !== 'boolean') return 'creates must be a boolean';
  if (request.inUse !== undefined && !(Number.isFinite(request.inUse) && request.inUse >= 0)) return 'inUse must be a number ≥ 0';
  if (
    request.since !== undefined &&
    !(
      Number.isSafeInteger(request.since?.event) &&
      request.since.event >= 0 &&
      Number.isFinite(request.since.elapsedMs) &&
      request.since.elapsedMs >= 0
    )
  )
    return 'since must be { event: a whole number ≥ 0, elapsedMs: a number ≥ 0 }';
  if (request.standingReserve !== undefined && !(Number.isSafeInteger(request.standingReserve) && request.standingReserve >= 0))
    return 'standingReserve must be a whole number ≥ 0';
  if (request.renewal !== undefined && !(Number.isSafeInteger(request.renewal) && request.renewal >= 0))
    return 'renewal must be a whole number ≥ 0';
  return undefined;
}

/** A new key's state. */
export function newBudgetState(now: number): BudgetState {
  return { rate: ADAPTIVE_START_RATE, raisedAt: now, cutAt: Number.NEGATIVE_INFINITY, holders: {}, event: 0 };
}

/**
 * A measurement counts for this much less than it says: monotonic clocks run up to 100 ppm apart, and the chain must
 * stay a lower bound of the time that passed.
 */
const MEASURE_MARGIN = 1e-3;

function isLive(holder: BudgetHolder): boolean {
  return holder.leaseElapsed < holder.leaseMs;
}

function isCooling(holder: BudgetHolder): boolean {
  return holder.cooling > 0 && holder.coolElapsed < holder.coolMs;
}

/** How many recent events a chain keeps its bound for: a report is measured from its holder's last answer, a few back. */
const MARKS = 16;

/** The bound a chain had at `event`: at its latest mark not after it (0 when none is kept: still a lower bound). */
function boundAt(marks: readonly [number, number][] | undefined, event: number): number {
  let bound = 0;
  for (const [at, elapsed] of marks ?? []) {
    if (at > event) break;
    bound = elapsed;
  }
  return bound;
}

/**
 * Lets a measured interval run for every lease and cooling that began no later than where it was measured from
 * (`since.event`): what was known of them then, plus the measure. Marks this event's bounds for later reports.
 */
function runMeasuredTime(state: BudgetState, since: BudgetRequest['since'], event: number): void {
  // A measure from an event not reached yet is no measure; one of no time changes no bound.
  const measure =
    since !== undefined && since.event < event ? { from: since.event, ms: since.elapsedMs * (1 - MEASURE_MARGIN) } : undefined;
  for (const holder of Object.values(state.holders)) {
    if (isLive(holder)) {
      if (measure !== undefined && measure.from >= holder.leaseFrom)
        holder.leaseElapsed = Math.max(holder.leaseElapsed, boundAt(holder.leaseMarks, measure.from) + measure.ms);
      holder.leaseMarks = [...(holder.leaseMarks ?? []), [event, holder.leaseElapsed] as [number, number]].slice(-MARKS);
    } else delete holder.leaseMarks;
    if (isCooling(holder)) {
      if (measure !== undefined && measure.from >= holder.coolFrom)
        holder.coolElapsed = Math.max(holder.coolElapsed, boundAt(holder.coolMarks, measure.from) + measure.ms);
      holder.coolMarks = [...(holder.coolMarks ?? []), [event, holder.coolElapsed] as [number, number]].slice(-MARKS);
    } else delete holder.coolMarks;
  }
}

/**
 * A holder stored by a build before leases ran in measured time (`expiresAt`/`coolUntil` by the journal's clock;
 * every later build writes `leaseMs` and `coolMs` together): its lease and its cooling count in full again from this
 * event (no marks: a chain from this event counts from 0).
 */
function fromEarlierBuild(holder: BudgetHolder, event: number): BudgetHolder {
  if (typeof holder.leaseMs === 'number') return holder;
  return { ...holder, leaseMs: 8_000, leaseElapsed: 0, leaseFrom: event, coolMs: 1_020, coolElapsed: 0, coolFrom: event };
}

/**
 * One holder's renewal: gives back what it no longer keeps (cooling for one window), raises or cuts the learnt rate,
 * and grows the holder towards its fair share from free tokens. Leases and cooling run on the request's measured
 * time ({@link BudgetRequest.since}); `now`, the journal's clock, paces only `'adaptive'` and the fair turns. Returns
 * the new state (the one given is not changed) and the holder's grant.
 */
export function allocateBudget(previous: BudgetState | undefined, request: BudgetRequest, now: number): BudgetAllocation {
  const applied = previous?.holders[request.holder]?.renewal;
  if (previous !== undefined && request.renewal !== undefined && applied !== undefined && request.renewal <= applied) {
    // A renewal its holder gave up on, arriving after a later one: applying its `keep` would take back what the later
    // one granted while the holder spends it. Nothing changes; the holder no longer waits for this answer.
    return { state: previous, grant: { share: 0, target: 0, limit: 0, holders: 0, event: previous.event ?? 0 } };
  }
  const state: BudgetState = previous === undefined ? newBudgetState(now) : structuredClone(previous);
  // JSON has no -Infinity: a state read back may carry null.
  if (typeof state.cutAt !== 'number') state.cutAt = Number.NEGATIVE_INFINITY;
  const event = (typeof state.event === 'number' ? state.event : 0) + 1;
  state.event = event;
  for (const [id, holder] of Object.entries(state.holders)) state.holders[id] = fromEarlierBuild(holder, event);
  runMeasuredTime(state, request.since, event);
  for (const [id, holder] of Object.entries(state.holders)) {
    if (!isLive(holder) && !isCooling(holder)) delete state.holders[id];
  }
  const before = state.holders[request.holder];
  const lapsed = before === undefined || !isLive(before);
  const held = lapsed ? 0 : before.share;
  const keep = request.release === true ? 0 : Math.max(0, Math.min(Math.floor(request.keep), held));
  const holder: BudgetHolder = before ?? {
    share: 0,
    want: 0,
    declared: request.limit,
    leaseMs: request.leaseMs,
    leaseElapsed: 0,
    leaseFrom: event,
    cooling: 0,
    coolMs: request.windowMs,
    coolElapsed: 0,
    coolFrom: event,
  };
  if (!isCooling(holder)) holder.cooling = 0;
  // Of the tokens given back, those its holder may have spent within the last window cool; the rest are free now.
  const mayHaveSpent = request.inUse === undefined ? held - keep : Math.min(held - keep, Math.max(0, Math.ceil(request.inUse) - keep));
  if (mayHaveSpent > 0) {
    // Tokens cooling already count a whole window again from now (one measure for all of them).
    holder.cooling += mayHaveSpent;
    holder.coolMs = request.windowMs;
    holder.coolElapsed = 0;
    holder.coolFrom = event;
    holder.coolMarks = [[event, 0]];
  }
  holder.share = keep;
  holder.declared = request.limit;
  holder.want = request.release === true ? 0 : Math.max(0, Math.floor(request.want));
  holder.leaseMs = request.leaseMs;
  holder.leaseElapsed = request.release === true ? request.leaseMs : 0;
  holder.leaseFrom = event;
  holder.leaseMarks = [[event, holder.leaseElapsed]];
  holder.creates = request.creates === true && request.release !== true;
  if (request.renewal !== undefined) holder.renewal = request.renewal;
  state.holders[request.holder] = holder;

  const live = Object.entries(state.holders).filter(([, entry]) => isLive(entry));
  let declared = Number.POSITIVE_INFINITY;
  let adaptive = false;
  for (const [, entry] of live) {
    if (entry.declared === 'adaptive') adaptive = true;
    else declared = Math.min(declared, entry.declared);
  }
  if (adaptive) adapt(state, request, now, declared, handedOut(state));
  const limit = Math.max(0, Math.floor(adaptive ? Math.min(state.rate, declared) : declared === Number.POSITIVE_INFINITY ? 0 : declared));

  // A holder that sends no creates leaves the standing reserve free for a till that holds nothing yet: its fair share
  // is counted without those tokens (so it gives them back once a till took them) and it never grows into them. On
  // every key from the start: nothing tells the journal that a till will come, and the first till of a key waited for
  // the workers to give a token back (up to 2 s). Like the tills' reserve not below 5 per second (one token of four
  // would cost a quarter of the key; there, a till waits for the others' renewals).
  const standing = createReserve(limit) === 0 ? 0 : Math.max(0, Math.min(Math.floor(request.standingReserve ?? 0), limit - 1));
  if (holder.creates === true) state.tillsSeen = true;
  // (A till's own target is the same either way: the standing token is kept from the other holders' shares.)
  const targets = tillsFirst(
    limit,
    standing,
    live.map(([id, entry]) => [id, entry.want, entry.creates === true] as const),
    Math.floor(now / FAIR_TURN_MS),
  );
  // A holder that releases is not live: it has no target.
  const target = targets.get(request.holder) ?? 0;
  // While a till lives, the others leave free the part of the reserve tills do not keep yet: a till's first tokens
  // come at its next renewal, instead of after every other holder gave back its excess and it cooled (seconds).
  // The standing token stays free beyond what live tills keep (a till that starts while others sell finds it too): a
  // till that already holds tokens grows past it no more than a worker does; only a till holding none takes it.
  let reserved = holder.creates === true && holder.share === 0 ? 0 : standing;
  if (holder.creates !== true && live.some(([, entry]) => entry.creates === true)) {
    let keptByTills = 0;
    for (const [, entry] of live) if (entry.creates === true) keptByTills += entry.share;
    reserved = Math.max(reserved, createReserve(limit) - keptByTills);
  }
  // A holder whose lease ran out here (its renewals failed or came late) while its requests were still on their way
  // says so: it keeps tokens it no longer holds. Counted again from the free tokens, before anyone grows into them:
  // freed, they went to the others while those requests may still arrive (seed 2035: a request handed to fetch before
  // the lease ran out left 18 s later, its token granted to another process meanwhile).
  if (lapsed && request.release !== true) {
    const stillSpent = Math.min(
      Math.floor(request.keep),
      request.inUse === undefined ? Number.POSITIVE_INFINITY : Math.ceil(request.inUse),
    );
    holder.share = Math.max(0, Math.min(stillSpent, limit - handedOut(state)));
  }
  const grow = Math.max(0, Math.min(target - holder.share, limit - reserved - handedOut(state)));
  holder.share += grow;
  if (request.release === true && holder.cooling === 0) delete state.holders[request.holder];
  return { state, grant: { share: holder.share, target, limit, holders: live.length, event } };
}

/**
 * The tokens of a key's limit kept free for holders that send creates while one lives: a tenth of the limit, none
 * below 5 requests per second (there, a till waits for the others' renewals like any holder).
 */
export function createReserve(limit: number): number {
  return limit >= 5 ? Math.ceil(limit / 10) : 0;
}

/**
 * Tokens that may be spent now: the live holders' shares and what was given back less than a measured window ago.
 * Exported for stores' and tests' checks: it never exceeds the limit.
 */
export function handedOut(state: BudgetState): number {
  let count = 0;
  for (const entry of Object.values(state.holders)) {
    if (isLive(entry)) count += entry.share;
    if (isCooling(entry)) count += entry.cooling;
  }
  return count;
}

/**
 * Raises or cuts the learnt rate on a holder's report (at most one cut per two windows, one raise per second). The
 * 429s came at what was handed out then, which lags the rate while it climbs: that, not the rate, is the ceiling.
 */
function adapt(state: BudgetState, request: BudgetRequest, now: number, cap: number, inUse: number): void {
  // The rate binds while every token but the tills' reserve is handed out (a holder whose requests wait while tokens
  // are free grows into them at its renewal: no reason to raise). Since when, on the journal's clock.
  const limit = Math.floor(Math.min(state.rate, cap));
  if (inUse < limit - createReserve(limit)) delete state.bindingSince;
  else state.bindingSince ??= now;
  if (request.rateLimited > 0) {
    if (now - state.cutAt >= 2 * request.windowMs) {
      // Set only by a slow-start raise, and dropped at every cut: present means these are the slow start's first 429s.
      const raisedFrom = state.raisedFrom;
      if (raisedFrom !== undefined) {
        // The first 429s end the slow start, which overshot by up to its last raise (half again): back to the rate
        // before it, which bound for two windows without a 429, and probe up from there. A cut of the overshoot
        // itself (a fifth) left the fleet above the limit, answered 429 for seconds (most of the bench's 429s).
        state.rate = Math.max(1, Math.min(state.rate, raisedFrom));
        state.ceiling = state.rate / ADAPTIVE_NEAR;
      } else {
        state.ceiling = Math.max(1, Math.min(Math.floor(state.rate), inUse));
        state.rate = Math.min(state.rate, state.ceiling);
        state.rate = Math.max(1, state.rate * ADAPTIVE_CUT);
      }
      delete state.raisedFrom;
      delete state.bindingSince;
      state.cutAt = now;
      state.raisedAt = now;
    }
    return;
  }
  if (!request.saturated || now - state.raisedAt < 1_000 || now - state.cutAt < request.windowMs) return;
  const bindingSince = state.bindingSince;
  if (bindingSince === undefined) return;
  const ceiling = state.ceiling;
  if (ceiling === undefined) {
    // Slow start: one step of half again, once the rate has bound for two windows without a 429, so the rate it
    // leaves has been shown to hold. Raised on any report of waiting requests (4 → 30 in 6 s while the fleet sent
    // 13/s), or two steps at once, no rate it went back to after the first 429s had been tried.
    if (now - bindingSince < 2 * request.windowMs) return;
    state.raisedFrom = state.rate;
    state.rate = state.rate * ADAPTIVE_SLOW_START;
  } else {
    const seconds = Math.min(2, (now - state.raisedAt) / 1_000);
    if (state.rate < ceiling * ADAPTIVE_NEAR)
      state.rate = Math.min(ceiling * ADAPTIVE_NEAR, state.rate + Math.max(1, (ceiling * ADAPTIVE_NEAR - state.rate) / 2));
    else if (state.rate < ceiling - 1) state.rate += ADAPTIVE_PROBE * seconds;
    else if (state.rate < ceiling + 1) state.rate += ADAPTIVE_AT_CEILING * seconds;
    else state.rate += ADAPTIVE_PAST_CEILING * seconds;
  }
  // Never learn past a declared limit, nor run away while nobody could use it.
  state.rate = Math.min(state.rate, cap, 100_000);
  delete state.bindingSince;
  state.raisedAt = now;
}

/**
 * How long a turn lasts when a key has fewer tokens than holders wanting one ({@link fairShares}): long enough for a
 * token to move (given back at a renewal, cooled a window, taken at the next), short enough that no holder waits long.
 */
export const FAIR_TURN_MS = 5_000;

/**
 * The fair shares when tills live: their demands come first (shared among them by {@link fairShares}) as long as
 * every other holder can still keep a token, and the others share what is left less the `standing` reserve. A till's
 * creates come at a cashier's pace whatever the backlog, so an equal part (a third of the key among a till and two
 * workers) made its next creates wait for tokens the workers' checks held. With more tills than that leaves tokens
 * for, it is {@link fairShares} of the limit (tills first in its turns); without tills, of the limit less `standing`.
 */
function tillsFirst(
  limit: number,
  standing: number,
  wants: readonly (readonly [holder: string, want: number, creates: boolean])[],
  turn: number,
): Map<string, number> {
  const tills = wants.filter((entry) => entry[2]);
  const others = wants.filter((entry) => !entry[2]);
  if (tills.length === 0) return fairShares(limit - standing, wants, turn);
  const forTills = limit - others.length;
  // Fewer tokens than that: the tills come first in the turns of fairShares.
  if (forTills < tills.length) return fairShares(limit, wants, turn);
  const shares = fairShares(forTills, tills, turn);
  let kept = 0;
  for (const share of shares.values()) kept += share;
  // The standing token stays free beyond what the tills keep: it is for the next till that starts.
  for (const [holder, share] of fairShares(Math.max(0, limit - kept - standing), others, turn)) shares.set(holder, share);
  return shares;
}

/**
 * Water-filling of `limit` whole tokens among demands: a holder wanting less than an equal part gets what it wants,
 * the rest is split evenly; every holder computes the same for the same demands and `turn`.
 *
 * The remainder (one token each for some holders) goes to the first holders by id while every holder still gets at
 * least one token (a difference of one, kept steady: moving it would cost renewals). When there are fewer tokens left
 * than holders wanting them, some would get none: holders that send creates (a third element `true`) come first, and
 * the others take turns (`turn`, one per {@link FAIR_TURN_MS} of the journal's clock), so no holder waits for good.
 *
 * @param turn - which turn it is (`allocateBudget` passes the journal's clock ÷ {@link FAIR_TURN_MS}). @defaultValue 0
 */
export function fairShares(
  limit: number,
  wants: readonly (readonly [holder: string, want: number, creates?: boolean])[],
  turn = 0,
): Map<string, number> {
  const shares = new Map<string, number>();
  // Among equal demands the order changes nothing: each gets its want, or the split below (by id) begins.
  const pending = [...wants].sort((a, b) => a[1] - b[1]);
  let remaining = limit;
  while (pending.length > 0) {
    const equal = Math.floor(remaining / pending.length);
    const [id, want] = pending[0] as (typeof pending)[number];
    if (want <= equal) {
      shares.set(id, want);
      remaining -= want;
      pending.shift();
      continue;
    }
    const leftover = remaining - equal * pending.length;
    const byId = (entries: typeof pending) => entries.map(([holder]) => holder).sort();
    let order = byId(pending);
    if (equal === 0) {
      const rotate = (holders: string[]) => {
        const start = (Math.max(0, Math.floor(turn)) * Math.max(1, leftover)) % Math.max(1, holders.length);
        return [...holders.slice(start), ...holders.slice(0, start)];
      };
      order = [
        ...rotate(byId(pending.filter((entry) => entry[2] === true))),
        ...rotate(byId(pending.filter((entry) => entry[2] !== true))),
      ];
    }
    for (const [index, holder] of order.entries()) shares.set(holder, equal + (index < leftover ? 1 : 0));
    break;
  }
  return shares;
}
