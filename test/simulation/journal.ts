/**
 * The journal as each simulated process sees it: one real `MemoryJournal` (its clock is the journal's own
 * simulated clock, which may be offset and jump), reached through a per-process wrapper in which every call
 * takes simulated time (it is applied after a latency and acknowledged after another, each an operation of the
 * scheduler), may fail with `JournalError` before it is applied, or be applied and then lose its acknowledgement.
 *
 * No vitest import (see scheduler.ts).
 */
import { JournalError } from '../../src/core/errors.js';
import { isOpenPaymentState, type PaymentJournal, type PaymentRecord } from '../../src/journal/journal.js';
import { MemoryJournal } from '../../src/journal/memory.js';
import type { Proc, Scheduler } from './scheduler.js';

export interface JournalFaults {
  maxLatencyMs: number;
  /** A call fails before it is applied. */
  failBefore: number;
  /** A write is applied, then its acknowledgement is lost (the caller sees `JournalError`). */
  lostAck: number;
}

export const RELIABLE_JOURNAL: JournalFaults = { maxLatencyMs: 0, failBefore: 0, lostAck: 0 };

/** The one store of a run, with its clock. */
export class SimJournal {
  readonly store: MemoryJournal;
  /** The journal clock's offset from true time; clock jumps change it. */
  offset = 0;
  faults: JournalFaults;
  readonly #sim: Scheduler;
  readonly #random: () => number;
  readonly hits = new Map<string, number>();
  /**
   * True time of each process's last write that let an attempt leave (`initiating`), by process and reference: the
   * service's physics bounds a push's effect by it (service.ts).
   */
  readonly sendingWrites = new Map<string, number>();
  /** References whose record is open (kept as writes land, so the runner can tell when all are final without a read). */
  readonly open = new Set<string>();

  constructor(sim: Scheduler, random: () => number, faults: JournalFaults) {
    this.#sim = sim;
    this.#random = random;
    this.faults = faults;
    this.store = new MemoryJournal({ now: () => sim.now + this.offset });
  }

  #note(record: PaymentRecord | undefined): void {
    if (record === undefined) return;
    if (isOpenPaymentState(record.state)) this.open.add(record.referenceId);
    else this.open.delete(record.referenceId);
  }

  #hit(what: string): void {
    this.hits.set(what, (this.hits.get(what) ?? 0) + 1);
  }

  /** The journal as `proc` reaches it. */
  forProcess(proc: Proc): PaymentJournal {
    const call = <T>(label: string, write: boolean, apply: () => Promise<T>): Promise<T> => {
      const sim = this.#sim;
      const random = this.#random;
      const f = this.faults;
      const latency = () => Math.floor(random() * (f.maxLatencyMs + 1));
      return new Promise<T>((resolve, reject) => {
        sim.at(sim.now + latency(), proc, `journal ${label}`, () => {
          if (f.failBefore > 0 && random() < f.failBefore) {
            this.#hit('journal failed before applying');
            reject(new JournalError(`Payment journal: ${label} failed (simulated)`, undefined, undefined));
            return;
          }
          apply().then(
            (value) => {
              const lost = write && f.lostAck > 0 && random() < f.lostAck;
              if (lost) this.#hit('journal write applied, acknowledgement lost');
              sim.at(sim.now + latency(), proc, `journal ${label} ack`, () =>
                lost
                  ? reject(new JournalError(`Payment journal: ${label}: connection lost (simulated)`, undefined, undefined))
                  : resolve(value),
              );
            },
            (error: unknown) => sim.at(sim.now + latency(), proc, `journal ${label} failed`, () => reject(error)),
          );
        });
      });
    };
    const store = this.store;
    const sim = this.#sim;
    const short = (referenceId: string) => referenceId.slice(0, 8);
    return {
      insert: (record) =>
        call(`insert ${short(record.referenceId)}`, true, async () => {
          const inserted = await store.insert(record);
          this.#note(inserted);
          if (inserted !== undefined) this.sendingWrites.set(`${proc.id}:${record.referenceId}`, sim.now);
          return inserted;
        }),
      transition: (referenceId, version, change) =>
        call(`transition ${short(referenceId)} v${version} → ${change.state}`, true, async () => {
          const result = await store.transition(referenceId, version, change);
          if (result.applied) this.#note(result.record);
          if (result.applied && change.state === 'initiating') this.sendingWrites.set(`${proc.id}:${referenceId}`, sim.now);
          else this.hits.set('compare-and-set lost', (this.hits.get('compare-and-set lost') ?? 0) + 1);
          return result;
        }),
      now: () => call('now', false, () => store.now()),
      get: (referenceId) => call(`get ${short(referenceId)}`, false, () => store.get(referenceId)),
      list: (filter) => call('list', false, () => store.list(filter)),
      history: (referenceId) => call(`history ${short(referenceId)}`, false, () => store.history(referenceId)),
      lease: (request) => call('lease', true, () => store.lease(request)),
      renew: (owner, ids, leaseMs) => call('renew', true, () => store.renew(owner, ids, leaseMs)),
      release: (owner, ids) => call('release', true, () => store.release(owner, ids)),
    };
  }
}
