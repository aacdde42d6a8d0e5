/**
 * The instrumentation hooks a client can be given (its `instrumentation` option): how OpenTelemetry (the
 * `tap-collections-sdk/otel` entry) or any other tracer and metrics system sees the SDK's operations, its HTTP
 * attempts and its settlement workers. Only types live here: the main entry imports no tracing library, and
 * a client without hooks pays one property read per attempt.
 *
 * @module
 */
import type { ServiceName } from './errors.js';

/** One public call of a client (`initiate`, `checkStatus`, `pollUntilSettled`, …), as the hooks see it. @group Configuration */
export interface OperationInfo {
  /** The call, as `<client>.<method>`: `collections.initiate`, `tap.submitCustomerQuery`, … */
  readonly name: string;
  /** The service it talks to. */
  readonly service: ServiceName;
}

/** One HTTP attempt, as the hooks see it: never the key, the query string, a body, or a path with an id in it. @group Configuration */
export interface AttemptInfo {
  /** The service the attempt goes to. */
  readonly service: ServiceName;
  /** The request's method. */
  readonly method: string;
  /**
   * The route template (`/v1/collections/check/{referenceId}`): the path with every id and number replaced by
   * its name. `undefined` for a raw `request()`, whose path the SDK cannot template.
   */
  readonly route: string | undefined;
  /** The base URL's host name. */
  readonly serverAddress: string;
  /** The base URL's port (the scheme's default when it names none). */
  readonly serverPort: number;
  /** Which attempt of the call this is, counting from 1 (a reconcile lookup counts as an attempt of its create). */
  readonly attempt: number;
  /** What {@link Instrumentation.operation} gave the call this attempt belongs to (`undefined` outside one). */
  readonly parent: unknown;
}

/** One status check of a settlement worker ended. @group Configuration */
export interface WorkerCheckEvent {
  /** The kind of event. */
  readonly type: 'check';
  /** The HTTP status, or `undefined` when no response came. */
  readonly status: number | undefined;
  /** How long the check took, in milliseconds. */
  readonly durationMs: number;
}

/** A settlement worker brought a payment to a final state. @group Configuration */
export interface WorkerSettledEvent {
  /** The kind of event. */
  readonly type: 'settled';
  /** The final state: `successful`, `failed` or `not-sent`. */
  readonly state: string;
  /** From the payment record's creation to now, in milliseconds. */
  readonly latencyMs: number;
}

/** The service answered a settlement worker's check with 429: every check of the worker pauses. @group Configuration */
export interface WorkerPausedEvent {
  /** The kind of event. */
  readonly type: 'paused';
}

/**
 * A settlement worker saw the service contradict a payment the journal had closed, and marked the record
 * (`record.contradiction`). @group Configuration
 */
export interface WorkerContradictionEvent {
  /** The kind of event. */
  readonly type: 'contradiction';
  /** The record's (final, unchanged) state. */
  readonly state: string;
}

/** What a running settlement worker tells the hooks. @group Configuration */
export type SettlementWorkerEvent = WorkerCheckEvent | WorkerSettledEvent | WorkerPausedEvent | WorkerContradictionEvent;

/** A running settlement worker, as the hooks see it: figures read when a metrics system asks for them. @group Configuration */
export interface SettlementWorkerView {
  /** The worker's lease owner id. */
  readonly workerId: string;
  /** The worker's `requestsPerSecond`. */
  readonly requestsPerSecond: number;
  /** The payments of the journal in an open state (`initiating`, `pending`, `unknown`): one journal read. */
  openPayments(): Promise<number>;
  /** The payments this worker holds a lease on now. */
  leasedPayments(): number;
  /** The share of `requestsPerSecond` spent in the last second (0 to 1). */
  budgetUsed(): number;
}

/**
 * Hooks that see what a client does, for tracing and metrics (the client option `instrumentation`).
 * `openTelemetry()` of `tap-collections-sdk/otel` builds one; every hook is optional. A hook must not throw:
 * what `operation` and `attempt` return (or reject with) is what the call returns (or rejects with).
 * @group Configuration
 */
export interface Instrumentation {
  /**
   * Wraps one public call. Call `run` exactly once with a value of your choice (a span): every attempt of
   * the call, reconcile lookups and poll checks included, receives it as {@link AttemptInfo.parent}.
   */
  operation?<T>(info: OperationInfo, run: (scope: unknown) => Promise<T>): Promise<T>;
  /**
   * Wraps one HTTP attempt. Call `run` exactly once. What it resolves with, and an `ApiError` it rejects with,
   * have a numeric `status`: the response's (the last one, after followed redirects).
   */
  attempt?<T>(info: AttemptInfo, run: () => Promise<T>): Promise<T>;
  /**
   * Called once when {@link CollectionsClient.startSettlementWorker} starts a worker; may return a listener for
   * the worker's events, called until the worker stops.
   */
  settlementWorker?(worker: SettlementWorkerView, done: Promise<void>): ((event: SettlementWorkerEvent) => void) | undefined;
}
