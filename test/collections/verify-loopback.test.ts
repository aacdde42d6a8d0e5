/** collections.verify() against the simulator over real loopback HTTP (no msw): a mistyped base URL, a key without permission. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, CollectionsClient, ConfigurationError, PermissionDeniedError } from '../../src/index.js';
import { COLLECTIONS_API_KEYS, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { rejectionOf } from '../helpers/collections.js';

describe('collections.verify against the simulator over loopback', () => {
  let running: RunningSimulator;
  beforeAll(async () => {
    running = await startSimulator();
  });
  afterAll(() => running.close());
  const client = (baseUrl: string, apiKey: string = COLLECTIONS_API_KEYS.primary) =>
    new CollectionsClient({ apiKey, baseUrl, logLevel: 'off', maxRetries: 0 });

  it('resolves for the right base URL and key', async () => {
    await expect(client(running.collectionsBaseUrl).verify()).resolves.toBeUndefined();
  });

  it('turns a mistyped base URL (…/collection) into ConfigurationError naming baseUrl', async () => {
    const error = await rejectionOf(client(`${running.collectionsBaseUrl}/collection`).verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/baseUrl \/ COLLECTIONS_BASE_URL/);
  });

  it('tells a key without the collections permission apart (403), though /health accepts it', async () => {
    const error = await rejectionOf(client(running.collectionsBaseUrl, COLLECTIONS_API_KEYS.noPermission).verify());
    expect(error).toBeInstanceOf(PermissionDeniedError);
  });

  it('tells an unknown key apart (401)', async () => {
    expect(await rejectionOf(client(running.collectionsBaseUrl, 'col_not_a_key').verify())).toBeInstanceOf(AuthenticationError);
  });
});
