import { afterEach, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, ConfigurationError } from '../../src/index.js';
import { createSimulator, createSimulatorHandlers, defaultFixtures, PARTNERS } from '../../src/testing/index.js';
import { collectionInput, collectionsClient, REFERENCE_ID } from '../helpers/collections.js';
import { API_KEY, COLLECTIONS_BASE_URL, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

afterEach(() => {
  vi.unstubAllEnvs();
});

/** The keys these tests send, each a valid Collections key of the primary partner. */
const KEYS = [API_KEY, 'key-one-0001', 'key-two-0002', 'env-key-123'];
const simulator = createSimulator({
  fixtures: {
    ...defaultFixtures(),
    apiKeys: KEYS.map((key) => ({
      key,
      service: 'collections',
      partnerId: PARTNERS.primary.partnerId,
      state: 'active',
      permissions: ['collections'],
    })),
  },
  // The first status check sees the push settled: pollUntilSettled ends at once.
  settlement: { pendingPolls: 0 },
});

/** The simulator answers every endpoint: 202 on create, successful on status, the record on details, ok on health. */
async function answerEverything() {
  simulator.reset();
  server.use(...(await createSimulatorHandlers(simulator, { tapBaseUrl: TAP_BASE_URL, collectionsBaseUrl: COLLECTIONS_BASE_URL })));
}

/** Has the simulator hold the collection of `collectionInput()`, created earlier (out of the recorded requests). */
async function holdCollection() {
  const { phoneNumber, ...input } = collectionInput();
  await simulator.handle({
    service: 'collections',
    method: 'POST',
    path: '/v1/collections/mobile-money',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...input, phoneNumber: phoneNumber.replace(/^0/, '260'), currency: 'ZMW' }),
  });
}

/** The simulator's id of the collection `callEveryMethod` created. */
const createdId = () => simulator.collections()[0]?.id ?? 'none';

async function callEveryMethod(client: CollectionsClient) {
  await client.initiate(collectionInput());
  await client.checkStatus(REFERENCE_ID);
  await client.pollUntilSettled(REFERENCE_ID);
  await client.getById(createdId());
  await client.health();
}

describe('authentication', () => {
  it('sends Authorization: Bearer <key> and no x-api-key on every request of every method', async () => {
    await answerEverything();
    await callEveryMethod(collectionsClient());
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/collections/mobile-money',
      `GET /v1/collections/check/${REFERENCE_ID}`,
      `GET /v1/collections/check/${REFERENCE_ID}`,
      `GET /v1/collections/${createdId()}`,
      'GET /health',
    ]);
    for (const request of requests) {
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers).not.toHaveProperty('x-api-key');
    }
  });

  it('calls an apiKey function per request, so a rotated key is used from the next request on', async () => {
    await answerEverything();
    await holdCollection();
    let key = 'key-one-0001';
    const client = collectionsClient({ apiKey: () => key });
    await client.health();
    key = 'key-two-0002';
    await client.checkStatus(REFERENCE_ID);
    expect(requests.map((request) => request.headers.authorization)).toEqual(['Bearer key-one-0001', 'Bearer key-two-0002']);
  });

  it('never lets a caller header replace Authorization', async () => {
    await answerEverything();
    await collectionsClient({ headers: { Authorization: 'Bearer client-override' } }).health({
      headers: { AUTHORIZATION: 'Bearer call-override' },
    });
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('reads COLLECTIONS_API_KEY and COLLECTIONS_BASE_URL from the environment', async () => {
    vi.stubEnv('COLLECTIONS_API_KEY', 'env-key-123');
    vi.stubEnv('COLLECTIONS_BASE_URL', COLLECTIONS_BASE_URL);
    await answerEverything();
    await callEveryMethod(new CollectionsClient({ logLevel: 'off' }));
    expect(requests).toHaveLength(5);
    for (const request of requests) expect(request.headers.authorization).toBe('Bearer env-key-123');
  });

  it('prefers the options over the environment', async () => {
    vi.stubEnv('COLLECTIONS_API_KEY', 'env-key-123');
    vi.stubEnv('COLLECTIONS_BASE_URL', 'https://elsewhere.test');
    await answerEverything();
    await collectionsClient().health();
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('refuses to construct without a key or base URL (the Tap variables are not read)', () => {
    vi.stubEnv('COLLECTIONS_API_KEY', undefined);
    vi.stubEnv('COLLECTIONS_BASE_URL', undefined);
    vi.stubEnv('TAP_API_KEY', 'tap-key');
    vi.stubEnv('TAP_BASE_URL', COLLECTIONS_BASE_URL);
    expect(() => new CollectionsClient({ logLevel: 'off' })).toThrow(ConfigurationError);
    expect(() => new CollectionsClient({ baseUrl: COLLECTIONS_BASE_URL })).toThrow(/COLLECTIONS_API_KEY/);
    expect(() => new CollectionsClient({ apiKey: API_KEY })).toThrow(/COLLECTIONS_BASE_URL/);
  });
});
