import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  NotFoundError,
  PermissionDeniedError,
  ResponseValidationError,
} from '../../src/index.js';
import { CHECK_URL, collectionsClient, HEALTH_URL, json, rejectionOf, statusBody, UUID_V4 } from '../helpers/collections.js';
import { API_KEY } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const notFound = () => json(404, { success: false, data: null, code: 'E_NOT_FOUND', message: 'No collection', requestId: 'r-1' });

describe('collections.verify', () => {
  it('resolves after GET /health and one authenticated status check of a random reference that answers 404', async () => {
    server.use(
      http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
      http.get(CHECK_URL, notFound),
    );
    await expect(collectionsClient().verify()).resolves.toBeUndefined();
    expect(requests.map((request) => request.method)).toEqual(['GET', 'GET']);
    expect(requests[0]?.path).toBe('/health');
    const probed = requests[1]?.path.split('/').pop();
    expect(requests[1]?.path).toMatch(/^\/v1\/collections\/check\//);
    expect(probed).toMatch(UUID_V4);
    for (const request of requests) expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it.each([404, 405])('reads a %i from /health as a base URL that does not serve the Collections API', async (status) => {
    server.use(
      http.get(HEALTH_URL, () => new HttpResponse('<html>Not Found</html>', { status, headers: { 'content-type': 'text/html' } })),
    );
    const error = await rejectionOf(collectionsClient().verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('GET /health answered HTTP');
    expect((error as Error).message).toContain('COLLECTIONS_BASE_URL');
    expect((error as Error).cause).toMatchObject({ status });
    expect(requests).toHaveLength(1);
  });

  it('reads an HTML 404 from the status check (a /health of something else) as a wrong base URL', async () => {
    server.use(
      http.get(HEALTH_URL, () => HttpResponse.text('OK')),
      http.get(CHECK_URL, () => new HttpResponse('<html>Not Found</html>', { status: 404, headers: { 'content-type': 'text/html' } })),
    );
    const error = await rejectionOf(collectionsClient().verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).cause).toBeInstanceOf(NotFoundError);
  });

  it('reads a 2xx from the status check that is not a collection status as a wrong base URL', async () => {
    server.use(
      http.get(HEALTH_URL, () => HttpResponse.text('OK')),
      http.get(CHECK_URL, () => HttpResponse.html('<html>Welcome</html>')),
    );
    const error = await rejectionOf(collectionsClient().verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).cause).toBeInstanceOf(ResponseValidationError);
  });

  it('resolves when the random reference happens to exist', async () => {
    server.use(
      http.get(HEALTH_URL, () => HttpResponse.text('OK')),
      http.get(CHECK_URL, ({ params }) => HttpResponse.json(statusBody({ referenceId: String(params.referenceId) }))),
    );
    await expect(collectionsClient().verify()).resolves.toBeUndefined();
  });

  it.each([
    [401, AuthenticationError],
    [403, PermissionDeniedError],
  ])('passes a %i from /health through as its own class, without the key', async (status, kind) => {
    server.use(http.get(HEALTH_URL, () => json(status, { success: false, code: 'E_AUTH', message: 'no' })));
    const error = await rejectionOf(collectionsClient().verify());
    expect(error).toBeInstanceOf(kind);
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  it('passes a 403 from the status check through (a key /health accepts but that may not read collections)', async () => {
    server.use(
      http.get(HEALTH_URL, () => HttpResponse.text('OK')),
      http.get(CHECK_URL, () => json(403, { success: false, code: 'E_FORBIDDEN', message: 'no' })),
    );
    expect(await rejectionOf(collectionsClient().verify())).toBeInstanceOf(PermissionDeniedError);
  });

  it('passes an unreachable service through as ConnectionError', async () => {
    server.use(http.get(HEALTH_URL, () => HttpResponse.error()));
    expect(await rejectionOf(collectionsClient({ maxRetries: 0 }).verify())).toBeInstanceOf(ConnectionError);
  });
});
