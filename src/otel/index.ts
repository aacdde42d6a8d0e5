/**
 * tap-collections-sdk/otel: OpenTelemetry for the SDK's clients and settlement workers. Needs `@opentelemetry/api`
 * (an optional peer dependency); the main entry never imports it, so an application without OpenTelemetry
 * loads none of it.
 *
 * ```ts
 * import { CollectionsClient } from 'tap-collections-sdk';
 * import { openTelemetry } from 'tap-collections-sdk/otel';
 *
 * const collections = new CollectionsClient({ instrumentation: openTelemetry() });
 * ```
 *
 * Every call is a span (`collections.initiate`, `collections.pollUntilSettled`, …) and every HTTP attempt a
 * client span under it (`POST /v1/collections/mobile-money`), named and attributed by the HTTP client semantic
 * conventions: `http.request.method`, `url.template` (the route, never the path: a path holds a reference),
 * `server.address`, `server.port`, `http.response.status_code`, `http.request.resend_count`, `error.type`.
 * A create's reconcile lookups and a poll's checks are attempts of their call, so they are its children.
 * A settlement worker started by an instrumented client reports metrics (see {@link openTelemetry}).
 * No attribute ever holds the key, a phone number or a body.
 *
 * @module tap-collections-sdk/otel
 */
import {
  type Attributes,
  type Context,
  context,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { AttemptInfo, Instrumentation, OperationInfo, SettlementWorkerEvent, SettlementWorkerView } from '../core/instrumentation.js';
import { redactForLog } from '../core/redact.js';
import { SDK_VERSION } from '../core/version.js';

/** Options of {@link openTelemetry}. */
export interface OpenTelemetryOptions {
  /** Where spans go. @defaultValue the global tracer provider (`trace.getTracerProvider()`) */
  tracerProvider?: TracerProvider;
  /** Where the settlement worker's metrics go. @defaultValue the global meter provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
}

/** The instrumentation scope's name: the package's. */
const SCOPE = 'tap-collections-sdk';

/** The settle latency histogram's bucket boundaries, in seconds: a push settles in seconds to minutes. */
const LATENCY_BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600];

/**
 * Hooks for the client option `instrumentation` that report to OpenTelemetry.
 *
 * Spans: one per call (kind internal) and one per HTTP attempt (kind client), the attempt a child of its call;
 * a call made inside an active span (your request handler's) is that span's child. Errors set the span's status
 * and `error.type` (the SDK error's class, or the HTTP status), and an `exception` event whose message is
 * phone-masked; the SDK's errors never hold the key.
 *
 * Metrics of a settlement worker started by the client's `startSettlementWorker()`, each with the
 * attribute `worker.id`:
 * - `tap_collections.worker.checks` (counter, `{check}`; `http.response.status_code` when one came),
 * - `tap_collections.worker.settled` (counter, `{payment}`; `payment.state`),
 * - `tap_collections.worker.pauses` (counter, `{pause}`: 429 answers, each pausing every check),
 * - `tap_collections.worker.contradictions` (counter, `{payment}`; `payment.state`: closed payments the service
 *   contradicted, marked and kept in their state),
 * - `tap_collections.worker.settle_latency` (histogram, `s`: from the record's creation to its final state),
 * - `tap_collections.worker.open_payments` (gauge, `{payment}`: one journal read per collection),
 * - `tap_collections.worker.leased_payments` (gauge, `{payment}`: leases this worker holds),
 * - `tap_collections.worker.budget_used` (gauge, `1`: the share of `requestsPerSecond` spent in the last second).
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): Instrumentation {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE, SDK_VERSION);
  const meterOf = () => (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE, SDK_VERSION);

  return {
    operation<T>(info: OperationInfo, run: (scope: unknown) => Promise<T>): Promise<T> {
      const span = tracer.startSpan(info.name, { kind: SpanKind.INTERNAL, attributes: { 'tap_collections.service': info.service } });
      const scope = trace.setSpan(context.active(), span);
      return settle(
        span,
        context.with(scope, () => run(scope)),
      );
    },

    attempt<T>(info: AttemptInfo, run: () => Promise<T>): Promise<T> {
      const attributes: Attributes = {
        'http.request.method': info.method,
        'server.address': info.serverAddress,
        'server.port': info.serverPort,
        'tap_collections.service': info.service,
      };
      if (info.route !== undefined) attributes['url.template'] = info.route;
      // The convention records resends only, from the second attempt on.
      if (info.attempt > 1) attributes['http.request.resend_count'] = info.attempt - 1;
      const parent = isContext(info.parent) ? info.parent : context.active();
      const span = tracer.startSpan(
        info.route === undefined ? info.method : `${info.method} ${info.route}`,
        { kind: SpanKind.CLIENT, attributes },
        parent,
      );
      return settle(span, context.with(trace.setSpan(parent, span), run), true);
    },

    settlementWorker(worker: SettlementWorkerView, done: Promise<void>) {
      return observeWorker(meterOf(), worker, done);
    },
  };
}

function isContext(value: unknown): value is Context {
  return value !== null && typeof value === 'object' && typeof (value as Context).getValue === 'function';
}

function statusOf(value: unknown): number | undefined {
  const status = value !== null && typeof value === 'object' ? (value as { status?: unknown }).status : undefined;
  return typeof status === 'number' && status > 0 ? status : undefined;
}

/** Ends `span` when `work` settles, recording the status code (HTTP spans) and any error. */
async function settle<T>(span: Span, work: Promise<T>, http = false): Promise<T> {
  try {
    const result = await work;
    const status = http ? statusOf(result) : undefined;
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    return result;
  } catch (error) {
    const status = http ? statusOf(error) : undefined;
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    const type = error instanceof Error ? error.name : typeof error;
    span.setAttribute('error.type', status !== undefined && status >= 400 && type === 'Error' ? String(status) : type);
    // The SDK's messages never hold the key; phone-shaped runs are masked by the SDK's one redaction rule.
    const message = error instanceof Error ? String(redactForLog(error.message)) : undefined;
    span.addEvent('exception', { 'exception.type': type, ...(message === undefined ? {} : { 'exception.message': message }) });
    span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
    throw error;
  } finally {
    span.end();
  }
}

/** Registers a worker's metrics; returns the listener for its events. */
function observeWorker(
  meter: ReturnType<MeterProvider['getMeter']>,
  worker: SettlementWorkerView,
  done: Promise<void>,
): (event: SettlementWorkerEvent) => void {
  const base: Attributes = { 'worker.id': worker.workerId };
  const checks = meter.createCounter('tap_collections.worker.checks', { unit: '{check}', description: 'Status checks made' });
  const settled = meter.createCounter('tap_collections.worker.settled', {
    unit: '{payment}',
    description: 'Payments brought to a final state',
  });
  const pauses = meter.createCounter('tap_collections.worker.pauses', {
    unit: '{pause}',
    description: '429 answers that paused every check',
  });
  const contradictions = meter.createCounter('tap_collections.worker.contradictions', {
    unit: '{payment}',
    description: 'Closed payments the service contradicted (marked, kept in their state)',
  });
  const latency = meter.createHistogram('tap_collections.worker.settle_latency', {
    unit: 's',
    description: "From a payment's creation to its final state",
    advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
  });
  const open = meter.createObservableGauge('tap_collections.worker.open_payments', {
    unit: '{payment}',
    description: 'Payments of the journal in an open state',
  });
  const leased = meter.createObservableGauge('tap_collections.worker.leased_payments', {
    unit: '{payment}',
    description: 'Payments this worker holds a lease on',
  });
  const budget = meter.createObservableGauge('tap_collections.worker.budget_used', {
    unit: '1',
    description: 'Share of requestsPerSecond spent in the last second',
  });
  const observeOpen = async (result: { observe: (value: number, attributes?: Attributes) => void }) => {
    try {
      result.observe(await worker.openPayments(), base);
    } catch {
      // A journal that cannot be read now reports nothing for this collection rather than a wrong zero.
    }
  };
  const observeLeased = (result: { observe: (value: number, attributes?: Attributes) => void }) =>
    result.observe(worker.leasedPayments(), base);
  const observeBudget = (result: { observe: (value: number, attributes?: Attributes) => void }) =>
    result.observe(worker.budgetUsed(), base);
  open.addCallback(observeOpen);
  leased.addCallback(observeLeased);
  budget.addCallback(observeBudget);
  void done.then(() => {
    open.removeCallback(observeOpen);
    leased.removeCallback(observeLeased);
    budget.removeCallback(observeBudget);
  });
  return (event) => {
    if (event.type === 'check') checks.add(1, event.status === undefined ? base : { ...base, 'http.response.status_code': event.status });
    else if (event.type === 'settled') {
      settled.add(1, { ...base, 'payment.state': event.state });
      latency.record(event.latencyMs / 1000, { ...base, 'payment.state': event.state });
    } else if (event.type === 'contradiction') contradictions.add(1, { ...base, 'payment.state': event.state });
    else pauses.add(1, base);
  };
}
