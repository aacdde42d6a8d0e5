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
import { API_KEY, customerQuery, customerQueryInput } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_PATH, QUERIES_URL, rejectionOf, tapClient } from '../helpers/tap.js';

const { server, requests } = useMswServer();

describe('verify', () => {
  it('resolves after one authenticated GET of the query list', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [customerQuery(customerQueryInput())] })));
    await expect(tapClient().verify()).resolves.toBeUndefined();
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: QUERIES_PATH });
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
  });

  it.each([404, 405])('reads a %i from the list route as a base URL that does not serve the Tap API', async (status) => {
    server.use(
      http.get(QUERIES_URL, () => new HttpResponse('<html>Not Found</html>', { status, headers: { 'content-type': 'text/html' } })),
    );
    const error = await rejectionOf(tapClient().verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).message).toContain('TAP_BASE_URL');
    expect((error as ConfigurationError).cause).toMatchObject({ status });
    if (status === 404) expect((error as ConfigurationError).cause).toBeInstanceOf(NotFoundError);
  });

  it('reads a 2xx that is not the Tap list (another server on that URL) as a configuration problem', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.text('<html>Welcome</html>')));
    const error = await rejectionOf(tapClient().verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).cause).toBeInstanceOf(ResponseValidationError);
  });

  it.each([
    [401, AuthenticationError],
    [403, PermissionDeniedError],
  ])('passes a %i through as its own class, without the key', async (status, kind) => {
    server.use(
      http.get(QUERIES_URL, () => HttpResponse.json({ success: false, code: status, error: 'auth/error', message: 'no' }, { status })),
    );
    const error = await rejectionOf(tapClient().verify());
    expect(error).toBeInstanceOf(kind);
    expect(JSON.stringify(error)).not.toContain(API_KEY);
    expect(String((error as Error).message)).not.toContain(API_KEY);
  });

  it('passes an unreachable service through as ConnectionError', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.error()));
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).verify());
    expect(error).toBeInstanceOf(ConnectionError);
  });
});
