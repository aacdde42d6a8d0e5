/**
 * Environment access that works where there is no `process` (browsers, workers): it reads only when
 * an environment exists, and never imports `node:` modules.
 *
 * @module
 */
import { ConfigurationError } from './errors.js';

/**
 * The trimmed value of an environment variable, or `undefined` when unset, empty, or there is no environment.
 * Called only for options not given explicitly, so explicit options need no permission to read the environment.
 * @throws {@link ConfigurationError} naming the variable and Deno's `--allow-env` flag when the runtime refuses
 * the read (Deno without `--allow-env` throws its own `NotCapable`, which is not an SDK error).
 */
export function readEnv(name: string): string | undefined {
  let raw: unknown;
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    raw = env?.[name];
  } catch (cause) {
    throw new ConfigurationError(
      `Reading ${name} from the environment was refused by the runtime; pass the option explicitly, or grant the read (Deno: --allow-env=${name})`,
      { cause },
    );
  }
  const value = typeof raw === 'string' ? raw.trim() : undefined;
  return value ? value : undefined;
}

/** True in a browser page (a `window` with a `document`), where an embedded API key would be public. */
export function isBrowserPage(): boolean {
  const scope = globalThis as { window?: { document?: unknown } };
  return typeof scope.window === 'object' && typeof scope.window?.document === 'object';
}
