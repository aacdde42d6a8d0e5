import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { NotFoundError, RequestValidationError, ResponseValidationError } from '../../src/index.js';
import { collectionsClient, DETAILS_URL, issuePaths, json, rejectionOf } from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

/** Answers any path with the record `{ path: <the path as received> }`. */
function echoAnyPath() {
  return http.get(`${COLLECTIONS_BASE_URL}/*`, ({ request }) =>
    HttpResponse.json({ success: true, data: { path: new URL(request.url).pathname } }),
  );
}

describe('getById', () => {
  it('GETs /v1/collections/:id and resolves with data, whatever its fields', async () => {
    const record = {
      id: 'col_123',
      amount: 25,
      customer: { phone: '260977123456' },
      history: [{ at: '2026-11-21T10:00:00Z', statusText: 'pending' }],
      flag: null,
    };
    server.use(http.get(DETAILS_URL, () => HttpResponse.json({ success: true, data: record, meta: 1 })));
    expect(await collectionsClient().getById('col_123')).toEqual(record);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: '/v1/collections/col_123' });
  });

  it('resolves with an empty record', async () => {
    server.use(http.get(DETAILS_URL, () => HttpResponse.json({ success: true, data: {} })));
    expect(await collectionsClient().getById('x')).toEqual({});
  });

  it.each(['', '.', '..', 'a/b', 'a\\b', 'a?b', 'a#b', '/', '?', '#', '../health', 'abc/', 42, undefined])(
    'refuses %j before sending',
    async (id) => {
      server.use(echoAnyPath());
      const error = await rejectionOf(collectionsClient().getById(id as never));
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(issuePaths(error)).toEqual(['id']);
      expect(requests).toHaveLength(0);
    },
  );

  it.each([
    ['abc def', '/v1/collections/abc%20def'],
    ['ü', '/v1/collections/%C3%BC'],
    ['a%2Fb', '/v1/collections/a%252Fb'],
    ['%2e%2e', '/v1/collections/%252e%252e'],
    ['...', '/v1/collections/...'],
    ['a+b&c=d', '/v1/collections/a%2Bb%26c%3Dd'],
    ['col_123-ABC', '/v1/collections/col_123-ABC'],
  ])('percent-encodes %j as %s', async (id, path) => {
    server.use(echoAnyPath());
    const record = await collectionsClient().getById(id);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.path).toBe(path);
    expect(record).toEqual({ path });
  });

  it('maps 404 to NotFoundError', async () => {
    server.use(http.get(DETAILS_URL, () => json(404, { success: false, code: 'E_NOT_FOUND' })));
    const error = await rejectionOf(collectionsClient().getById('nope'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: 'E_NOT_FOUND', service: 'collections' });
  });

  it.each([
    ['data missing', { success: true }],
    ['data not an object', { success: true, data: 'x' }],
    ['data an array', { success: true, data: [1] }],
  ])('rejects a 2xx with %s with ResponseValidationError', async (_case, body) => {
    server.use(http.get(DETAILS_URL, () => HttpResponse.json(body)));
    expect(await rejectionOf(collectionsClient().getById('x'))).toBeInstanceOf(ResponseValidationError);
  });
});
