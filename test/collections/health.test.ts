import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { AuthenticationError, InternalServerError } from '../../src/index.js';
import { collectionsClient, HEALTH_URL, json, rejectionOf } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

describe('health', () => {
  it('GETs /health and resolves with a JSON body parsed', async () => {
    server.use(http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok', uptime: 1234, checks: [{ db: 'up' }] })));
    expect(await collectionsClient().health()).toEqual({ status: 'ok', uptime: 1234, checks: [{ db: 'up' }] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/health' });
  });

  it('resolves with the text of a body that is not JSON', async () => {
    server.use(http.get(HEALTH_URL, () => HttpResponse.text('OK')));
    expect(await collectionsClient().health()).toBe('OK');
  });

  it('resolves with an HTML page as text, never a ResponseValidationError', async () => {
    server.use(http.get(HEALTH_URL, () => HttpResponse.html('<html><body>healthy</body></html>')));
    expect(await collectionsClient().health()).toBe('<html><body>healthy</body></html>');
  });

  it('resolves with JSON scalars as they are', async () => {
    server.use(http.get(HEALTH_URL, () => HttpResponse.json(true)));
    expect(await collectionsClient().health()).toBe(true);
  });

  it('resolves with undefined for an empty 204', async () => {
    server.use(http.get(HEALTH_URL, () => new HttpResponse(null, { status: 204 })));
    expect(await collectionsClient().health()).toBeUndefined();
  });

  it('maps 401 to AuthenticationError', async () => {
    server.use(http.get(HEALTH_URL, () => json(401, { success: false, code: 'E_UNAUTHORIZED', message: 'Invalid API key' })));
    const error = await rejectionOf(collectionsClient().health());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'E_UNAUTHORIZED', service: 'collections' });
    expect(requests).toHaveLength(1);
  });

  it('maps a 500 to InternalServerError after its retries', async () => {
    server.use(http.get(HEALTH_URL, () => json(500, {}, { 'retry-after': '0' })));
    expect(await rejectionOf(collectionsClient({ maxRetries: 1 }).health())).toBeInstanceOf(InternalServerError);
    expect(requests).toHaveLength(2);
  });
});
