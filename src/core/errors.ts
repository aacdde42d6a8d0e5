/**
 * The SDK's error hierarchy. Every error the SDK throws (a caller's own abort aside) is a
 * {@link TapCollectionsError}, so one `instanceof` check catches them all, and each subclass narrows
 * to one failure a caller handles differently.
 *
 * Errors carry plain data only: never a `Request`, `Response` or `Headers`, which hold the API key.
 *
 * @module
 */
import type { ConnectionFailureReason } from './connection-failure.js';

/** Which service answered: the Tap Resolution Partner API or the Collections Gateway API. @group Errors */
export type ServiceName = 'tap' | 'collections';

/** One reason a value was rejected: `path` names the field (dotted, e.g. `transaction.amount`). @group Errors */
export interface ValidationIssue {
  /** The field, dotted (e.g. `transaction.amount`); empty for the value as a whole. */
  readonly path: string;
  /** What is wrong, in plain words; it never repeats the value. */
  readonly message: string;
}

/** One item of the Collections API's 422 `errors[]`: which field failed which rule. @group Errors */
export interface FieldError {
  /** The field, as the service names it, e.g. `params.referenceId`. */
  readonly field: string;
  /** The rule that failed, e.g. `uuid`. */
  readonly rule: string;
  /** The service's explanation. */
  readonly message: string;
}

/**
 * The base of every error the SDK throws. Catch it to handle any SDK failure; check a subclass to
 * handle one kind.
 *
 * @group Errors
 */
export class TapCollectionsError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** A plain, key-free view for loggers and `JSON.stringify`. */
  toJSON(): Record<string, unknown> {
    const { stack: _stack, ...own } = Object.fromEntries(Object.entries(this));
    return { name: this.name, message: this.message, ...own };
  }
}

/** Bad or missing constructor options, or an `apiKey` function that threw or returned nothing. @group Errors */
export class ConfigurationError extends TapCollectionsError {}

/** Input rejected before anything was sent. `issues` names every bad field. @group Errors */
export class RequestValidationError extends TapCollectionsError {
  /** Every bad field, each with its path and what is wrong. */
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[], what = 'input') {
    super(`Invalid ${what}: ${issues.map((issue) => `${issue.path || '(root)'}: ${issue.message}`).join('; ')}`);
    this.issues = issues;
  }
}

/** A 2xx response whose body is not JSON or does not match the documented shape. @group Errors */
export class ResponseValidationError extends TapCollectionsError {
  /** Where the body departs from the documented shape. */
  readonly issues: readonly ValidationIssue[];
  /** The parsed body (or the text, when it was not JSON). */
  readonly body: unknown;
  /** The service that answered. */
  readonly service: ServiceName;
  /** The (2xx) HTTP status of the response. */
  readonly status: number;
  /** The `x-request-id` response header, when present. */
  readonly requestId: string | undefined;

  constructor(init: {
    issues: readonly ValidationIssue[];
    body: unknown;
    service: ServiceName;
    status: number;
    requestId: string | undefined;
  }) {
    super(
      `Unexpected ${init.service} response (HTTP ${init.status}): ${init.issues
        .map((issue) => `${issue.path || '(root)'}: ${issue.message}`)
        .join('; ')}`,
    );
    this.issues = init.issues;
    this.body = init.body;
    this.service = init.service;
    this.status = init.status;
    this.requestId = init.requestId;
  }
}

/**
 * The error identifiers the service documents name: the Tap API's `resource/already-exists-error` (409, a
 * `merchantId`, `terminalId` or `referenceId` used before) and the Collections API's `E_VALIDATION_ERROR` (422).
 * Neither document gives the full list. @group Errors
 */
export type KnownErrorCode = 'resource/already-exists-error' | 'E_VALIDATION_ERROR';

/** {@link ApiError.code}: a {@link KnownErrorCode} (editors suggest them) or any other string a service sends. @group Errors */
export type ApiErrorCode = KnownErrorCode | (string & {});

/** What the error mapper learned from an error response; the fields of every {@link ApiError}. */
export interface ApiErrorInit {
  readonly status: number;
  /** The machine-readable identifier: Tap's `error` string or Collections' `code` string. */
  readonly code: ApiErrorCode | undefined;
  readonly message: string;
  readonly requestId: string | undefined;
  /** The parsed body (or the text, when it was not JSON; `undefined` when empty). */
  readonly body: unknown;
  /** The service that answered. */
  readonly service: ServiceName;
  /** Collections 422: the `errors[]` of the problem body. */
  readonly errors?: readonly FieldError[];
  /** 429 (or any status with `Retry-After`): the wait the service asked for, in milliseconds. */
  readonly retryAfterMs?: number | undefined;
  /** True when the body was the answering service's own error envelope. @defaultValue `false` */
  readonly serviceEnvelope?: boolean | undefined;
}

/** An HTTP error status from either service. Subclasses narrow by status. @group Errors */
export class ApiError extends TapCollectionsError {
  /** The HTTP status. */
  readonly status: number;
  /**
   * The machine-readable identifier: Tap's `error` (e.g. `resource/already-exists-error`) or Collections' `code`
   * (e.g. `E_VALIDATION_ERROR`); the documented ones autocomplete ({@link KnownErrorCode}), any string is kept.
   * `undefined` when the body carried none (a proxy's page, another server at `baseUrl`).
   */
  readonly code: ApiErrorCode | undefined;
  /** The body's request id (Collections) or the `x-request-id` response header. Quote it to support. */
  readonly requestId: string | undefined;
  /** The parsed body (the text when it was not JSON, `undefined` when empty). */
  readonly body: unknown;
  /** The service that answered: `'tap'` or `'collections'`. */
  readonly service: ServiceName;
  /** The wait a `Retry-After` header asked for, in milliseconds (429 and 503 send it), else `undefined`. */
  readonly retryAfterMs: number | undefined;
  /**
   * True when the body was the service's own error envelope (Collections: `success: false` with a string `code`;
   * Tap: `success: false` with a string `error`). False for an empty body, an HTML page, a proxy's answer or
   * another service's envelope: then the answer may not come from the service at all (a wrong `baseUrl`, a proxy).
   */
  readonly serviceEnvelope: boolean;

  constructor(init: ApiErrorInit) {
    super(init.message);
    this.serviceEnvelope = init.serviceEnvelope === true;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.body = init.body;
    this.service = init.service;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** HTTP 400: the service rejected the request's parameters (Tap: also a missing or inactive tag). @group Errors */
export class BadRequestError extends ApiError {}
/** HTTP 401: the API key is missing, invalid, revoked or expired. @group Errors */
export class AuthenticationError extends ApiError {}
/** HTTP 403: the key is valid but not allowed to do this. @group Errors */
export class PermissionDeniedError extends ApiError {}
/**
 * HTTP 404: no such resource (Tap: missing/inactive tag, or no number for the provider; Collections: the service
 * does not hold such a collection, as far as this read shows).
 *
 * From a Collections status check it is **no proof that a push was never sent**: the push may still be on its way,
 * or the read may lag the commit. Never start a sale over on it; with a journal, the SDK closes the payment as
 * `not-sent` only when it can prove nothing can still arrive (see docs/guide/journal.md), and a 404 before then rejects
 * with {@link UnknownOutcomeError} carrying `decidableAt`. A 404 that is not the service's own answer (no error
 * envelope, or a base URL that has not proved to serve the Collections API) rejects with {@link ConfigurationError}
 * instead, never as this class.
 *
 * @group Errors
 */
export class NotFoundError extends ApiError {}
/** HTTP 409: a `referenceId`, `merchantId` or `terminalId` was used before. @group Errors */
export class ConflictError extends ApiError {}

/** HTTP 422: the Collections API's validation problem; `errors` names each field and rule. @group Errors */
export class UnprocessableEntityError extends ApiError {
  /** The problem body's `errors[]`: each field, the rule it broke, and why. */
  readonly errors: readonly FieldError[];

  constructor(init: ApiErrorInit) {
    super(init);
    this.errors = init.errors ?? [];
  }
}

/** HTTP 429: too many requests. `retryAfterMs` is the wait the service asked for, when it said. @group Errors */
export class RateLimitError extends ApiError {}

/** HTTP 5xx: the service failed. For a create, the SDK reconciles before giving up (see {@link UnknownOutcomeError}). @group Errors */
export class InternalServerError extends ApiError {}

/**
 * No response: connection refused or reset, DNS failure, a body cut off mid-way. `cause` holds the runtime's error;
 * the message names the host (never a path or query, which may carry personal data).
 * @group Errors
 */
export class ConnectionError extends TapCollectionsError {
  /** False only when the request provably never left (connection refused, DNS failure). */
  readonly requestMayHaveBeenSent: boolean;
  /** The host (and port) of the base URL that could not be reached, e.g. `api.example.zm`; `undefined` when unknown. */
  readonly host: string | undefined;
  /**
   * `'dns-lookup-failed'` (the host name did not resolve: check `baseUrl` or DNS) or `'connection-refused'` (the host
   * resolved but nothing listens on that port), where the runtime says which (Node.js, Bun, Deno); else `undefined`.
   */
  readonly reason: ConnectionFailureReason | undefined;

  constructor(
    message: string,
    init: { cause: unknown; requestMayHaveBeenSent: boolean; host?: string | undefined; reason?: ConnectionFailureReason | undefined },
  ) {
    super(message, { cause: init.cause });
    this.requestMayHaveBeenSent = init.requestMayHaveBeenSent;
    this.host = init.host;
    this.reason = init.reason;
  }
}

/** An attempt ran past its `timeoutMs` (headers and body together). @group Errors */
export class TimeoutError extends TapCollectionsError {
  /** The limit that was exceeded, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(`Request timed out after ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The service answered with a redirect the SDK will not follow (another origin, or a method change). @group Errors */
export class RedirectError extends TapCollectionsError {
  /** The redirect's HTTP status. */
  readonly status: number;
  /** The origin the redirect pointed at (never the full URL, which may carry tokens). */
  readonly location: string | undefined;

  constructor(status: number, location: string | undefined, reason: string) {
    super(`Refused a redirect (HTTP ${status}${location ? ` to ${location}` : ''}): ${reason}`);
    this.status = status;
    this.location = location;
  }
}

/**
 * A create (`submitCustomerQuery`, `initiate`) whose outcome the SDK could not establish, even by
 * reconciling with the service. The operation may or may not have happened. Do **not** resend with a
 * new reference: keep `referenceId` and reconcile later (`checkStatus`, `listCustomerQueries`).
 *
 * @group Errors
 */
export class UnknownOutcomeError extends TapCollectionsError {
  /** The operation's reference: persist it, and reconcile by it. */
  readonly referenceId: string;
  /**
   * With a journal: the earliest time (ISO 8601) a "not sent" verdict becomes possible, when the payment is
   * not at the service yet but an attempt may still reach it. A till shows "checking, up to …" until then.
   */
  readonly decidableAt: string | undefined;
  /**
   * What the SDK's own check of the reference saw, when it made one (see {@link UnknownOutcomeSeen}); the message
   * says it and nothing more. `undefined` when no check was made.
   */
  readonly seen: UnknownOutcomeSeen | undefined;

  /** @param seen - What the check by reference saw, if one was made: the message states it and claims nothing else. */
  constructor(referenceId: string, cause: unknown, decidableAt?: string, seen?: UnknownOutcomeSeen) {
    const said = [
      seen === undefined ? undefined : UNKNOWN_OUTCOME_SEEN[seen],
      decidableAt === undefined ? undefined : `a verdict is possible from ${decidableAt}`,
    ]
      .filter((part) => part !== undefined)
      .join('; ');
    super(
      `The outcome of the request with referenceId ${referenceId} is unknown: do not resend with a new reference; reconcile later by this referenceId${
        said === '' ? '' : ` (${said})`
      }`,
      { cause },
    );
    this.referenceId = referenceId;
    this.decidableAt = decidableAt;
    this.seen = seen;
  }
}

/**
 * What a create's check by reference saw before it ended with {@link UnknownOutcomeError}:
 * - `'unreachable'`: no status check got through (the service did not answer it);
 * - `'not-found'`: the status check answered 404, which proves nothing yet (the push may still arrive, the read may lag);
 * - `'nothing-yet'`: the lookup found nothing yet (the same caveat).
 *
 * @group Errors
 */
export type UnknownOutcomeSeen = 'unreachable' | 'not-found' | 'nothing-yet';

/** How a message or log line says what was seen (see {@link UnknownOutcomeSeen}). @internal */
export const UNKNOWN_OUTCOME_SEEN: Readonly<Record<UnknownOutcomeSeen, string>> = {
  unreachable: 'no status check got through',
  'not-found': 'the status check answered 404, which proves nothing yet',
  'nothing-yet': 'the lookup found nothing yet, which proves nothing',
};

/**
 * `pollUntilSettled` reached its `maxWaitMs` before the collection settled. The payment may still
 * settle: keep `referenceId` and check again later.
 *
 * @group Errors
 */
export class PollTimeoutError<Status = unknown> extends TapCollectionsError {
  /** The collection waited for: check it again later. */
  readonly referenceId: string;
  /** The last status seen, or `undefined` when none was. */
  readonly lastStatus: Status | undefined;
  /**
   * The status words seen that the client's `statusWords` does not name (as the service spelt them), in the order
   * first seen: a service answering a word the SDK does not know, which kept the poll waiting. Empty when none.
   */
  readonly unrecognizedStatuses: readonly string[];

  /** `neverSeen`: every status check that answered said 404, so no collection with this reference was seen. */
  constructor(
    referenceId: string,
    lastStatus: Status | undefined,
    maxWaitMs: number,
    neverSeen = false,
    unrecognizedStatuses: readonly string[] = [],
  ) {
    const unknownWords =
      unrecognizedStatuses.length === 0
        ? ''
        : `; the service answered ${unrecognizedStatuses.map((word) => `"${word}"`).join(', ')}, which statusWords does not name (add it to the client option statusWords if it means settled)`;
    super(
      neverSeen
        ? `Collection ${referenceId} did not settle within ${maxWaitMs} ms: no collection with this referenceId was seen (the status check answered 404, which is no proof the push was never sent); keep the referenceId and check it again later`
        : `Collection ${referenceId} did not settle within ${maxWaitMs} ms; it may still settle — check it again later${unknownWords}`,
    );
    this.referenceId = referenceId;
    this.lastStatus = lastStatus;
    this.unrecognizedStatuses = unrecognizedStatuses;
  }
}

const errorClassByStatus: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The {@link ApiError} subclass for an HTTP status. */
export function apiErrorFor(init: ApiErrorInit): ApiError {
  const ErrorClass = errorClassByStatus[init.status] ?? (init.status >= 500 ? InternalServerError : ApiError);
  return new ErrorClass(init);
}

/**
 * The payment journal could not be read or written. When it happened before the request (the journal is written
 * first), nothing was sent: fix the journal and call again with the same `referenceId`.
 */
export class JournalError extends TapCollectionsError {
  /** The payment concerned, when one was. */
  readonly referenceId: string | undefined;

  constructor(message: string, referenceId: string | undefined, cause: unknown) {
    super(`${message}${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause });
    this.referenceId = referenceId;
  }
}

/**
 * The service answered something that contradicts a payment the journal has closed: it holds a collection the
 * journal calls `not-sent` or `rejected`, or it says `successful` for a `failed` record or the reverse. The record keeps
 * its state and is marked (`record.contradiction`, an event in its history with the service's word and request id);
 * nothing is changed automatically, because either the journal or the service is wrong about money: a person must look
 * (`npx tap-collections-sdk journal list --contradictions`). Thrown by `checkStatus`, `pollUntilSettled`,
 * `waitForSettlement`, `initiate` and `recover()` (after it has finished every other payment) with a journal; the
 * settlement worker reports it through `onContradiction` instead.
 *
 * @group Errors
 */
export class PaymentContradictionError extends TapCollectionsError {
  /** The payment concerned. */
  readonly referenceId: string;
  /** The state the journal holds for it (final, unchanged). */
  readonly recordState: string;
  /** The service's status word that contradicts it. */
  readonly statusText: string;
  /** The service's request id of that answer, when it carried one. */
  readonly requestId: string | undefined;

  constructor(init: { referenceId: string; recordState: string; statusText: string; requestId?: string | undefined }) {
    super(
      `Payment ${init.referenceId}: the journal records it as ${init.recordState}, but the service answered "${init.statusText}"` +
        `${init.requestId === undefined ? '' : ` (request ${init.requestId})`}: the record keeps its state and is marked; a person must look at it`,
    );
    this.referenceId = init.referenceId;
    this.recordState = init.recordState;
    this.statusText = init.statusText;
    this.requestId = init.requestId;
  }
}
