/**
 * Header validation: names must be HTTP tokens and values must not carry CR, LF or NUL, which would
 * let a caller-supplied value split or smuggle headers.
 *
 * @module
 */
import type { ValidationIssue } from './errors.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_IN_VALUE = /[\r\n\0]/;

/** The problems with a set of extra headers, each naming the header (never echoing its value). */
export function headerIssues(headers: unknown, path: string): ValidationIssue[] {
  if (headers === undefined) return [];
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) {
    return [{ path, message: 'must be an object of header names to string values' }];
  }
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) issues.push({ path: `${path}.${name}`, message: 'is not a valid header name' });
    else if (typeof value !== 'string') issues.push({ path: `${path}.${name}`, message: 'must be a string' });
    else if (FORBIDDEN_IN_VALUE.test(value)) {
      issues.push({ path: `${path}.${name}`, message: 'must not contain CR, LF or NUL characters' });
    }
  }
  return issues;
}

/** True when `value` can be sent as a header value as-is. */
export function isSafeHeaderValue(value: string): boolean {
  return !FORBIDDEN_IN_VALUE.test(value);
}
