import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CollectionsClient, ConfigurationError } from '../../src/index.js';
import {
  acceptCollection,
  CHECK_URL,
  collectionInput,
  collectionsClient,
  DETAILS_URL,
  HEALTH_URL,
  REFERENCE_ID,
  statusBody,
} from '../helpers/collections.js';
import { API_KEY, COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Answers every endpoint: 202 on create, successful on status, a record on details, ok on health. */
function answerEverything() {
  server.use(
    acceptCollection(),
    http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'successful', transactionCode: 'OK' }))),
    http.get(DETAILS_URL, ({ params }) => HttpResponse.json({ success: true, data: { id: params.id } })),
    http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
  );
}

async function callEveryMethod(client: CollectionsClient) {
  await client.initiate(collectionInput());
  await client.checkStatus(REFERENCE_ID);
  await client.pollUntilSettled(REFERENCE_ID);
  await client.getById('abc');
  await client.health();
}

describe('authentication', () => {
  it('sends Authorization: Bearer <key> and no x-api-key on every request of every method', async () => {
    answerEverything();
    await callEveryMethod(collectionsClient());
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/collections/mobile-money',
      `GET /v1/collections/check/${REFERENCE_ID}`,
      `GET /v1/collections/check/${REFERENCE_ID}`,
      'GET /v1/collections/abc',
      'GET /health',
    ]);
    for (const request of requests) {
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers).not.toHaveProperty('x-api-key');
    }
  });

  it('calls an apiKey function per request, so a rotated key is used from the next request on', async () => {
    answerEverything();
    let key = 'key-one-0001';
    const client = collectionsClient({ apiKey: () => key });
    await client.health();
    key = 'key-two-0002';
    await client.checkStatus(REFERENCE_ID);
    expect(requests.map((request) => request.headers.authorization)).toEqual(['Bearer key-one-0001', 'Bearer key-two-0002']);
  });

  it('never lets a caller header replace Authorization', async () => {
    answerEverything();
    await collectionsClient({ headers: { Authorization: 'Bearer client-override' } }).health({
      headers: { AUTHORIZATION: 'Bearer call-override' },
    });
    expect(requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('reads COLLECTIONS_API_KEY and COLLECTIONS_BASE_URL from the environment', async () => {
    vi.stubEnv('COLLECTIONS_API_KEY', 'env-key-123');
    vi.stubEnv('COLLECTIONS_BASE_URL', COLLECTIONS_BASE_URL);
    answerEverything();
    await callEveryMethod(new CollectionsClient({ logLevel: 'off' }));
    expect(requests).toHaveLength(5);
    for (const request of requests) expect(request.headers.authorization).toBe('Bearer env-key-123');
  });

  it('prefers the options over the environment', async () => {
    vi.stubEnv('COLLECTIONS_API_KEY', 'env-key-123');
    vi.stubEnv('COLLECTIONS_BASE_URL', 'https://elsewhere.test');
    answerEverything();
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
