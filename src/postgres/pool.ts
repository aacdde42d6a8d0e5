/** The pool the PostgreSQL journal runs its statements on: the parts of `pg` it uses, and `pg` loaded on first use. */
import { ConfigurationError } from '../core/errors.js';

/** True for the runtime's error when the `pg` package itself cannot be found (ESM and CommonJS wordings). */
function isMissingPg(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && /['"]pg['"]/.test(message);
}

/** The part of a `pg.Pool` (or any compatible pool) the journal uses. */
export interface PostgresPool {
  /** Runs one statement with positional parameters (`$1`, `$2`, …). */
  query(text: string, values?: unknown[]): Promise<PostgresQueryResult>;
  /** Closes the pool's connections. */
  end(): Promise<void>;
  /**
   * Checks out one connection (as `pg.Pool#connect`): {@link PostgresJournal.watch} holds one for `LISTEN`.
   * Without it, `waitForSettlement` reads the journal on a schedule instead.
   */
  connect?(): Promise<PostgresListenClient>;
}

/** The part of a checked-out `pg` client that `LISTEN` needs. */
export interface PostgresListenClient {
  /** Runs one statement on this connection (`LISTEN`, `UNLISTEN`). */
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** Called for each `NOTIFY` on a channel this connection listens to. */
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  /** Called when the connection fails or ends: the journal opens a new one and listens again. */
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown;
  /** Returns the connection to the pool; `true` (or an error) discards it. */
  release(destroy?: boolean | Error): void;
}

/** What {@link PostgresPool.query} resolves with (as `pg` does). */
export interface PostgresQueryResult {
  /** The rows, one object per row, keyed by column name. */
  rows: unknown[];
  /** How many rows the statement touched. */
  rowCount: number | null;
}

/** The part of the `pg` module the journal uses. */
interface PgModule {
  Pool: new (config: { connectionString: string }) => PostgresPool & { on(event: 'error', listener: (error: Error) => void): unknown };
}

/**
 * Opens a `pg.Pool` on `connectionString`, loading `pg` on first use (an optional peer, and CommonJS: its default
 * export holds the API). `onError` hears a pooled connection that broke.
 */
export async function openPool(connectionString: string, onError: (error: Error) => void): Promise<PostgresPool> {
  let module: unknown;
  try {
    module = await import('pg');
  } catch (error) {
    // Said as what to do: the runtime's "Cannot find package 'pg'" does not say that pg is an optional peer to install.
    if (isMissingPg(error))
      throw new ConfigurationError(
        'tap-collections-sdk/postgres needs the pg package, which is not installed: install pg (npm install pg), or pass a pool of your own (option pool)',
        { cause: error },
      );
    throw error;
  }
  const pg = ((module as { default?: unknown }).default ?? module) as PgModule;
  const pool = new pg.Pool({ connectionString });
  // An idle connection that breaks (a database restart) is an 'error' event on the pool: without a
  // listener Node ends the process. It stays attached after close(): connections may still break while ending.
  pool.on('error', onError);
  return pool;
}
