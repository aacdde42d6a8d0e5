/**
 * `tap-collections-sdk/otel` with the OpenTelemetry SDK's in-memory exporters, against the loopback simulator:
 * span names, attributes and parentage of calls and attempts, and a settlement worker's metrics. No attribute may
 * hold the key, a phone number or a reference (a path with an id in it).
 */
import { type Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CollectionsClient, MemoryJournal, type PaymentJournal, TapClient } from '../../src/index.ts';
import { openTelemetry } from '../../src/otel/index.ts';
import {
  COLLECTIONS_API_KEYS,
  createSimulator,
  PHONES,
  PRODUCTS,
  type RunningSimulator,
  startSimulator,
  TAGS,
  TAP_API_KEYS,
} from '../../src/testing/index.ts';

const exporter = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let running: RunningSimulator;

beforeAll(async () => {
  running = await startSimulator({ simulator: createSimulator({ settlement: { pendingPolls: 1 } }) });
});
afterAll(() => running.close());
afterEach(() => {
  exporter.reset();
  running.simulator.clearFaults?.();
});

function collections(extra: Partial<ConstructorParameters<typeof CollectionsClient>[0]> = {}) {
  return new CollectionsClient({
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl: running.collectionsBaseUrl,
    logLevel: 'off',
    instrumentation: openTelemetry({ tracerProvider }),
    ...extra,
  });
}

const byName = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
const childrenOf = (parent: ReadableSpan) =>
  exporter.getFinishedSpans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);

/** Every attribute and event attribute of every span, as text: what a collector would receive. */
function everything(): string {
  const attributes = (value: Attributes | undefined) => JSON.stringify(value ?? {});
  return exporter
    .getFinishedSpans()
    .map(
      (span) =>
        `${span.name} ${attributes(span.attributes)} ${span.events.map((event) => attributes(event.attributes)).join(' ')} ${span.status.message ?? ''}`,
    )
    .join('\n');
}

/**
 * No key and no phone number anywhere; no reference in a span's name or attributes (an error's message may name the
 * reference it is about, as the SDK's error does: that is what a support agent searches by).
 */
function expectNothingSecret(referenceIds: string[] = []) {
  const text = everything();
  for (const secret of [COLLECTIONS_API_KEYS.primary, TAP_API_KEYS.primary, PHONES.succeeds, PHONES.succeeds.slice(3)])
    expect(text).not.toContain(secret);
  const namesAndAttributes = exporter
    .getFinishedSpans()
    .map((span) => `${span.name} ${JSON.stringify(span.attributes)}`)
    .join('\n');
  for (const referenceId of referenceIds) expect(namesAndAttributes).not.toContain(referenceId);
}

describe('spans', () => {
  it('initiate: one operation span, its attempts children with the HTTP client conventions; a resend counted', async () => {
    // The first push answers 429 (nothing was processed): the SDK sends again, the second attempt of the same call.
    running.simulator.injectFault({ route: 'POST /v1/collections/mobile-money', status: 429, retryAfter: 0, times: 1 });
    const client = collections({ maxRetries: 2 });
    const { referenceId } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 });

    const [operation] = byName('collections.initiate');
    expect(operation).toBeDefined();
    expect(operation?.kind).toBe(SpanKind.INTERNAL);
    expect(operation?.parentSpanContext).toBeUndefined();
    const attempts = childrenOf(operation as ReadableSpan);
    expect(attempts.map((span) => span.name)).toEqual(['POST /v1/collections/mobile-money', 'POST /v1/collections/mobile-money']);
    const { port, hostname } = new URL(running.collectionsBaseUrl);
    expect(attempts[0]?.kind).toBe(SpanKind.CLIENT);
    expect(attempts[0]?.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.template': '/v1/collections/mobile-money',
      'server.address': hostname,
      'server.port': Number(port),
      'http.response.status_code': 429,
      'error.type': 'RateLimitError',
    });
    expect(attempts[0]?.attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[0]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[1]?.attributes).toMatchObject({ 'http.response.status_code': 202, 'http.request.resend_count': 1 });
    expect(attempts[1]?.status.code).toBe(SpanStatusCode.UNSET);
    expect(operation?.status.code).toBe(SpanStatusCode.UNSET);
    expectNothingSecret([referenceId]);
  });

  it('a reconcile lookup after an unknown outcome is an attempt of the create, under its span', async () => {
    // The answer to the push is lost: the SDK looks the reference up before sending again.
    running.simulator.injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'after', times: 1 });
    const client = collections({ maxRetries: 2 });
    const { referenceId } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 25 });
    const [operation] = byName('collections.initiate');
    const names = childrenOf(operation as ReadableSpan).map((span) => span.name);
    expect(names).toEqual(['POST /v1/collections/mobile-money', 'GET /v1/collections/check/{referenceId}']);
    const [lost, lookup] = childrenOf(operation as ReadableSpan);
    expect(lost?.attributes['error.type']).toBe('ConnectionError');
    expect(lost?.attributes['http.response.status_code']).toBeUndefined();
    expect(lookup?.attributes).toMatchObject({ 'url.template': '/v1/collections/check/{referenceId}', 'http.request.resend_count': 1 });
    expectNothingSecret([referenceId]);
  });

  it("pollUntilSettled: every check is a child of the poll's span; a 404 is recorded without the reference", async () => {
    const client = collections();
    const { referenceId } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 5 });
    exporter.reset();
    await client.pollUntilSettled(referenceId, { initialDelayMs: 1, intervalMs: 1 });
    const [poll] = byName('collections.pollUntilSettled');
    const checks = childrenOf(poll as ReadableSpan);
    expect(checks.length).toBeGreaterThanOrEqual(2);
    for (const check of checks) expect(check.name).toBe('GET /v1/collections/check/{referenceId}');
    expect(checks.at(-1)?.attributes['http.response.status_code']).toBe(200);

    const missing = crypto.randomUUID();
    await expect(client.checkStatus(missing, { maxRetries: 0 })).rejects.toThrow();
    const [failed] = byName('collections.checkStatus');
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed?.attributes['error.type']).toBe('NotFoundError');
    expect(childrenOf(failed as ReadableSpan)[0]?.attributes['http.response.status_code']).toBe(404);
    expectNothingSecret([referenceId, missing]);
  });

  it('Tap: submitCustomerQuery and health-style reads; the key never in a span', async () => {
    const tap = new TapClient({
      apiKey: TAP_API_KEYS.primary,
      baseUrl: running.tapBaseUrl,
      logLevel: 'off',
      instrumentation: openTelemetry({ tracerProvider }),
    });
    await tap.submitCustomerQuery({ merchantId: 'M-OTEL', merchantName: 'Shop', terminalId: 'T-OTEL', amount: 5, tagId: TAGS.active });
    await tap.listCustomerQueries();
    const [submit] = byName('tap.submitCustomerQuery');
    expect(childrenOf(submit as ReadableSpan).map((span) => span.name)).toEqual(['POST /v1/tap/partners/customer-queries']);
    expect(byName('tap.listCustomerQueries')).toHaveLength(1);
    const wrongKey = new TapClient({
      apiKey: 'sk_wrong_key_for_otel_test',
      baseUrl: running.tapBaseUrl,
      logLevel: 'off',
      instrumentation: openTelemetry({ tracerProvider }),
    });
    await expect(wrongKey.listCustomerQueries()).rejects.toThrow();
    expect(everything()).not.toContain('sk_wrong_key_for_otel_test');
    expectNothingSecret();
  });

  it('costs nothing to a client without hooks: no span is made', async () => {
    const plain = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl, logLevel: 'off' });
    await plain.health();
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });
});

describe('settlement worker metrics', () => {
  it('counts checks and settlements, records settle latency, and observes open and leased payments', async () => {
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const journal = new MemoryJournal();
    const client = collections({ journal, instrumentation: openTelemetry({ tracerProvider, meterProvider }) });
    const backlog = await Promise.all(
      [1, 2, 3].map((amount) => client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount })),
    );
    const settled: string[] = [];
    const worker = client.startSettlementWorker({
      initialDelayMs: 0,
      intervalMs: 5,
      scanIntervalMs: 5,
      requestsPerSecond: 100,
      onSettled: (record) => {
        settled.push(record.referenceId);
      },
    });
    try {
      await expect.poll(async () => (await journal.list({ states: ['successful'] })).length, { timeout: 5000, interval: 10 }).toBe(3);
      const { resourceMetrics } = await reader.collect();
      const metrics = new Map(
        resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).map((metric) => [metric.descriptor.name, metric]),
      );
      const total = (name: string) => (metrics.get(name)?.dataPoints ?? []).reduce((sum, point) => sum + (point.value as number), 0);
      expect(total('tap_collections.worker.checks')).toBeGreaterThanOrEqual(6);
      expect(total('tap_collections.worker.settled')).toBe(3);
      expect(metrics.get('tap_collections.worker.settled')?.dataPoints[0]?.attributes).toEqual({
        'worker.id': worker.workerId,
        'payment.state': 'successful',
      });
      const latency = metrics.get('tap_collections.worker.settle_latency');
      expect(latency?.dataPointType).toBe(DataPointType.HISTOGRAM);
      expect(latency?.descriptor.unit).toBe('s');
      expect(latency?.dataPoints[0]?.value).toMatchObject({ count: 3 });
      expect(total('tap_collections.worker.open_payments')).toBe(0);
      expect(metrics.has('tap_collections.worker.leased_payments')).toBe(true);
      expect(metrics.has('tap_collections.worker.budget_used')).toBe(true);
      expect(total('tap_collections.worker.pauses')).toBe(0);
      expect(settled.sort()).toEqual(backlog.map(({ referenceId }) => referenceId).sort());
    } finally {
      await worker.stop();
      await meterProvider.shutdown();
    }
  });

  it('counts a contradiction: a payment closed by another process while leased, answered the other way', async () => {
    const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 60_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    const inner = new MemoryJournal();
    // Another till records `failed` for every payment right after this worker leases it; the service says successful.
    const journal: PaymentJournal = {
      insert: (record) => inner.insert(record),
      transition: (referenceId, version, change) => inner.transition(referenceId, version, change),
      now: () => inner.now(),
      get: (referenceId) => inner.get(referenceId),
      list: (filter) => inner.list(filter),
      history: (referenceId) => inner.history(referenceId),
      lease: async (request) => {
        const leased = await inner.lease(request);
        for (const record of leased)
          await inner.transition(record.referenceId, record.version, { state: 'failed', by: 'another-till', statusText: 'failed' });
        return leased;
      },
      renew: (owner, referenceIds, leaseMs) => inner.renew(owner, referenceIds, leaseMs),
      release: (owner, referenceIds) => inner.release(owner, referenceIds),
    };
    const client = collections({ journal, instrumentation: openTelemetry({ tracerProvider, meterProvider }) });
    const { referenceId } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 5 });
    const contradicted: string[] = [];
    const worker = client.startSettlementWorker({
      initialDelayMs: 0,
      scanIntervalMs: 5,
      onContradiction: (record) => {
        contradicted.push(record.referenceId);
      },
    });
    try {
      await expect.poll(() => contradicted, { timeout: 5000, interval: 10 }).toEqual([referenceId]);
      const { resourceMetrics } = await reader.collect();
      const metric = resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .find((m) => m.descriptor.name === 'tap_collections.worker.contradictions');
      expect(metric?.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
        [{ 'worker.id': worker.workerId, 'payment.state': 'failed' }, 1],
      ]);
      expect((await inner.get(referenceId))?.contradiction?.statusText).toBe('successful');
    } finally {
      await worker.stop();
      await meterProvider.shutdown();
    }
  });
});
