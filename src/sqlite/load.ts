/**
 * Loads `node:sqlite` on first use instead of by a static import: a static import of a builtin the runtime lacks
 * (Node 20, Node 22 before 22.13) fails while the module links, with `ERR_UNKNOWN_BUILTIN_MODULE`, before any SDK
 * code can say what to do. `process.getBuiltinModule` (Node 20.16+/22.3+, Deno 2.1+, Bun) answers `undefined` instead.
 *
 * @module
 */
// Built as an import of the main entry (tsup.config.ts), so `instanceof ConfigurationError` holds across the two entries.
import { ConfigurationError } from '../core/errors.js';

type NodeSqlite = typeof import('node:sqlite');

/** The runtimes that have `node:sqlite` without a flag; said in the error. */
const NEEDED = 'Node.js 22.13 or later (23.4+ on the 23 line), Deno 2.2+ or Bun 1.4+';

let loaded: NodeSqlite | undefined;

/**
 * `node:sqlite`, or a {@link ConfigurationError} naming the runtime version it needs.
 * @throws {@link ConfigurationError} when the runtime has no `node:sqlite`.
 */
export function nodeSqlite(): NodeSqlite {
  if (loaded !== undefined) return loaded;
  const runtime = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown; version?: string } }).process;
  const module = typeof runtime?.getBuiltinModule === 'function' ? runtime.getBuiltinModule('node:sqlite') : undefined;
  if (module === undefined || module === null) {
    const version = typeof runtime?.version === 'string' ? ` (this is ${runtime.version})` : '';
    throw new ConfigurationError(
      `tap-collections-sdk/sqlite needs node:sqlite, which this runtime does not have${version}: run ${NEEDED}, or use MemoryJournal or tap-collections-sdk/postgres`,
    );
  }
  loaded = module as NodeSqlite;
  return loaded;
}
