/**
 * The redirect rule: same origin only (the key never leaves it), a method other than GET only on 307/308, at most
 * {@link MAX_REDIRECTS} in a row.
 *
 * @module
 */
import { RedirectError } from './errors.js';
import type { SecretRedactor } from './redact.js';

/** Redirects followed in a row before the attempt fails. */
export const MAX_REDIRECTS = 5;

/** The next URL for a redirect the SDK follows; `undefined` for a non-redirect; throws for one it refuses. */
export function redirectTarget(
  response: Response,
  method: string,
  redirects: number,
  baseUrl: string,
  origin: string,
  secrets: SecretRedactor,
): string | undefined {
  const status = response.status;
  // An opaque redirect always has status 0: its (slower) type is read only then.
  if (status === 0 && response.type === 'opaqueredirect') throw new RedirectError(status, undefined, 'redirects are not followed here');
  if (status < 300 || status >= 400 || status === 304) return undefined;
  const location = response.headers.get('location');
  if (!location) return undefined;
  let target: URL;
  try {
    target = new URL(location, response.url || baseUrl);
  } catch {
    throw new RedirectError(status, undefined, 'the Location header is not a URL');
  }
  if (target.origin !== origin) {
    // The Location is the service's text: a host made of the key must not reach the error.
    throw new RedirectError(response.status, secrets.scrub(target.origin), `the API key is never sent to another origin than ${origin}`);
  }
  // 301/302/303 would turn a POST into a GET and drop the body: refuse rather than guess.
  if (method !== 'GET' && response.status !== 307 && response.status !== 308) {
    throw new RedirectError(response.status, target.origin, `a ${method} is not redirected with status ${response.status}`);
  }
  if (redirects >= MAX_REDIRECTS) throw new RedirectError(response.status, target.origin, `more than ${MAX_REDIRECTS} redirects`);
  return target.href;
}
