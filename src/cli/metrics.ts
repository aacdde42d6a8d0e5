/**
 * The worker command's `/metrics`: the settlement worker's figures in the Prometheus text exposition format
 * (version 0.0.4), gathered through the client's `instrumentation` hooks, the same hooks OpenTelemetry uses.
 *
 * @module
 */
import type { Instrumentation, SettlementWorkerEvent, SettlementWorkerView } from '../index.js';

/** Upper bounds of the settle latency histogram, in seconds (a push settles in seconds to minutes). */
export const LATENCY_BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600];

/** How long a scrape waits for the journal's count of open payments. */
const JOURNAL_READ_MS = 2000;

/** The value, or `undefined` when it fails or takes longer than `ms` (a stalled database must not hang a scrape). */
async function within<T>(value: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([value.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Counts a worker's events; renders them with its gauges. */
export class WorkerMetrics {
  readonly #checks = new Map<string, number>();
  readonly #settled = new Map<string, number>();
  readonly #contradictions = new Map<string, number>();
  readonly #buckets = LATENCY_BUCKETS.map(() => 0);
  #latencySum = 0;
  #latencyCount = 0;
  #pauses = 0;
  #worker: SettlementWorkerView | undefined;
  /** The open payments the journal last told: a scrape while it does not answer shows this, not a gap. */
  #lastOpen: number | undefined;

  /** The hooks to give the client: only the worker's, so calls and attempts cost nothing. */
  readonly instrumentation: Instrumentation = {
    settlementWorker: (worker) => {
      this.#worker = worker;
      return (event) => this.#record(event);
    },
  };

  #record(event: SettlementWorkerEvent): void {
    if (event.type === 'check') {
      const status = event.status === undefined ? 'none' : String(event.status);
      this.#checks.set(status, (this.#checks.get(status) ?? 0) + 1);
    } else if (event.type === 'settled') {
      this.#settled.set(event.state, (this.#settled.get(event.state) ?? 0) + 1);
      const seconds = event.latencyMs / 1000;
      LATENCY_BUCKETS.forEach((bound, index) => {
        if (seconds <= bound) this.#buckets[index] = (this.#buckets[index] as number) + 1;
      });
      this.#latencySum += seconds;
      this.#latencyCount++;
    } else if (event.type === 'contradiction') {
      this.#contradictions.set(event.state, (this.#contradictions.get(event.state) ?? 0) + 1);
    } else this.#pauses++;
  }

  /**
   * The exposition text. The open payments are read from the journal now, within `readMs` (default 2000): a journal
   * that fails or does not answer in time gives `tap_collections_journal_up 0` and the last count it gave.
   */
  async render(readMs = JOURNAL_READ_MS): Promise<string> {
    const worker = this.#worker;
    const read = worker === undefined ? undefined : await within(worker.openPayments(), readMs);
    if (read !== undefined) this.#lastOpen = read;
    const open = this.#lastOpen;
    const lines: string[] = [];
    const family = (name: string, type: string, help: string, samples: [labels: string, value: number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
    };
    const labelled = (map: Map<string, number>, label: string): [string, number][] =>
      [...map].sort(([a], [b]) => a.localeCompare(b)).map(([value, count]) => [`{${label}="${value}"}`, count]);
    family(
      'tap_collections_worker_checks_total',
      'counter',
      'Status checks made, by HTTP status (none: no response).',
      labelled(this.#checks, 'status'),
    );
    family(
      'tap_collections_worker_settled_total',
      'counter',
      'Payments brought to a final state, by state.',
      labelled(this.#settled, 'state'),
    );
    family(
      'tap_collections_worker_contradictions_total',
      'counter',
      'Closed payments the service contradicted (marked, kept in their state), by the journal state.',
      labelled(this.#contradictions, 'state'),
    );
    family('tap_collections_worker_pauses_total', 'counter', '429 answers, each pausing every check of the worker.', [['', this.#pauses]]);
    family(
      'tap_collections_worker_open_payments',
      'gauge',
      'Payments of the journal in an open state (the last count the journal gave while it does not answer).',
      open === undefined ? [] : [['', open]],
    );
    family('tap_collections_journal_up', 'gauge', "1 when the journal answered this scrape's read, else 0.", [
      ['', read === undefined ? 0 : 1],
    ]);
    family('tap_collections_worker_leased_payments', 'gauge', 'Payments this worker holds a lease on.', [
      ['', worker?.leasedPayments() ?? 0],
    ]);
    family('tap_collections_worker_budget_used_ratio', 'gauge', 'Share of the checks-per-second budget spent in the last second.', [
      ['', worker?.budgetUsed() ?? 0],
    ]);
    family('tap_collections_worker_settle_latency_seconds', 'histogram', "From a payment's creation to its final state.", [
      ...LATENCY_BUCKETS.map((bound, index): [string, number] => [`_bucket{le="${bound}"}`, this.#buckets[index] as number]),
      ['_bucket{le="+Inf"}', this.#latencyCount],
      ['_sum', this.#latencySum],
      ['_count', this.#latencyCount],
    ]);
    return `${lines.join('\n')}\n`;
  }
}
