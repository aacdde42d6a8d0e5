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
  /**
   * The payment the call is about (its `referenceId`, lower case): set for `collections.initiate`,
   * `collections.checkStatus`, `collections.pollUntilSettled` and a settlement worker's
   * `collections.settlementWorker.check`; `undefined` for calls about no single payment.
   */
  readonly referenceId?: string | undefined;
  /**
   * `true` for a settlement worker's status check: it runs outside any caller's call, so a tracer may give it
   * a parent of its own (the OpenTelemetry hooks put it in the payment's trace). Absent otherwise.
   */
  readonly background?: boolean;
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
  /** The payment the attempt is about (a create, a status check or a reconcile lookup): its `referenceId`. */
  readonly referenceId?: string | undefined;
}

/** One status check of a settlement worker ended. @group Configuration */
export interface WorkerCheckEvent {
  /** The kind of event. */
  readonly type: 'check';
  /** The HTTP status, or `undefined` when no response came. */
  readonly status: number | undefined;
  /** How long the check took, in milliseconds (on the monotonic clock: a step of the wall clock does not change it). */
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
  /**
   * The payments of the journal in an open state (`initiating`, `pending`, `unknown`): one read of the journal's
   * own counts (`PaymentJournal.counts`, whose cost does not grow with the journal), or, for a journal without
   * them, of every open record.
   */
  openPayments(): Promise<number>;
  /** The payments this worker holds a lease on now. */
  leasedPayments(): number;
  /** The share of `requestsPerSecond` spent in the last second (0 to 1). */
  budgetUsed(): number;
}

/**
 * Hooks that see what a client does, for tracing and metrics (the client option `instrumentation`).
 * `openTelemetry()` of `tap-collections-sdk/otel` builds one; every hook is optional.
 *
 * Observability never changes an outcome: a call resolves or rejects with what its own work did, whatever a
 * hook does. A hook that throws (before or after calling `run`), rejects, or returns a promise that never
 * settles is ignored for the call (the work runs once, without the hook's scope if the hook threw before
 * calling `run`), and the failure is logged at `warn` once per hook per client. `run` must be called before the
 * hook returns (synchronously): a hook that has not called it by then does not hold the call up; the call then
 * runs without the hook's scope, and a later call of `run` gets the same promise rather than a second request.
 * A hook that never returns control at all (a synchronous endless loop) cannot be guarded against.
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

/** A hook of the client options whose failure is logged (once per client and kind). */
export type HookKind = 'operation' | 'attempt' | 'settlementWorker' | 'settlementWorker listener' | 'onResponse';

/**
 * Logs a hook's failure once per kind of failure for one client: a tracer that fails on every call must not
 * write a line per call (nor cost one).
 */
export class HookFailureReporter {
  readonly #warn: (message: string, details: Record<string, unknown>) => void;
  readonly #reported = new Set<HookKind>();

  constructor(warn: (message: string, details: Record<string, unknown>) => void) {
    this.#warn = warn;
  }

  /** Records that `kind` failed with `error`; writes the warning only the first time for that kind. */
  report(kind: HookKind, error: unknown): void {
    if (this.#reported.has(kind)) return;
    this.#reported.add(kind);
    this.#warn(`the ${kind} hook failed; ignored (the call's outcome is its own; logged once per client)`, {
      reason: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The one isolation point between a client and its hooks: hooks of the same shape whose failures and hangs
 * never reach a call (see {@link Instrumentation}). Every hook call site goes through what this returns.
 */
export function guardInstrumentation(hooks: Instrumentation, failures: HookFailureReporter): Instrumentation {
  const guarded: Instrumentation = {};
  const { settlementWorker } = hooks;
  // Called as methods of `hooks`, so a hook object that is a class instance keeps its `this`.
  if (typeof hooks.operation === 'function') {
    guarded.operation = <T>(info: OperationInfo, run: (scope: unknown) => Promise<T>) =>
      guardWrap('operation', failures, (once) => hooks.operation?.<T>(info, once) as Promise<T>, run);
  }
  if (typeof hooks.attempt === 'function') {
    guarded.attempt = <T>(info: AttemptInfo, run: () => Promise<T>) =>
      guardWrap('attempt', failures, (once) => hooks.attempt?.<T>(info, once) as Promise<T>, run);
  }
  if (typeof settlementWorker === 'function') {
    guarded.settlementWorker = (worker, done) => {
      let listener: unknown;
      try {
        listener = settlementWorker.call(hooks, worker, done);
      } catch (error) {
        failures.report('settlementWorker', error);
        return undefined;
      }
      if (typeof listener !== 'function') return undefined;
      return (event) => {
        try {
          const returned: unknown = listener(event);
          if (isThenable(returned)) returned.then(undefined, (error: unknown) => failures.report('settlementWorker listener', error));
        } catch (error) {
          failures.report('settlementWorker listener', error);
        }
      };
    };
  }
  return guarded;
}

/**
 * Runs `run` once through `hook` and settles with what `run` settles with. What the hook itself returns is only
 * watched for a failure to log: it may reject with a tracer's error or never settle; neither reaches the call.
 */
function guardWrap<T>(
  kind: HookKind,
  failures: HookFailureReporter,
  hook: (run: (scope?: unknown) => Promise<T>) => Promise<T>,
  run: (scope: unknown) => Promise<T>,
): Promise<T> {
  let work: Promise<T> | undefined;
  const once = (scope?: unknown): Promise<T> => {
    work ??= run(scope);
    return work;
  };
  let returned: unknown;
  try {
    returned = hook(once);
  } catch (error) {
    failures.report(kind, error);
  }
  // A hook that did not call `run` before returning (it threw first, or waits for something) does not hold the call.
  work ??= run(undefined);
  const own = work;
  if (isThenable(returned)) {
    returned.then(undefined, (error: unknown) => {
      // The hook passing the work's own failure on is how a hook is meant to end; anything else is its failure.
      void own.then(
        () => failures.report(kind, error),
        (workError: unknown) => {
          if (workError !== error) failures.report(kind, error);
        },
      );
    });
  }
  return own;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}
