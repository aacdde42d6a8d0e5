/**
 * Environment access that works where there is no `process` (browsers, workers): it reads only when
 * an environment exists, and never imports `node:` modules.
 *
 * @module
 */

/** The trimmed value of an environment variable, or `undefined` when unset, empty, or there is no environment. */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name]?.trim();
  return value ? value : undefined;
}

/** True in a browser page (a `window` with a `document`), where an embedded API key would be public. */
export function isBrowserPage(): boolean {
  const scope = globalThis as { window?: { document?: unknown } };
  return typeof scope.window === 'object' && typeof scope.window?.document === 'object';
}
