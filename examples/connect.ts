/**
 * Where the examples run: against the real sandbox when its credentials are in the environment, else
 * against the embedded simulator (tap-collections-sdk/testing) on a loopback port.
 */
import { CollectionsClient, type LogLevel, TapClient } from 'tap-collections-sdk';
import { COLLECTIONS_API_KEYS, createSimulator, PRODUCTS, startSimulator, TAGS, TAP_API_KEYS } from 'tap-collections-sdk/testing';

/** The variables that select the real sandbox; all or none must be set. */
export const SANDBOX_VARIABLES = [
  'TAP_BASE_URL',
  'TAP_API_KEY',
  'COLLECTIONS_BASE_URL',
  'COLLECTIONS_API_KEY',
  'SMOKE_PRODUCT_ID',
  'SMOKE_TAG_ID',
] as const;

export interface Connection {
  readonly target: 'sandbox' | 'simulator';
  readonly tap: TapClient;
  readonly collections: CollectionsClient;
  /** The product to credit. */
  readonly productId: string;
  /** A tag with an active airtel_money number. */
  readonly tagId: string;
  /** Poll timings: the defaults against the sandbox, quicker against the simulator (it settles in ~2 s). */
  readonly poll: { initialDelayMs?: number; intervalMs?: number; maxIntervalMs?: number };
  close(): Promise<void>;
}

export async function connect(logLevel: LogLevel = 'warn'): Promise<Connection> {
  const present = SANDBOX_VARIABLES.filter((name) => process.env[name]?.trim());
  if (present.length === SANDBOX_VARIABLES.length) {
    return {
      target: 'sandbox',
      tap: new TapClient({ logLevel }),
      collections: new CollectionsClient({ logLevel }),
      productId: process.env.SMOKE_PRODUCT_ID as string,
      tagId: process.env.SMOKE_TAG_ID as string,
      poll: {},
      close: async () => {},
    };
  }
  if (present.length > 0) {
    const missing = SANDBOX_VARIABLES.filter((name) => !present.includes(name));
    throw new Error(`To run against the sandbox, also set ${missing.join(', ')} (or unset ${present.join(', ')} to use the simulator).`);
  }
  const running = await startSimulator({ simulator: createSimulator({ settlement: { pendingMs: 2_000, pendingPolls: 2 } }) });
  return {
    target: 'simulator',
    tap: new TapClient({ apiKey: TAP_API_KEYS.primary, baseUrl: running.tapBaseUrl, logLevel }),
    collections: new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl, logLevel }),
    productId: PRODUCTS.primary,
    tagId: TAGS.active,
    poll: { initialDelayMs: 500, intervalMs: 250, maxIntervalMs: 500 },
    close: () => running.close(),
  };
}
