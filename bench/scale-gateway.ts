/**
 * The scale benchmark's fixture: an in-process fake of the status check (a `fetch` over a Map) and the tracker that
 * checks every poll ended exactly once, correctly, with nothing left behind.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { FetchFunction } from '../src/index.js';

/** Resolves on the next event-loop turn. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
/** Timers still pending in this process. */
export const activeTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

interface FakeCollection {
  readonly settlesAfter: number;
  checks: number;
}

/** How the fake answers: at once, in a setImmediate (like a network), or holding every first check until released. */
export type Answering = 'at once' | 'next turn' | 'hold first';

/** An in-process fake of `GET /v1/collections/check/:referenceId`: `pending` until check number `settlesAfter`. */
export class FakeGateway {
  readonly collections: Map<string, FakeCollection>;
  readonly held: Array<() => void> = [];
  checks = 0;
  unknownChecks = 0;
  #allHeld: () => void = () => undefined;
  /** Resolves when every first check is held (`hold first` only). */
  readonly allHeld = new Promise<void>((resolve) => {
    this.#allHeld = resolve;
  });

  readonly answering: Answering;

  constructor(ids: readonly string[], settlesAfter: () => number, answering: Answering) {
    this.collections = new Map(ids.map((id) => [id, { settlesAfter: settlesAfter(), checks: 0 }]));
    this.answering = answering;
  }

  readonly fetch: FetchFunction = (input) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const id = url.slice(url.lastIndexOf('/') + 1);
    const collection = this.collections.get(id);
    if (!collection) {
      this.unknownChecks++;
      return Promise.resolve(new Response('{"success":false}', { status: 404, headers: { 'content-type': 'application/json' } }));
    }
    this.checks++;
    collection.checks++;
    const settled = collection.checks >= collection.settlesAfter;
    const body = `{"success":true,"data":{"referenceId":"${id}","statusText":"${settled ? 'successful' : 'pending'}","transactionCode":${settled ? '"SUCCESS"' : 'null'},"reason":null}}`;
    const answer = () => new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    if (this.answering === 'at once' || (this.answering === 'hold first' && collection.checks > 1)) return Promise.resolve(answer());
    return new Promise((resolve) => {
      if (this.answering === 'next turn') {
        setImmediate(() => resolve(answer()));
        return;
      }
      this.held.push(() => resolve(answer()));
      if (this.held.length === this.collections.size) this.#allHeld();
    });
  };

  /** Collections checked more or fewer times than needed to see them settle. */
  miscounted(): number {
    let count = 0;
    for (const collection of this.collections.values()) if (collection.checks !== collection.settlesAfter) count++;
    return count;
  }
}

/** The timings of a poll schedule (what pollPauseMs takes). */
export type PollTimings = { readonly initialDelayMs: number; readonly intervalMs: number; readonly maxIntervalMs: number };

export type Poll = (referenceId: string) => Promise<{ referenceId: string; statusText: string }>;
/** Makes the poll function of one run over the run's fake `fetch` (an SDK variant creates its one client here). */
export type PollFactory = (fetchFunction: FetchFunction) => Poll;

/** The polls of one run and what they resolved with. */
export class PollTracker {
  readonly #resolutions: Uint8Array;
  readonly #promises: Promise<void>[] = [];
  #wrong = 0;
  #rejected = 0;

  readonly ids: readonly string[];
  readonly poll: Poll;

  constructor(ids: readonly string[], poll: Poll) {
    this.ids = ids;
    this.poll = poll;
    this.#resolutions = new Uint8Array(ids.length);
  }

  start(index: number): void {
    const id = this.ids[index] ?? '';
    this.#promises.push(
      this.poll(id).then(
        (status) => {
          this.#resolutions[index] = (this.#resolutions[index] ?? 0) + 1;
          if (status.referenceId !== id || status.statusText !== 'successful') this.#wrong++;
        },
        () => {
          this.#rejected++;
        },
      ),
    );
  }

  /** Resolves when every poll started has ended. */
  async allEnded(): Promise<void> {
    await Promise.all(this.#promises);
  }

  /** After `allEnded`: nothing may go on after the last result (no further checks, no timer left behind). */
  async problems(fake: FakeGateway): Promise<{ settled: number; problems: string[] }> {
    await delay(50);
    const count = this.ids.length;
    const problems: string[] = [];
    let settled = 0;
    for (let index = 0; index < count; index++) if (this.#resolutions[index] === 1) settled++;
    if (settled !== count) problems.push(`${count - settled} not resolved exactly once`);
    if (this.#wrong > 0) problems.push(`${this.#wrong} resolved with the wrong referenceId or status`);
    if (this.#rejected > 0) problems.push(`${this.#rejected} rejected`);
    if (fake.unknownChecks > 0) problems.push(`${fake.unknownChecks} checks of unknown references`);
    const miscounted = fake.miscounted();
    if (miscounted > 0) problems.push(`${miscounted} collections checked more or fewer times than needed`);
    const timers = activeTimers();
    if (timers > 0) problems.push(`${timers} timers left behind`);
    return { settled, problems };
  }
}
