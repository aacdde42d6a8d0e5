/**
 * Raw access: `request(method, path, options)` on both clients, for endpoints the SDK does not wrap.
 * The same transport as every method; this file adds only what a free-form request needs: the path kept
 * under the base URL, the query and body encoded, and the resend rule for methods that are not reads.
 *
 * @module
 */
import type { RequestOptions } from './config.js';
import { RequestValidationError, type ValidationIssue } from './errors.js';
import { isUnknownOutcome } from './retry.js';
import type { HttpMethod, Transport } from './transport.js';
import { isWellFormedText } from './validation.js';

/** Options of a raw request: the usual {@link RequestOptions}, a JSON body and a query. @group Configuration */
export interface RawRequestOptions extends RequestOptions {
  /** Sent as JSON (`content-type: application/json`). Not allowed with GET. @defaultValue none */
  body?: unknown;
  /** Encoded into the query string, in this order. @defaultValue none */
  query?: Record<string, string | number | boolean> | undefined;
}

/** The answer to a raw request (always a 2xx: other statuses throw the {@link ApiError} classes). @group Clients */
export interface ApiResponse {
  /** The HTTP status. */
  status: number;
  /** The response headers, names lower-cased. */
  headers: Record<string, string>;
  /** The body, parsed when it is JSON, else the text; `undefined` when empty. */
  body: unknown;
  /** The `x-request-id` header, when present. */
  requestId: string | undefined;
}

const METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters and spaces would be rewritten or refused by URL parsing.
const UNSAFE_IN_PATH = /[\u0000-\u0020\u007f\\?#]/;
const DOT_SEGMENT = /^(\.|%2e){1,2}$/i;

/** Sends a raw request through `transport`. */
export async function rawRequest(
  transport: Transport,
  method: HttpMethod,
  path: string,
  options?: RawRequestOptions,
): Promise<ApiResponse> {
  const issues: ValidationIssue[] = [];
  if (typeof method !== 'string' || !METHODS.has(method))
    issues.push({ path: 'method', message: 'must be one of GET, POST, PUT, PATCH, DELETE' });
  const pathProblem = checkPath(path);
  if (pathProblem !== undefined) issues.push({ path: 'path', message: pathProblem });
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new RequestValidationError([{ path: 'options', message: 'must be an object' }], 'request');
  }
  const query = encodeQuery(options?.query, issues);
  let body: unknown;
  if (options?.body !== undefined) {
    if (method === 'GET') issues.push({ path: 'options.body', message: 'is not allowed with GET' });
    else {
      try {
        const text = JSON.stringify(options.body);
        if (text === undefined) issues.push({ path: 'options.body', message: 'must be serializable as JSON' });
        else body = JSON.parse(text);
      } catch {
        issues.push({ path: 'options.body', message: 'must be serializable as JSON (no BigInt, no cycles)' });
      }
    }
  }
  if (issues.length > 0) throw new RequestValidationError(issues, 'request');
  const { body: _body, query: _query, ...requestOptions } = options ?? {};
  const settings = transport.settingsFor(requestOptions);
  const spec = { method, path: `${path}${query}`, ...(body === undefined ? {} : { body }) };
  // A read is retried like every read; anything else is resent only when nothing was sent or on 429:
  // an attempt whose outcome is unknown may have taken effect, and this request carries no idempotency key.
  const mayRetry = (error: unknown) => method === 'GET' || !isUnknownOutcome(error);
  const result = await transport.withRetries(settings, (attemptNumber) => transport.send(spec, settings, attemptNumber), mayRetry);
  return { status: result.status, headers: Object.fromEntries(result.headers), body: result.body, requestId: result.requestId };
}

/** Why `path` cannot be sent under the base URL, or `undefined`. */
function checkPath(path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) {
    return 'must start with a single / (a path under the base URL, never an absolute URL)';
  }
  if (UNSAFE_IN_PATH.test(path)) return 'must not contain spaces, control characters, \\, ? or # (pass the query as options.query)';
  if (!isWellFormedText(path)) return 'must be well-formed text (no lone surrogate)';
  if (path.split('/').some((segment) => DOT_SEGMENT.test(segment))) return 'must not contain . or .. segments';
  return undefined;
}

function encodeQuery(query: unknown, issues: ValidationIssue[]): string {
  if (query === undefined) return '';
  if (query === null || typeof query !== 'object' || Array.isArray(query)) {
    issues.push({ path: 'options.query', message: 'must be an object of names to strings, numbers or booleans' });
    return '';
  }
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    const valid =
      (typeof value === 'string' && isWellFormedText(value)) ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!valid || !isWellFormedText(name)) {
      issues.push({ path: `options.query.${name}`, message: 'must be a string, a finite number or a boolean' });
    } else params.append(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
