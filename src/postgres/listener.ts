import type { Logger } from '../core/logger.js';
import type { PostgresListenClient, PostgresPool } from './pool.js';

/**
 * The one `LISTEN` connection of a journal, shared by every waiter. A connection that breaks is made
 * again (after a pause) and every waiter is told, since a notification may have been sent while it was down.
 */
export class Listener {
  readonly #pool: PostgresPool;
  readonly #channel: string;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #watchers = new Map<string, Set<() => void>>();
  #client: Promise<PostgresListenClient | undefined> | undefined;
  #closed = false;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(pool: PostgresPool, channel: string, logger: Pick<Logger, 'warn'>) {
    this.#pool = pool;
    this.#channel = channel;
    this.#logger = logger;
  }

  async add(referenceId: string, onChange: () => void): Promise<() => void> {
    const set = this.#watchers.get(referenceId) ?? new Set<() => void>();
    this.#watchers.set(referenceId, set);
    set.add(onChange);
    const remove = () => {
      set.delete(onChange);
      if (set.size === 0 && this.#watchers.get(referenceId) === set) this.#watchers.delete(referenceId);
      if (this.#watchers.size === 0) this.#disconnect();
    };
    const connected = await this.#connection();
    if (connected === undefined) {
      remove();
      throw new Error('PostgresJournal: could not LISTEN');
    }
    return remove;
  }

  /** The one connection, made when there is none. */
  #connection(): Promise<PostgresListenClient | undefined> {
    this.#client ??= this.#connect();
    return this.#client;
  }

  async #connect(): Promise<PostgresListenClient | undefined> {
    const connect = this.#pool.connect as () => Promise<PostgresListenClient>;
    let client: PostgresListenClient;
    try {
      client = await connect.call(this.#pool);
    } catch (error) {
      this.#client = undefined;
      this.#reconnectLater(error);
      return undefined;
    }
    const onLost = (error?: Error) => {
      if (!this.#drop(client, error ?? true)) return;
      if (this.#closed) return;
      this.#client = undefined;
      this.#reconnectLater(error);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel !== this.#channel || message.payload === undefined) return;
      for (const watcher of this.#watchers.get(message.payload) ?? []) watcher();
    });
    try {
      await client.query(`LISTEN "${this.#channel}"`);
    } catch (error) {
      onLost(error as Error);
      return undefined;
    }
    return client;
  }

  /** Connections already handed back: pg throws on a second release (an 'end' after an UNLISTEN's release). */
  readonly #dropped = new WeakSet<PostgresListenClient>();

  /** Hands the connection back once; false when it was already. */
  #drop(client: PostgresListenClient, destroy: boolean | Error | undefined): boolean {
    if (this.#dropped.has(client)) return false;
    this.#dropped.add(client);
    client.release(destroy);
    return true;
  }

  #reconnectLater(error: unknown): void {
    if (this.#closed || this.#watchers.size === 0 || this.#retry !== undefined) return;
    this.#logger.warn('PostgresJournal: the LISTEN connection broke; waiters read the journal until it is back', {
      reason: error instanceof Error ? error.message : String(error),
    });
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#closed || this.#watchers.size === 0) return;
      void this.#connection().then((client) => {
        // Back: whatever settled meanwhile sent its notification to nobody; every waiter reads again.
        if (client !== undefined) for (const set of this.#watchers.values()) for (const watcher of set) watcher();
      });
    }, 1_000);
  }

  #disconnect(): void {
    const client = this.#client;
    this.#client = undefined;
    void client?.then((connected) => {
      if (connected === undefined) return;
      connected.query(`UNLISTEN "${this.#channel}"`).then(
        () => this.#drop(connected, undefined),
        () => this.#drop(connected, true),
      );
    });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#watchers.clear();
    this.#disconnect();
  }
}
