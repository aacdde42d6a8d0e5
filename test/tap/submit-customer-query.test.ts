import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  ConflictError,
  type CustomerQueryInput,
  InternalServerError,
  mobileNumberFor,
  RequestValidationError,
  ResponseValidationError,
  TAP_ALREADY_EXISTS,
  TapClient,
  TapCollectionsError,
  UnknownOutcomeError,
} from '../../src/index.js';
import { API_KEY, customerQuery, customerQueryInput, TAP_BASE_URL, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { echoSubmission, QUERIES_PATH, rejectionOf, tapClient, UUID_V4 } from '../helpers/tap.js';

const PATH = `${TAP_BASE_URL}/v1/tap/partners/customer-queries`;
const { server, requests } = useMswServer();
const client = () => new TapClient({ apiKey: API_KEY, baseUrl: TAP_BASE_URL, logLevel: 'off' });

/** Answers 503 (Retry-After: 0) to the first POST, then echoes the query with 201. */
function unavailableOnceThenCreated() {
  let posts = 0;
  return http.post(PATH, async ({ request }) => {
    posts++;
    if (posts === 1) {
      return HttpResponse.json(tapError(503, 'service/unavailable', 'Try again'), { status: 503, headers: { 'retry-after': '0' } });
    }
    return HttpResponse.json({ success: true, data: customerQuery((await request.json()) as CustomerQueryInput) }, { status: 201 });
  });
}

/** Answers every POST with 201 and `data` as the query. */
const createdWith = (data: unknown) => http.post(PATH, () => HttpResponse.json({ success: true, data }, { status: 201 }));

/** The lookup a create makes after an unreadable 2xx: the partner's list, without this query. */
const noQueriesListed = () => http.get(PATH, () => HttpResponse.json({ success: true, data: [] }));

/** The referenceId in the body of the `index`th request. */
function sentReferenceId(index: number): string | undefined {
  return (requests[index]?.body as { referenceId?: string } | undefined)?.referenceId;
}

function issuePaths(error: unknown): string[] {
  expect(error).toBeInstanceOf(RequestValidationError);
  return (error as RequestValidationError).issues.map((issue) => issue.path).sort();
}

describe('submitCustomerQuery', () => {
  it('posts the input with x-api-key and resolves with the parsed query', async () => {
    server.use(
      http.post(PATH, async ({ request }) =>
        HttpResponse.json({ success: true, data: customerQuery((await request.json()) as never) }, { status: 201 }),
      ),
    );
    const query = await client().submitCustomerQuery(customerQueryInput());
    expect(query.customer).toEqual({ firstName: 'Mwila', lastName: 'Banda' });
    expect(mobileNumberFor(query)).toBe('260977123456');
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
    expect(requests[0]?.body).toEqual(customerQueryInput());
  });

  it('generates a UUID v4 referenceId when absent', async () => {
    server.use(
      http.post(PATH, async ({ request }) =>
        HttpResponse.json({ success: true, data: customerQuery((await request.json()) as never) }, { status: 201 }),
      ),
    );
    const { referenceId: _omitted, ...input } = customerQueryInput();
    const query = await client().submitCustomerQuery(input);
    expect(query.transaction.referenceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sentReferenceId(0)).toBe(query.transaction.referenceId);
  });

  it('maps 409 to ConflictError with the envelope identifier', async () => {
    server.use(
      http.post(PATH, () =>
        HttpResponse.json(tapError(409, 'resource/already-exists-error', 'Customer query already exists'), { status: 409 }),
      ),
    );
    const error = await client()
      .submitCustomerQuery(customerQueryInput())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'resource/already-exists-error', service: 'tap' });
  });

  it('rejects bad input naming every field, sending nothing', async () => {
    const error = await client()
      .submitCustomerQuery({ ...customerQueryInput(), merchantId: '', amount: Number.NaN, referenceId: 'not-a-uuid' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path).sort()).toEqual(['amount', 'merchantId', 'referenceId']);
    expect(requests).toHaveLength(0);
  });
});

describe('submitCustomerQuery: the request', () => {
  it('sends a JSON POST to the documented path with exactly the six input fields', async () => {
    server.use(echoSubmission());
    await tapClient().submitCustomerQuery(customerQueryInput());
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(QUERIES_PATH);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.accept).toBe('application/json');
    expect(Object.keys(request?.body as object).sort()).toEqual([
      'amount',
      'merchantId',
      'merchantName',
      'referenceId',
      'tagId',
      'terminalId',
    ]);
  });

  it('sends x-api-key with the key and no authorization header', async () => {
    server.use(echoSubmission());
    await tapClient().submitCustomerQuery(customerQueryInput());
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
    expect(requests[0]?.headers).not.toHaveProperty('authorization');
  });

  it('sends the client headers and the per-call headers, the call winning on a clash', async () => {
    server.use(echoSubmission());
    await tapClient({ headers: { 'x-partner-trace': 'client', 'x-shared': 'client' } }).submitCustomerQuery(customerQueryInput(), {
      headers: { 'x-call-trace': 'call-1', 'x-shared': 'call' },
    });
    expect(requests[0]?.headers).toMatchObject({ 'x-partner-trace': 'client', 'x-call-trace': 'call-1', 'x-shared': 'call' });
  });

  it('never lets a caller header named X-API-KEY replace the key', async () => {
    server.use(echoSubmission());
    await tapClient({ headers: { 'X-API-KEY': 'client-override' } }).submitCustomerQuery(customerQueryInput(), {
      headers: { 'X-Api-Key': 'call-override' },
    });
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
  });

  it('keeps a caller-supplied referenceId as is', async () => {
    server.use(echoSubmission());
    const referenceId = 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D';
    const query = await tapClient().submitCustomerQuery(customerQueryInput({ referenceId }));
    expect(sentReferenceId(0)).toBe(referenceId);
    expect(query.transaction.referenceId).toBe(referenceId);
  });

  it('generates a different referenceId for each call', async () => {
    server.use(echoSubmission());
    const { referenceId: _omitted, ...input } = customerQueryInput();
    const client = tapClient();
    await client.submitCustomerQuery(input);
    await client.submitCustomerQuery({ ...input, merchantId: 'merchant-002', terminalId: 'terminal-002' });
    const ids = requests.map((request) => (request.body as { referenceId: string }).referenceId);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('sends the same generated referenceId on every attempt of one call', async () => {
    server.use(unavailableOnceThenCreated());
    const { referenceId: _omitted, ...input } = customerQueryInput();
    const query = await tapClient().submitCustomerQuery(input);
    expect(requests.map((request) => request.method)).toEqual(['POST', 'POST']);
    const ids = requests.map((request) => (request.body as { referenceId: string }).referenceId);
    expect(ids[0]).toMatch(UUID_V4);
    expect(ids[1]).toBe(ids[0]);
    expect(query.transaction.referenceId).toBe(ids[0]);
  });
});

describe('submitCustomerQuery: input validation (nothing is sent)', () => {
  const { referenceId: _omitted, ...withoutReference } = customerQueryInput();

  it.each([
    ['merchantId', ''],
    ['merchantName', ''],
    ['terminalId', ''],
    ['tagId', ''],
    ['merchantId', '   '],
    ['merchantName', '\t'],
    ['terminalId', ' \n '],
    ['tagId', '  '],
    ['merchantId', 42],
    ['tagId', null],
    ['amount', 0],
    ['amount', -1],
    ['amount', -0.01],
    ['amount', Number.NaN],
    ['amount', Number.POSITIVE_INFINITY],
    ['amount', Number.NEGATIVE_INFINITY],
    ['amount', '125.50'],
    ['referenceId', 'not-a-uuid'],
    ['referenceId', '3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0'],
    ['referenceId', '3f1c1d7e8a2b4c3d9e4f5a6b7c8d9e0f'],
    ['referenceId', ''],
    ['referenceId', 12345],
  ])('rejects %s = %j', async (field, value) => {
    const error = await rejectionOf(tapClient().submitCustomerQuery({ ...customerQueryInput(), [field]: value } as CustomerQueryInput));
    expect(issuePaths(error)).toEqual([field]);
    expect(requests).toHaveLength(0);
  });

  it.each(['merchantId', 'merchantName', 'terminalId', 'amount', 'tagId'])('rejects a missing %s as required', async (field) => {
    const input: Record<string, unknown> = { ...withoutReference };
    delete input[field];
    const error = await rejectionOf(tapClient().submitCustomerQuery(input as unknown as CustomerQueryInput));
    expect((error as RequestValidationError).issues).toEqual([{ path: field, message: 'is required' }]);
    expect(requests).toHaveLength(0);
  });

  it('names every bad field at once', async () => {
    const error = await rejectionOf(
      tapClient().submitCustomerQuery({
        merchantId: '',
        merchantName: '  ',
        terminalId: undefined,
        amount: Number.POSITIVE_INFINITY,
        tagId: '',
        referenceId: '',
      } as unknown as CustomerQueryInput),
    );
    expect(issuePaths(error)).toEqual(['amount', 'merchantId', 'merchantName', 'referenceId', 'tagId', 'terminalId']);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect((error as Error).message).toContain('merchantName');
    expect(requests).toHaveLength(0);
  });

  it.each([null, undefined, 'merchant-001', 42, [customerQueryInput()]])('rejects input %j that is not an object', async (input) => {
    const error = await rejectionOf(tapClient().submitCustomerQuery(input as unknown as CustomerQueryInput));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.length).toBeGreaterThan(0);
    expect(requests).toHaveLength(0);
  });

  it('does not echo the rejected value in the error', async () => {
    const error = await rejectionOf(tapClient().submitCustomerQuery({ ...customerQueryInput(), tagId: 260977123456 } as never));
    expect(issuePaths(error)).toEqual(['tagId']);
    expect((error as Error).message).not.toContain('260977123456');
  });

  it.each([
    [{ timeoutMs: 0 }, 'options.timeoutMs'],
    [{ timeoutMs: -5 }, 'options.timeoutMs'],
    [{ timeoutMs: 1.5 }, 'options.timeoutMs'],
    [{ maxRetries: -1 }, 'options.maxRetries'],
    [{ maxRetries: 2.5 }, 'options.maxRetries'],
    [{ headers: { 'x-trace': 'a\r\nx-injected: 1' } }, 'options.headers.x-trace'],
    [{ headers: { 'x-trace': 'a\nb' } }, 'options.headers.x-trace'],
    [{ headers: { 'bad header': 'value' } }, 'options.headers.bad header'],
    [{ signal: 'abort' }, 'options.signal'],
  ])('rejects the per-call options %j', async (options, path) => {
    const error = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput(), options as never));
    expect(issuePaths(error)).toEqual([path]);
    expect(requests).toHaveLength(0);
  });
});

describe('submitCustomerQuery: the response', () => {
  it('keeps fields the document does not list, at the top level and nested', async () => {
    server.use(
      http.post(PATH, () =>
        HttpResponse.json(
          {
            success: true,
            meta: { version: 2 },
            data: {
              ...customerQuery(customerQueryInput()),
              channel: 'nfc',
              customer: { firstName: 'Mwila', lastName: 'Banda', middleName: 'C' },
              transaction: { ...customerQuery(customerQueryInput()).transaction, fee: { fixed: 1 } },
            },
          },
          { status: 201 },
        ),
      ),
    );
    const query = await tapClient().submitCustomerQuery(customerQueryInput());
    expect(query).toMatchObject({ channel: 'nfc', customer: { middleName: 'C' }, transaction: { fee: { fixed: 1 }, amount: 125.5 } });
  });

  it('accepts operators and statuses beyond the documented ones', async () => {
    const base = customerQuery(customerQueryInput());
    server.use(
      createdWith({
        ...base,
        tag: {
          ...base.tag,
          status: 'suspended_pending_review',
          mobileNumbers: [
            { operator: 'mtn_money', mobileNumber: '260967000001', status: 'active' },
            { operator: 'airtel_money', mobileNumber: '260977123456', status: 'blocked' },
          ],
        },
        transaction: { ...base.transaction, status: 'settled' },
      }),
    );
    const query = await tapClient().submitCustomerQuery(customerQueryInput());
    expect(query.tag.status).toBe('suspended_pending_review');
    expect(query.tag.mobileNumbers.map((number) => number.operator)).toEqual(['mtn_money', 'airtel_money']);
    expect(query.transaction.status).toBe('settled');
    expect(mobileNumberFor(query, 'mtn_money')).toBe('260967000001');
    expect(mobileNumberFor(query)).toBeUndefined();
  });

  it('rejects a 2xx body missing a required field with ResponseValidationError naming the path', async () => {
    const { customer: _dropped, ...incomplete } = customerQuery(customerQueryInput());
    const body = { success: true, data: incomplete };
    server.use(
      http.post(PATH, () => HttpResponse.json(body, { status: 201, headers: { 'x-request-id': 'req-rve' } })),
      noQueriesListed(),
    );
    const unknown = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
    expect(unknown).toBeInstanceOf(UnknownOutcomeError);
    const error = (unknown as UnknownOutcomeError).cause;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    const rve = error as ResponseValidationError;
    expect(rve.issues.map((issue) => issue.path)).toEqual(['data.customer']);
    expect(rve.body).toEqual(body);
    expect(rve).toMatchObject({ status: 201, service: 'tap', requestId: 'req-rve' });
    expect(requests.map((request) => request.method)).toEqual(['POST', 'GET']);
  });

  it('names every wrong nested field', async () => {
    const base = customerQuery(customerQueryInput());
    server.use(
      createdWith({
        ...base,
        transaction: { ...base.transaction, amount: '125.50' },
        tag: { ...base.tag, mobileNumbers: [{ operator: 'airtel_money' }] },
      }),
      noQueriesListed(),
    );
    // A 2xx created the query; the list not showing it proves nothing, so the outcome is unknown.
    const unknown = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
    expect(unknown).toBeInstanceOf(UnknownOutcomeError);
    const error = (unknown as UnknownOutcomeError).cause as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues.map((issue) => issue.path).sort()).toEqual([
      'data.tag.mobileNumbers.0.mobileNumber',
      'data.tag.mobileNumbers.0.status',
      'data.transaction.amount',
    ]);
  });

  it.each([
    {
      body: 'a JSON body without data',
      answer: () => HttpResponse.json({ success: true }, { status: 201 }),
      status: 201,
      sent: { success: true },
      issues: [{ path: 'data', message: 'is required' }],
    },
    {
      body: 'an HTML body (kept in the error)',
      answer: () => HttpResponse.html('<html><body>Gateway login</body></html>', { status: 200 }),
      status: 200,
      sent: '<html><body>Gateway login</body></html>',
      issues: [{ path: '', message: 'the body is not JSON' }],
    },
    {
      body: 'an empty body',
      answer: () => new HttpResponse(null, { status: 201 }),
      status: 201,
      sent: undefined,
      issues: [{ path: '', message: 'the body is empty' }],
    },
  ])('a 2xx with $body: UnknownOutcomeError, the ResponseValidationError as its cause', async ({ answer, status, sent, issues }) => {
    server.use(http.post(PATH, answer), noQueriesListed());
    // A 2xx created the query; the list not showing it proves nothing (it may lag), so the outcome is unknown.
    const unknown = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
    expect(unknown).toBeInstanceOf(UnknownOutcomeError);
    const error = (unknown as UnknownOutcomeError).cause as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.body).toEqual(sent);
    expect(error.status).toBe(status);
    expect(error.issues).toEqual(issues);
  });
});

describe('submitCustomerQuery: apiKey as a function', () => {
  it('calls a sync function before each attempt and sends the key it returns', async () => {
    server.use(unavailableOnceThenCreated());
    const keys = ['rotating-key-1', 'rotating-key-2'];
    const apiKey = vi.fn(() => keys.shift() ?? 'exhausted');
    await tapClient({ apiKey }).submitCustomerQuery(customerQueryInput());
    expect(apiKey).toHaveBeenCalledTimes(2);
    expect(requests.map((request) => request.headers['x-api-key'])).toEqual(['rotating-key-1', 'rotating-key-2']);
  });

  it('awaits an async function before each attempt', async () => {
    server.use(unavailableOnceThenCreated());
    const apiKey = vi.fn(async () => API_KEY);
    const query = await tapClient({ apiKey }).submitCustomerQuery(customerQueryInput());
    expect(query.transaction.merchantId).toBe('merchant-001');
    expect(apiKey).toHaveBeenCalledTimes(2);
    expect(requests.map((request) => request.headers['x-api-key'])).toEqual([API_KEY, API_KEY]);
  });

  it('rejects with ConfigurationError keeping the cause when the function throws, sending nothing', async () => {
    const cause = new Error('vault unreachable');
    const apiKey = vi.fn(() => {
      throw cause;
    });
    const error = await rejectionOf(tapClient({ apiKey }).submitCustomerQuery(customerQueryInput()));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).cause).toBe(cause);
    expect(apiKey).toHaveBeenCalledTimes(1);
    expect(requests).toHaveLength(0);
  });

  it('rejects with ConfigurationError when an async function rejects, keeping the cause', async () => {
    const cause = new Error('token service down');
    const error = await rejectionOf(tapClient({ apiKey: () => Promise.reject(cause) }).listCustomerQueries());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).cause).toBe(cause);
    expect(requests).toHaveLength(0);
  });

  it.each([
    ['an empty string', () => ''],
    ['a blank string', () => '   '],
    ['undefined', () => undefined],
    ['a promise of undefined', async () => undefined],
    ['a number', () => 42],
    ['a key with a line break', () => 'key\r\nx-injected: 1'],
  ])('rejects with ConfigurationError when the function returns %s, sending nothing', async (_label, apiKey) => {
    const error = await rejectionOf(tapClient({ apiKey: apiKey as () => string }).submitCustomerQuery(customerQueryInput()));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect(requests).toHaveLength(0);
  });
});

describe('submitCustomerQuery: one call never creates two queries', () => {
  it('resolves with the existing query when a retry after an unknown outcome answers 409', async () => {
    const input = customerQueryInput();
    let posts = 0;
    server.use(
      http.post(PATH, () => {
        posts++;
        return posts === 1
          ? HttpResponse.json(tapError(502, 'gateway', 'Bad gateway'), { status: 502, headers: { 'retry-after': '0' } })
          : HttpResponse.json(tapError(409, TAP_ALREADY_EXISTS, 'Customer query already exists'), { status: 409 });
      }),
      http.get(PATH, () => HttpResponse.json({ success: true, data: [customerQuery(input)] })),
    );
    const query = await tapClient().submitCustomerQuery(input);
    expect(query.transaction.referenceId).toBe(input.referenceId);
    expect(requests.map((request) => request.method)).toEqual(['POST', 'POST', 'GET']);
  });

  it('keeps the ConflictError when the existing query with that referenceId is a different one', async () => {
    const input = customerQueryInput();
    let posts = 0;
    server.use(
      http.post(PATH, () =>
        ++posts === 1
          ? HttpResponse.json(tapError(503, 'unavailable', 'Unavailable'), { status: 503, headers: { 'retry-after': '0' } })
          : HttpResponse.json(tapError(409, TAP_ALREADY_EXISTS, 'Customer query already exists'), { status: 409 }),
      ),
      http.get(PATH, () => HttpResponse.json({ success: true, data: [customerQuery({ ...input, tagId: 'TAG-OTHER' })] })),
    );
    const error = await rejectionOf(tapClient().submitCustomerQuery(input));
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).code).toBe(TAP_ALREADY_EXISTS);
  });

  it('rejects with UnknownOutcomeError (the 5xx as its cause) when retries are spent and the list does not show the query', async () => {
    server.use(
      http.post(PATH, () => new HttpResponse(null, { status: 500 })),
      http.get(PATH, () => HttpResponse.json({ success: true, data: [] })),
    );
    // The list may lag behind the create: not seeing the query is no proof that the 500 created nothing.
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).submitCustomerQuery(customerQueryInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(InternalServerError);
    expect(((error as UnknownOutcomeError).cause as InternalServerError).status).toBe(500);
    expect(requests.map((request) => request.method)).toEqual(['POST', 'GET']);
  });

  // A create whose outcome is unknown (an unreadable 2xx, a 5xx) is settled by reading the query back by referenceId.
  it.each([
    { when: 'a 2xx body is unreadable', maxRetries: undefined, answer: () => HttpResponse.html('<html>ok</html>', { status: 201 }) },
    { when: 'the create answered 5xx', maxRetries: 0, answer: () => new HttpResponse(null, { status: 504 }) },
  ])('resolves with the query the read-back finds when $when (the query was created)', async ({ maxRetries, answer }) => {
    const input = customerQueryInput();
    server.use(
      http.post(PATH, answer),
      http.get(PATH, () => HttpResponse.json({ success: true, data: [customerQuery(input)] })),
    );
    const query = await tapClient(maxRetries === undefined ? {} : { maxRetries }).submitCustomerQuery(input);
    expect(query).toEqual(customerQuery(input));
    expect(requests.map((request) => request.method)).toEqual(['POST', 'GET']);
  });

  it.each([
    { when: 'a 2xx body is unreadable', status: 201, cause: ResponseValidationError },
    { when: 'the create answered 5xx', status: 503, cause: InternalServerError },
  ])('rejects with UnknownOutcomeError carrying the referenceId when $when and the read-back fails too', async ({ status, cause }) => {
    const input = customerQueryInput();
    server.use(
      http.post(PATH, () => new HttpResponse(null, { status })),
      http.get(PATH, () => new HttpResponse(null, { status: 503 })),
    );
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).submitCustomerQuery(input));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(input.referenceId);
    expect((error as Error).cause).toBeInstanceOf(cause);
  });

  it('does not retry or look up after a 409 on the first attempt', async () => {
    server.use(http.post(PATH, () => HttpResponse.json(tapError(409, TAP_ALREADY_EXISTS, 'exists'), { status: 409 })));
    const error = await rejectionOf(tapClient().submitCustomerQuery(customerQueryInput()));
    expect(error).toBeInstanceOf(ConflictError);
    expect(requests).toHaveLength(1);
  });
});
