/**
 * Path patterns, shared by the route tables and by fault routes: literal segments, `:name` (one segment) and a final
 * `*` (the rest).
 *
 * @module
 */

/** Splits `/a/b?x=1` into the path and the query string with its `?`. */
export function splitPath(raw: string): { path: string; query: string } {
  const index = raw.indexOf('?');
  return index === -1 ? { path: raw, query: '' } : { path: raw.slice(0, index), query: raw.slice(index) };
}

/** Matches `path` against a pattern; returns the decoded `:name` segments, or `undefined` when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const wanted = pattern.split('/');
  const actual = path.split('/');
  const params: Record<string, string> = {};
  for (let index = 0; index < wanted.length; index++) {
    const segment = wanted[index] as string;
    if (segment === '*' && index === wanted.length - 1) return params;
    const value = actual[index];
    if (value === undefined) return undefined;
    if (segment.startsWith(':')) {
      if (value === '') return undefined;
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        return undefined;
      }
    } else if (segment !== value) {
      return undefined;
    }
  }
  return actual.length === wanted.length ? params : undefined;
}

/**
 * Parses a route string: `'METHOD /path'`, a bare `'/path'` (any method) or `'*'` (everything).
 * @throws TypeError for anything else.
 */
export function parseRoute(route: string): { method: string; pattern: string } {
  if (typeof route !== 'string' || route.trim() === '') throw new TypeError('route must be a non-empty string');
  const trimmed = route.trim();
  if (trimmed === '*') return { method: '*', pattern: '*' };
  const parts = trimmed.split(/\s+/);
  const [first, second] = parts;
  if (parts.length === 1 && first?.startsWith('/')) return { method: '*', pattern: first };
  if (parts.length === 2 && first !== undefined && second !== undefined && (second.startsWith('/') || second === '*')) {
    return { method: first.toUpperCase(), pattern: second };
  }
  throw new TypeError(`route must look like 'POST /v1/collections/mobile-money', '/health' or '*', got '${route}'`);
}
