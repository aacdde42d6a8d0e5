/**
 * Header validation: names must be HTTP tokens; values must be ByteStrings (`fetch` cannot send a
 * character above U+00FF) without CR, LF or NUL (which would split or smuggle headers); and the headers
 * that describe the connection or the body's framing are the runtime's, not the caller's. A header
 * `fetch` would refuse is refused before anything is sent, so it cannot pose as a request that may have
 * reached the service.
 *
 * @module
 */
import type { ValidationIssue } from './errors.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find characters fetch cannot send.
const NOT_BYTE_STRING = /[^\u0000-\u00ff]/;

/**
 * Headers the runtime sets itself: `fetch` fails on some (`expect`, `keep-alive`, `transfer-encoding`,
 * `upgrade` in Node) and silently drops or replaces others (`host`, `content-length`, and all of them in
 * browsers and workers).
 */
export const RUNTIME_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The problems with a set of extra headers, each naming the header (never echoing its value). */
export function headerIssues(headers: unknown, path: string): ValidationIssue[] {
  if (headers === undefined) return [];
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    return [{ path, message: 'must be an object of header names to string values' }];
  }
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const problem = !TOKEN.test(name)
      ? 'is not a valid header name'
      : RUNTIME_HEADERS.has(name.toLowerCase())
        ? 'is set by the runtime and cannot be sent by the SDK'
        : typeof value !== 'string'
          ? 'must be a string'
          : headerValueProblem(value);
    if (problem !== undefined) issues.push({ path: `${path}.${name}`, message: problem });
  }
  return issues;
}

/** Why `value` cannot be sent as a header value, or `undefined` when it can. */
export function headerValueProblem(value: string): string | undefined {
  if (FORBIDDEN_IN_VALUE.test(value)) return 'must not contain CR, LF or NUL characters';
  if (NOT_BYTE_STRING.test(value)) return 'must contain only characters up to U+00FF (fetch cannot send others)';
  return undefined;
}

/** True when `value` can be sent as a header value as-is. */
export function isSafeHeaderValue(value: string): boolean {
  return headerValueProblem(value) === undefined;
}
