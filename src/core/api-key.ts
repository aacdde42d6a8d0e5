/**
 * The API key from a key function (`apiKey: () => string | Promise<string>`): bounded like the request it
 * precedes, and checked before it may reach a header.
 *
 * @module
 */
import type { ResolvedConfig } from './config.js';
import { ConfigurationError, TimeoutError } from './errors.js';
import { headerValueProblem } from './headers.js';
import { monotonicNow } from './monotonic.js';
import { MIN_API_KEY_LENGTH } from './redact.js';
import type { CallSettings } from './transport-types.js';
import { boundedWait } from './wait.js';

/**
 * Calls the key function and checks what it gives: a slow one ends at the abort, `timeoutMs` and the deadline.
 * @throws {@link ConfigurationError} when it throws, is too slow, or returns no usable key (nothing was sent).
 */
export async function resolveApiKey(source: Exclude<ResolvedConfig['apiKey'], string>, settings: CallSettings): Promise<string> {
  let key: unknown;
  let limitError: unknown;
  try {
    const returned = source();
    // A slow key function is bounded like the request it precedes: by the abort, timeoutMs and the deadline.
    if (returned !== null && typeof returned === 'object') {
      const leftMs = settings.deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, settings.deadline - monotonicNow());
      const limitMs = Math.min(settings.timeoutMs, leftMs);
      key = await boundedWait(Promise.resolve(returned), settings.signal, limitMs, () => {
        limitError =
          leftMs <= settings.timeoutMs
            ? new TimeoutError(limitMs)
            : new ConfigurationError(`The apiKey function did not return within timeoutMs (${settings.timeoutMs} ms); nothing was sent`);
        return limitError;
      });
    } else key = returned;
  } catch (cause) {
    if (cause === limitError || (settings.signal?.aborted && cause === settings.signal.reason)) throw cause;
    throw new ConfigurationError('The apiKey function threw; nothing was sent', { cause });
  }
  if (typeof key !== 'string' || key.trim() === '') {
    throw new ConfigurationError('The apiKey function returned no key (a non-empty string is required); nothing was sent');
  }
  const problem = key.length < MIN_API_KEY_LENGTH ? `must be at least ${MIN_API_KEY_LENGTH} characters long` : headerValueProblem(key);
  if (problem !== undefined) throw new ConfigurationError(`The apiKey function returned an unusable key: it ${problem}; nothing was sent`);
  return key;
}
