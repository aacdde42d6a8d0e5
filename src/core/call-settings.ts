/**
 * A call's options checked and merged over the client's: the settings every attempt of the call reads.
 *
 * @module
 */
import { isRetryCount, isTimerMs, MAX_TIMER_MS, type RequestOptions, type ResolvedConfig } from './config.js';
import { RequestValidationError, type ValidationIssue } from './errors.js';
import { headerIssues } from './headers.js';
import type { CallSettings } from './transport-types.js';

/**
 * Checks a call's options and merges them over the client's (`config`); the caller's headers lose `authName`.
 * @throws {@link RequestValidationError} naming each bad option; nothing is sent.
 */
export function checkCallSettings(
  options: RequestOptions | undefined,
  config: Pick<ResolvedConfig, 'timeoutMs' | 'maxRetries'>,
  authName: string,
): CallSettings {
  if (options === undefined) {
    return { signal: undefined, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries, headers: undefined };
  }
  const issues: ValidationIssue[] = [];
  if (options === null || typeof options !== 'object')
    throw new RequestValidationError([{ path: 'options', message: 'must be an object' }], 'options');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    issues.push({ path: 'options.signal', message: 'must be an AbortSignal' });
  if (options.timeoutMs !== undefined && !isTimerMs(options.timeoutMs)) {
    issues.push({ path: 'options.timeoutMs', message: `must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}` });
  }
  if (options.maxRetries !== undefined && !isRetryCount(options.maxRetries))
    issues.push({ path: 'options.maxRetries', message: 'must be a whole number from 0 to 10' });
  issues.push(...headerIssues(options.headers, 'options.headers'));
  if (issues.length > 0) throw new RequestValidationError(issues, 'options');
  return {
    signal: options.signal,
    timeoutMs: options.timeoutMs ?? config.timeoutMs,
    maxRetries: options.maxRetries ?? config.maxRetries,
    headers: options.headers ? withoutHeader(options.headers, authName) : undefined,
  };
}

/** `headers` without `name` in any letter case: the caller's headers never replace authentication. */
export function withoutHeader(headers: Readonly<Record<string, string>>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key.toLowerCase() !== name));
}
