/** Section 7 of the Tap document: every row maps to its typed error, whatever the body looks like. */
import { HttpResponse, http, type JsonBodyType } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  TAP_ALREADY_EXISTS,
  TapCollectionsError,
} from '../../src/index.js';
import { customerQueryInput, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_URL, rejectionOf, tapClient } from '../helpers/tap.js';

const { server, requests } = useMswServer();

type ApiErrorClass = typeof ApiError;
const ALL_CLASSES: ApiErrorClass[] = [
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  InternalServerError,
];

async function submitAgainst(status: number, body: JsonBodyType, headers: Record<string, string> = {}) {
  server.use(http.post(QUERIES_URL, () => HttpResponse.json(body, { status, headers })));
  return rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
}

function expectOnly(error: unknown, Expected: ApiErrorClass) {
  expect(error).toBeInstanceOf(Expected);
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toBeInstanceOf(TapCollectionsError);
  expect(error).toBeInstanceOf(Error);
  for (const Other of ALL_CLASSES) if (Other !== Expected) expect(error).not.toBeInstanceOf(Other);
  expect((error as Error).name).toBe(Expected.name);
}

describe('section 7: each condition maps to its typed error', () => {
  it.each([
    ['API key missing, invalid, revoked or expired', 401, 'auth/unauthorized', 'Invalid API key', AuthenticationError],
    ['key not authorized for customer queries', 403, 'auth/forbidden', 'Key not authorized for customer queries', PermissionDeniedError],
    ['tag does not exist (404)', 404, 'resource/not-found-error', 'Tag not found', NotFoundError],
    ['tag does not exist (400)', 400, 'validation/tag-not-found', 'Tag TAG-0001 does not exist', BadRequestError],
    ['tag is not active (404)', 404, 'resource/not-found-error', 'Tag is not active', NotFoundError],
    ['tag is not active (400)', 400, 'tag/inactive', 'Tag is inactive', BadRequestError],
    ['no number for the provider (404)', 404, 'resource/not-found-error', 'No mobile money number for airtel_money', NotFoundError],
    ['merchantId/terminalId/referenceId reused', 409, TAP_ALREADY_EXISTS, 'Customer query already exists', ConflictError],
  ] as const)('%s → %i', async (_condition, status, identifier, message, Expected) => {
    const body = tapError(status, identifier, message);
    const error = await submitAgainst(status, body, { 'x-request-id': `req-${status}` });
    expectOnly(error, Expected);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(status);
    expect(apiError.code).toBe(identifier);
    expect(apiError.message).toContain(message);
    expect(apiError.message).toContain(`HTTP ${status}`);
    expect(apiError.requestId).toBe(`req-${status}`);
    expect(apiError.service).toBe('tap');
    expect(apiError.body).toEqual(body);
    expect(apiError.retryAfterMs).toBeUndefined();
  });

  it('gives 409 the documented identifier', async () => {
    const error = await submitAgainst(409, tapError(409, 'resource/already-exists-error', 'Customer query already exists'));
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe('resource/already-exists-error');
    expect(TAP_ALREADY_EXISTS).toBe('resource/already-exists-error');
  });

  it('leaves requestId undefined when there is no x-request-id header', async () => {
    const error = await submitAgainst(404, tapError(404, 'resource/not-found-error', 'Tag not found'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).requestId).toBeUndefined();
  });

  it.each([400, 401, 403, 404, 409])('does not retry a %i (one request only, default maxRetries)', async (status) => {
    await submitAgainst(status, tapError(status, 'x', 'no'));
    expect(requests).toHaveLength(1);
  });

  it('maps the same statuses on listCustomerQueries', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json(tapError(403, 'auth/forbidden', 'Forbidden'), { status: 403 })));
    const error = await rejectionOf(tapClient().listCustomerQueries());
    expectOnly(error, PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: 'auth/forbidden', service: 'tap' });
  });
});

describe('error bodies that are not the envelope', () => {
  it('maps a 403 HTML proxy page by status, keeping the text as body', async () => {
    const html = '<html><head><title>403 Forbidden</title></head><body>nginx</body></html>';
    server.use(http.post(QUERIES_URL, () => HttpResponse.html(html, { status: 403 })));
    const error = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
    expectOnly(error, PermissionDeniedError);
    expect(error).toMatchObject({ status: 403, code: undefined, body: html, service: 'tap', requestId: undefined });
    expect((error as Error).message).toContain('HTTP 403');
  });

  it('maps a 500 with an empty body to InternalServerError with body undefined', async () => {
    server.use(http.get(QUERIES_URL, () => new HttpResponse(null, { status: 500, headers: { 'x-request-id': 'req-500' } })));
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).listCustomerQueries());
    expectOnly(error, InternalServerError);
    expect(error).toMatchObject({ status: 500, code: undefined, body: undefined, requestId: 'req-500', service: 'tap' });
    expect(requests).toHaveLength(1);
  });

  it.each([502, 503, 504])('maps %i to InternalServerError', async (status) => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.text('upstream failed', { status })));
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).listCustomerQueries());
    expectOnly(error, InternalServerError);
    expect(error).toMatchObject({ status, body: 'upstream failed' });
  });

  it('maps a 401 with a JSON body of another shape, code undefined', async () => {
    const error = await submitAgainst(401, { detail: 'token expired', error: { nested: true } });
    expectOnly(error, AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: undefined, body: { detail: 'token expired', error: { nested: true } } });
  });

  it('maps an unlisted 4xx to a plain ApiError', async () => {
    const error = await submitAgainst(418, tapError(418, 'teapot', 'I am a teapot'));
    expect(error).toBeInstanceOf(ApiError);
    for (const Other of ALL_CLASSES) expect(error).not.toBeInstanceOf(Other);
    expect(error).toMatchObject({ status: 418, code: 'teapot', service: 'tap' });
  });

  it('maps a 429 to RateLimitError with retryAfterMs from Retry-After', async () => {
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json(tapError(429, 'rate-limit', 'Slow down'), { status: 429, headers: { 'retry-after': '0' } }),
      ),
    );
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).listCustomerQueries());
    expectOnly(error, RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(0);
  });

  it('fails at once on a 429 asking for longer than maxRetryAfterMs', async () => {
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json(tapError(429, 'rate-limit', 'Slow down'), { status: 429, headers: { 'retry-after': '120' } }),
      ),
    );
    const error = await rejectionOf(tapClient().listCustomerQueries());
    expectOnly(error, RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(120_000);
    expect(requests).toHaveLength(1);
  });

  it('serializes to plain data', async () => {
    const body = tapError(409, TAP_ALREADY_EXISTS, 'Customer query already exists');
    const error = await submitAgainst(409, body, { 'x-request-id': 'req-json' });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'ConflictError',
      status: 409,
      code: TAP_ALREADY_EXISTS,
      requestId: 'req-json',
      service: 'tap',
      body,
    });
  });
});
