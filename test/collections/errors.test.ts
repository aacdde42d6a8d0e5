import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  COLLECTIONS_VALIDATION_ERROR,
  ConfigurationError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  TapCollectionsError,
  UnprocessableEntityError,
} from '../../src/index.js';
import {
  CHECK_URL,
  checkPath,
  collectionInput,
  collectionsClient,
  DETAILS_URL,
  HEALTH_URL,
  INITIATE_URL,
  json,
  REFERENCE_ID,
  rejectionOf,
  validationProblem,
} from '../helpers/collections.js';
import { API_KEY } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

afterEach(() => {
  vi.useRealTimers();
});

const STATUSES: [status: number, errorClass: typeof ApiError][] = [
  [400, BadRequestError],
  [401, AuthenticationError],
  [403, PermissionDeniedError],
  [404, NotFoundError],
  [422, UnprocessableEntityError],
  [429, RateLimitError],
  [500, InternalServerError],
];

const BODIES: [kind: string, reply: (status: number) => Response, expectedBody: unknown][] = [
  [
    'an unknown JSON shape',
    (status) => HttpResponse.json({ whatever: [1, 2], nested: { deep: true } }, { status }),
    { whatever: [1, 2], nested: { deep: true } },
  ],
  [
    'an HTML page',
    (status) => new HttpResponse('<html><body><h1>Bad Gateway</h1></body></html>', { status, headers: { 'content-type': 'text/html' } }),
    '<html><body><h1>Bad Gateway</h1></body></html>',
  ],
  ['an empty body', (status) => new HttpResponse(null, { status }), undefined],
  ['a JSON null', (status) => HttpResponse.json(null, { status }), null],
  ['a JSON array', (status) => HttpResponse.json([{ code: 'X' }], { status }), [{ code: 'X' }]],
];

describe('error statuses of section 7 map by status', () => {
  describe.each(BODIES)('with %s', (_kind, reply, expectedBody) => {
    it.each(STATUSES)('%i → %O', async (status, errorClass) => {
      server.use(http.get(CHECK_URL, () => reply(status)));
      const rejected = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
      // A status check's 404 without the service's envelope proves nothing about a payment: the call says the base
      // URL is wrong (ConfigurationError naming baseUrl), with the mapped NotFoundError as its cause.
      if (status === 404) {
        expect(rejected).toBeInstanceOf(ConfigurationError);
        expect((rejected as Error).message).toContain('baseUrl');
      }
      const error = status === 404 ? (rejected as Error).cause : rejected;
      expect(error).toBeInstanceOf(errorClass);
      expect((error as ApiError).serviceEnvelope).toBe(false);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toBeInstanceOf(TapCollectionsError);
      expect(error).toMatchObject({ status, service: 'collections', code: undefined, requestId: undefined });
      expect((error as ApiError).body).toEqual(expectedBody);
      if (error instanceof UnprocessableEntityError) expect(error.errors).toEqual([]);
      expect(requests).toHaveLength(1);
    });
  });

  it.each([
    [502, 'Bad gateway'],
    [503, 'Service unavailable'],
    [504, 'Gateway timeout'],
  ])('%i → InternalServerError (%s)', async (status, summary) => {
    server.use(http.get(CHECK_URL, () => new HttpResponse(null, { status })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status });
    expect((error as Error).message).toContain(summary);
  });

  it('reads code, message and requestId from a Collections body of any status', async () => {
    server.use(
      http.get(CHECK_URL, () =>
        json(
          403,
          { success: false, code: 'E_FORBIDDEN', message: 'Key lacks collections scope', requestId: 'req-403' },
          { 'x-request-id': 'hdr-1' },
        ),
      ),
    );
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error).toMatchObject({ code: 'E_FORBIDDEN', requestId: 'req-403' });
    expect((error as Error).message).toContain('Key lacks collections scope');
  });

  it('takes requestId from the x-request-id header when the body has none', async () => {
    server.use(http.get(CHECK_URL, () => new HttpResponse('<html>oops</html>', { status: 400, headers: { 'x-request-id': 'hdr-400' } })));
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toMatchObject({ status: 400, requestId: 'hdr-400' });
  });

  it('never puts the key in an error, even when the error body echoes it', async () => {
    server.use(http.get(CHECK_URL, () => json(401, { success: false, message: `Invalid key ${API_KEY}`, code: 'E_UNAUTHORIZED' })));
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(`${(error as Error).message} ${(error as Error).stack} ${JSON.stringify(error)}`).not.toContain(API_KEY);
  });
});

describe('422: the validation problem body of section 7', () => {
  it('exposes errors, code and the body requestId (not the header) as sent', async () => {
    const problem = validationProblem(checkPath());
    server.use(http.get(CHECK_URL, () => json(422, problem, { 'x-request-id': 'hdr-should-lose' })));
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    const unprocessable = error as UnprocessableEntityError;
    expect(unprocessable.status).toBe(422);
    expect(unprocessable.service).toBe('collections');
    expect(unprocessable.code).toBe('E_VALIDATION_ERROR');
    expect(unprocessable.code).toBe(COLLECTIONS_VALIDATION_ERROR);
    expect(unprocessable.requestId).toBe('req-01HZX3K9Q7M2V8T4C6B1N5R0PE');
    expect(unprocessable.errors).toEqual([
      { field: 'params.referenceId', rule: 'uuid', message: 'The referenceId field must be a valid UUID' },
    ]);
    expect(unprocessable.body).toEqual(problem);
    expect(unprocessable.message).toContain('Validation failure');
    expect(requests).toHaveLength(1);
  });

  it('keeps every item of errors[], tolerating items with missing fields', async () => {
    const problem = {
      ...validationProblem(),
      errors: [
        { message: 'must be a number', rule: 'number', field: 'body.amount' },
        { rule: 'required', field: 'body.productId' },
        'not-an-object',
      ],
    };
    server.use(http.post(INITIATE_URL, () => json(422, problem)));
    const error = await rejectionOf(collectionsClient().initiate(collectionInput()));
    expect((error as UnprocessableEntityError).errors).toEqual([
      { field: 'body.amount', rule: 'number', message: 'must be a number' },
      { field: 'body.productId', rule: 'required', message: '' },
      { field: '', rule: '', message: '' },
    ]);
  });

  it('maps a 422 from getById with the same body', async () => {
    server.use(http.get(DETAILS_URL, () => json(422, validationProblem('/v1/collections/abc'))));
    const error = await rejectionOf(collectionsClient().getById('abc'));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ code: 'E_VALIDATION_ERROR', errors: [{ rule: 'uuid', field: 'params.referenceId' }] });
  });
});

describe('429: retryAfterMs from Retry-After', () => {
  it('reads the delay-seconds form', async () => {
    server.use(http.get(CHECK_URL, () => json(429, { success: false }, { 'retry-after': '7' })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(7000);
  });

  it('reads the HTTP-date form', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-21T10:00:00.000Z') });
    server.use(http.get(CHECK_URL, () => json(429, { success: false }, { 'retry-after': 'Sat, 21 Nov 2026 10:00:30 GMT' })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBe(30_000);
  });

  it('reads a past HTTP date as 0', async () => {
    server.use(http.get(CHECK_URL, () => json(429, { success: false }, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
    expect((error as RateLimitError).retryAfterMs).toBe(0);
  });

  it('leaves retryAfterMs undefined without the header', async () => {
    server.use(http.get(CHECK_URL, () => json(429, { success: false })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfterMs).toBeUndefined();
  });

  it('retries a 429 after Retry-After: 0 and resolves', async () => {
    let calls = 0;
    server.use(
      http.get(CHECK_URL, () => {
        calls++;
        return calls === 1
          ? json(429, {}, { 'retry-after': '0' })
          : json(200, { success: true, data: { referenceId: REFERENCE_ID, statusText: 'pending' } });
      }),
    );
    const status = await collectionsClient({ maxRetries: 1 }).checkStatus(REFERENCE_ID);
    expect(status.statusText).toBe('pending');
    expect(requests).toHaveLength(2);
  });

  it('gives up after maxRetries with the last RateLimitError', async () => {
    server.use(http.get(CHECK_URL, () => json(429, {}, { 'retry-after': '0' })));
    const error = await rejectionOf(collectionsClient({ maxRetries: 2 }).checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(RateLimitError);
    expect(requests).toHaveLength(3);
  });
});

describe('other methods map errors too', () => {
  it.each([
    ['health', () => collectionsClient().health(), HEALTH_URL, 'get'],
    ['getById', () => collectionsClient().getById('abc'), DETAILS_URL, 'get'],
    ['initiate', () => collectionsClient().initiate(collectionInput()), INITIATE_URL, 'post'],
  ] as const)('%s: 401 → AuthenticationError, 403 → PermissionDeniedError, 400 → BadRequestError', async (_name, call, url, method) => {
    for (const [status, errorClass] of [
      [401, AuthenticationError],
      [403, PermissionDeniedError],
      [400, BadRequestError],
    ] as const) {
      server.use(http[method](url, () => json(status, { success: false, code: `E_${status}` })));
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(errorClass);
      expect(error).toMatchObject({ status, code: `E_${status}`, service: 'collections' });
    }
    expect(requests).toHaveLength(3);
  });
});
