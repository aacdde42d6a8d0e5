/**
 * The chaos soak: many creates of both services against the fault server (a real `node:http` server on
 * 127.0.0.1), with seeded random faults on every route, reads that lag behind creates by a random time,
 * creates processed after the client gave up, and a server that enforces uniqueness. Every create is
 * then judged against what the server stored:
 * - a double record (two stores for one reference) must never happen;
 * - a create that resolved must have a record;
 * - a create that ended in a definite error (anything but `UnknownOutcomeError`) must have none.
 *
 * Used by the test suite (a few hundred creates) and by `bench/chaos.ts` (thousands).
 */
import { CollectionsClient, TapClient, TapCollectionsError, UnknownOutcomeError } from '../../src/index.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { COLLECTIONS_KEY, type Fault, type Route, startFaultServer, TAP_KEY } from './fault-server.js';

export interface ChaosOptions {
  /** Seeds every random choice (faults, lags, retries). */
  readonly seed: number;
  /** How many creates, half Tap queries, half collections. */
  readonly creates: number;
  /** Creates in flight at once. @defaultValue 64 */
  readonly concurrency?: number;
  /** The largest lag of reads behind creates, in ms (each record draws one; a third have none). @defaultValue 600 */
  readonly maxLagMs?: number;
  /** The client's per-attempt limit, in ms; slow commits land 1.5× and 6× after it. @defaultValue 1000 */
  readonly timeoutMs?: number;
}

export interface ChaosReport {
  readonly creates: number;
  readonly resolved: number;
  readonly unknownOutcome: number;
  /** Ended with an error other than UnknownOutcomeError. */
  readonly definiteErrors: number;
  readonly doubleRecords: number;
  readonly resolvedWithoutRecord: number;
  readonly definiteErrorsWithRecord: number;
  readonly unknownWithRecord: number;
  readonly unknownWithoutRecord: number;
  /** Errors that are not the SDK's typed errors. */
  readonly untypedErrors: number;
  /** Resolved with a record of another reference. */
  readonly wrongRecord: number;
  readonly requests: number;
  readonly faultsInjected: number;
  /** Definite errors by class name. */
  readonly definiteByName: Readonly<Record<string, number>>;
  readonly elapsedMs: number;
}

type Weighted = readonly (readonly [weight: number, fault: Fault | undefined])[];

const CREATE_FAULTS: Weighted = [
  [40, undefined],
  [7, { kind: 'reset-before-headers' }],
  [9, { kind: 'reset-after-commit' }],
  [5, { kind: 'reset-mid-body' }],
  [5, { kind: 'hang' }],
  [7, { kind: 'status', status: 500, body: 'json', retryAfter: '0', commit: true }],
  [4, { kind: 'status', status: 502, body: 'html', retryAfter: '0' }],
  [3, { kind: 'status', status: 503, body: 'empty', retryAfter: '0' }],
  [4, { kind: 'rate-limit', retryAfter: '0' }],
  [4, { kind: 'truncated-json' }],
  [4, { kind: 'html-200' }],
  // Processed after the client gave up: before a resend may arrive, and after it (see runChaos's timeoutMs).
  [4, { kind: 'slow-commit', delayMs: 1.5 }],
  [4, { kind: 'slow-commit', delayMs: 6 }],
];

const READ_FAULTS: Weighted = [
  [78, undefined],
  [5, { kind: 'reset-before-headers' }],
  [6, { kind: 'status', status: 503, body: 'json', retryAfter: '0' }],
  [3, { kind: 'hang' }],
  [4, { kind: 'status', status: 404, body: 'json' }],
  [4, { kind: 'status', status: 500, body: 'html' }],
];

function pick(table: Weighted, random: () => number): Fault | undefined {
  const total = table.reduce((sum, [weight]) => sum + weight, 0);
  let roll = random() * total;
  for (const [weight, fault] of table) {
    roll -= weight;
    if (roll < 0) return fault;
  }
  return undefined;
}

const PRODUCT_ID = '5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170';

function referenceFor(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Runs the soak and judges every create against the server's records. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const random = seededRandom(options.seed);
  const maxLagMs = options.maxLagMs ?? 600;
  let faultsInjected = 0;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const server = await startFaultServer({
    lagMs: () => (random() < 1 / 3 ? 0 : Math.round(random() * maxLagMs)),
    pickFault: (route: Route) => {
      const fault = pick(route === 'POST queries' || route === 'POST mobile-money' ? CREATE_FAULTS : READ_FAULTS, random);
      if (fault) faultsInjected++;
      return fault?.kind === 'slow-commit' ? { kind: 'slow-commit', delayMs: fault.delayMs * timeoutMs } : fault;
    },
  });
  const common = { baseUrl: server.url, logLevel: 'off', timeoutMs } as const;
  const tap = new TapClient({ apiKey: TAP_KEY, ...common });
  const collections = new CollectionsClient({ apiKey: COLLECTIONS_KEY, ...common });

  const plans = Array.from({ length: options.creates }, (_, index) => ({
    index,
    service: index % 2 === 0 ? ('tap' as const) : ('collections' as const),
    referenceId: referenceFor(random),
    maxRetries: Math.floor(random() * 3),
  }));
  const outcomes: { referenceId: string; value?: unknown; error?: unknown }[] = [];
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    for (let plan = plans[next++]; plan !== undefined; plan = plans[next++]) {
      const call =
        plan.service === 'tap'
          ? tap.submitCustomerQuery(
              {
                merchantId: `chaos-m-${plan.index}`,
                merchantName: 'Chaos Stores',
                terminalId: `chaos-t-${plan.index}`,
                amount: 10 + (plan.index % 50),
                tagId: 'TAG-0001',
                referenceId: plan.referenceId,
              },
              { maxRetries: plan.maxRetries },
            )
          : collections.initiate(
              { productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 10 + (plan.index % 50), referenceId: plan.referenceId },
              { maxRetries: plan.maxRetries },
            );
      try {
        outcomes.push({ referenceId: plan.referenceId, value: await call });
      } catch (error) {
        outcomes.push({ referenceId: plan.referenceId, error });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency ?? 64 }, worker));
    const elapsedMs = Date.now() - started;
    // Creates processed late (after the client gave up) are records too: let them land before judging.
    while (server.pendingCommits() > 0) await new Promise((resolve) => setTimeout(resolve, 20));

    const report = {
      creates: outcomes.length,
      resolved: 0,
      unknownOutcome: 0,
      definiteErrors: 0,
      doubleRecords: 0,
      resolvedWithoutRecord: 0,
      definiteErrorsWithRecord: 0,
      unknownWithRecord: 0,
      unknownWithoutRecord: 0,
      untypedErrors: 0,
      wrongRecord: 0,
      requests: server.log.length,
      faultsInjected,
      definiteByName: {} as Record<string, number>,
      elapsedMs,
    };
    for (const outcome of outcomes) {
      const stored = server.stores.get(outcome.referenceId) ?? 0;
      if (stored > 1) report.doubleRecords++;
      if (outcome.error === undefined) {
        report.resolved++;
        if (stored === 0) report.resolvedWithoutRecord++;
        if (resolvedReference(outcome.value) !== outcome.referenceId) report.wrongRecord++;
      } else if (outcome.error instanceof UnknownOutcomeError) {
        report.unknownOutcome++;
        if (stored > 0) report.unknownWithRecord++;
        else report.unknownWithoutRecord++;
      } else {
        report.definiteErrors++;
        if (!(outcome.error instanceof TapCollectionsError)) report.untypedErrors++;
        if (stored > 0) report.definiteErrorsWithRecord++;
        const name = outcome.error instanceof Error ? outcome.error.name : typeof outcome.error;
        report.definiteByName[name] = (report.definiteByName[name] ?? 0) + 1;
      }
    }
    return report;
  } finally {
    await server.close();
  }
}

function resolvedReference(value: unknown): unknown {
  const record = value as { referenceId?: unknown; transaction?: { referenceId?: unknown } };
  return record.transaction?.referenceId ?? record.referenceId;
}

/** The report as a markdown table. */
export function chaosTable(report: ChaosReport, options: ChaosOptions): string {
  const rows: [string, string | number][] = [
    ['creates (half Tap queries, half collections)', report.creates],
    ['seed', options.seed],
    ['faults injected / requests received', `${report.faultsInjected} / ${report.requests}`],
    ['resolved', report.resolved],
    [
      'UnknownOutcomeError (record stored / none)',
      `${report.unknownOutcome} (${report.unknownWithRecord} / ${report.unknownWithoutRecord})`,
    ],
    [
      'definite errors',
      `${report.definiteErrors}${
        Object.keys(report.definiteByName).length > 0
          ? ` (${Object.entries(report.definiteByName)
              .map(([name, count]) => `${name} ${count}`)
              .join(', ')})`
          : ''
      }`,
    ],
    ['**double records**', `**${report.doubleRecords}**`],
    ['**resolved without a record**', `**${report.resolvedWithoutRecord}**`],
    ['**definite errors with a record stored**', `**${report.definiteErrorsWithRecord}**`],
    ['resolved with another reference’s record', report.wrongRecord],
    ['errors that are not TapCollectionsError', report.untypedErrors],
    ['wall time', `${(report.elapsedMs / 1000).toFixed(1)} s`],
  ];
  return ['| measure | value |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');
}
