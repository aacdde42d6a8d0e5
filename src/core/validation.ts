/**
 * The bridge between zod and the SDK's errors: inputs that fail become {@link RequestValidationError}
 * (before any I/O), 2xx bodies that fail become {@link ResponseValidationError}. Messages never echo a
 * value, since values include phone numbers.
 *
 * @module
 */
import * as z from 'zod/mini';
import { RequestValidationError, ResponseValidationError, type ServiceName, type ValidationIssue } from './errors.js';
import type { HttpResult } from './transport.js';
import { UUID_PATTERN } from './uuid.js';

/** A string enum that also accepts values the documents do not list yet: autocompletes the known ones. @group Utilities */
export type OpenEnum<Known extends string> = Known | (string & {});

/** A schema for an {@link OpenEnum}: any string passes; the type lists the known values first. */
export function openEnum<const Known extends readonly string[]>(_known: Known): z.ZodMiniType<OpenEnum<Known[number]>> {
  return z.string() as unknown as z.ZodMiniType<OpenEnum<Known[number]>>;
}

type ZodIssue = z.core.$ZodIssue;

function pathOf(issue: ZodIssue, prefix: string): string {
  const path = issue.path.map(String).join('.');
  return prefix && path ? `${prefix}.${path}` : prefix || path;
}

/** A plain-language message for a zod issue, without the offending value. */
export function describeIssue(issue: ZodIssue): string {
  // zod/mini ships no locale, so its own messages are all 'Invalid input': a message of ours wins.
  if (issue.message && issue.message !== 'Invalid input' && issue.code !== 'invalid_type') return issue.message;
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? 'is required'
        : `must be ${issue.expected === 'array' || issue.expected === 'object' ? 'an' : 'a'} ${issue.expected}`;
    case 'too_small':
      return issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`;
    case 'too_big':
      return issue.origin === 'string' ? `must be at most ${String(issue.maximum)} characters` : `must be at most ${String(issue.maximum)}`;
    case 'invalid_format':
      return `must be ${issue.format === 'uuid' ? 'a UUID' : `in ${issue.format} format`}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    default:
      return 'is invalid';
  }
}

/** Converts zod issues to the SDK's `{ path, message }` issues, one per field. */
export function toValidationIssues(issues: readonly ZodIssue[], prefix = ''): ValidationIssue[] {
  return issues.map((issue) => ({ path: pathOf(issue, prefix), message: describeIssue(issue) }));
}

/**
 * Validates and normalizes a method's input.
 * @throws {@link RequestValidationError} naming every bad field.
 */
export function parseInput<Schema extends z.ZodMiniType>(schema: Schema, input: unknown, prefix = ''): z.infer<Schema> {
  const result = schema.safeParse(input, { reportInput: true });
  if (!result.success) throw new RequestValidationError(toValidationIssues(result.error.issues, prefix));
  const unreadable = unreadableText(result.data, prefix);
  if (unreadable.length > 0) throw new RequestValidationError(unreadable);
  return result.data as z.infer<Schema>;
}

/**
 * Strings no service or store reads back as written: a lone surrogate (re-encoded as U+FFFD by SQLite,
 * PostgreSQL and every UTF-8 hop) or NUL (refused by PostgreSQL text). Refused in every string field of an
 * input, so a journal never keeps a record that reads back different from what was sent.
 */
function unreadableText(data: unknown, prefix: string): ValidationIssue[] {
  if (data === null || typeof data !== 'object') return [];
  const issues: ValidationIssue[] = [];
  // Object.keys rather than entries: no pair array per field on every call's input.
  for (const field of Object.keys(data)) {
    const value: unknown = (data as Record<string, unknown>)[field];
    if (typeof value !== 'string') continue;
    const path = prefix === '' ? field : `${prefix}.${field}`;
    if (value.includes('\0')) issues.push({ path, message: 'must not contain NUL (U+0000)' });
    else if (!isWellFormedText(value)) issues.push({ path, message: 'must be well-formed text (no lone surrogate)' });
  }
  return issues;
}

/**
 * Validates a 2xx response body.
 * @throws {@link ResponseValidationError} when the body is not JSON or not of the documented shape.
 */
export function parseResponse<Schema extends z.ZodMiniType>(schema: Schema, result: HttpResult, service: ServiceName): z.infer<Schema> {
  const fail = (issues: ValidationIssue[]) =>
    new ResponseValidationError({ issues, body: result.scrub(result.body), service, status: result.status, requestId: result.requestId });
  if (!result.isJson) throw fail([{ path: '', message: result.body === undefined ? 'the body is empty' : 'the body is not JSON' }]);
  const parsed = schema.safeParse(result.body, { reportInput: true });
  if (!parsed.success) throw fail(toValidationIssues(parsed.error.issues));
  return parsed.data as z.infer<Schema>;
}

/** A UUID-shaped string (any version). A refinement rather than `z.regex`, which would pull zod's string-format machinery into bundles. */
export function uuidText(): z.ZodMiniType<string> {
  return z.string().check(z.refine((value) => UUID_PATTERN.test(value), 'must be a UUID'));
}

/** Exactly `value`. A refinement rather than `z.literal`, which costs bundle size for one comparison. */
export function exactText<const Value extends string>(value: Value): z.ZodMiniType<Value> {
  return z.string().check(z.refine((text) => text === value, `must be "${value}"`)) as unknown as z.ZodMiniType<Value>;
}

/** A required, non-blank string; the message names what is wrong, never the value. */
export function requiredText(): z.ZodMiniType<string> {
  return z.string().check(z.refine((value) => value.trim() !== '', 'must not be empty'));
}

/** True for text without a lone surrogate (which `encodeURIComponent` throws on and no service can read). */
export function isWellFormedText(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
