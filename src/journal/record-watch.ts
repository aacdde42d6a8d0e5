/**
 * The second measure of a record's age: how long this process has itself watched the record's current version,
 * on its own monotonic clock (`performance.now()`), which no step of any wall clock moves.
 *
 * The journal's clock alone cannot prove a push is over: when it steps forward (NTP, a VM resumed), every record
 * in flight looks old at once. So before `not-sent`, the deciding process must also have seen the unchanged
 * version for the attempt window plus the grace itself; a record it wrote counts from its own write, one it reads
 * first after a start counts from that read (a restart waits that long once).
 *
 * @module
 */
import type { PaymentRecord } from './journal.js';

/** How many records a watch remembers; past it the longest-watched are forgotten (which only makes a wait longer). */
const DEFAULT_CAPACITY = 100_000;

interface Sighting {
  readonly version: number;
  readonly updatedAt: string;
  /** `performance.now()` when this process first saw (or wrote) this version. */
  readonly at: number;
}

/** Per process (one per client, shared by its settlement worker): when each open record's version was first seen. */
export class RecordWatch {
  readonly #sightings = new Map<string, Sighting>();
  readonly #capacity: number;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  /**
   * Notes that this process holds `record` now (just read or just written) and returns how long it has watched this
   * version unchanged: 0 on the first sight of it, which starts the watch.
   */
  watched(record: Pick<PaymentRecord, 'referenceId' | 'version' | 'updatedAt'>): number {
    const now = performance.now();
    const seen = this.#sightings.get(record.referenceId);
    if (seen !== undefined && seen.version === record.version && seen.updatedAt === record.updatedAt) return Math.max(0, now - seen.at);
    // A version older than the one watched (a caller still holding an earlier copy): never restarts the newer watch,
    // and counts as just seen (the longest wait for it).
    if (seen !== undefined && seen.version > record.version) return 0;
    this.#sightings.delete(record.referenceId);
    this.#sightings.set(record.referenceId, { version: record.version, updatedAt: record.updatedAt, at: now });
    if (this.#sightings.size > this.#capacity) {
      const oldest = this.#sightings.keys().next().value;
      if (oldest !== undefined) this.#sightings.delete(oldest);
    }
    return 0;
  }

  /** The record is no longer open (or no longer this process's concern): nothing to remember. */
  forget(referenceId: string): void {
    this.#sightings.delete(referenceId);
  }
}
