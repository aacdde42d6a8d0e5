import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  type CustomerQuery,
  mobileNumberFor,
  RequestValidationError,
  ResponseValidationError,
  TapCollectionsError,
} from '../../src/index.js';
import { API_KEY, customerQuery, customerQueryInput } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_PATH, QUERIES_URL, rejectionOf, tapClient } from '../helpers/tap.js';

const { server, requests } = useMswServer();

const first = customerQuery(customerQueryInput());
const second = customerQuery(
  customerQueryInput({
    merchantId: 'merchant-002',
    terminalId: 'terminal-002',
    referenceId: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    amount: 40,
    tagId: 'TAG-0002',
  }),
  { id: '0f8fad5b-d9cb-469f-a165-70867728950e' },
);

describe('listCustomerQueries', () => {
  it('GETs the documented path with x-api-key and no body, resolving with the data array', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [first, second] })));
    const queries = await tapClient().listCustomerQueries();
    expect(queries).toEqual([first, second]);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: QUERIES_PATH, body: undefined });
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
    expect(requests[0]?.headers).not.toHaveProperty('authorization');
    expect(requests[0]?.headers).not.toHaveProperty('content-type');
  });

  it('keeps the service order', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [second, first] })));
    const queries = await tapClient().listCustomerQueries();
    expect(queries.map((query) => query.id)).toEqual([second.id, first.id]);
  });

  it('resolves with an empty array when the partner has no queries', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [] })));
    await expect(tapClient().listCustomerQueries()).resolves.toEqual([]);
  });

  it('accepts a bare array body (an assumption: the list shape is not documented)', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json([first, second])));
    const queries = await tapClient().listCustomerQueries();
    expect(queries.map((query) => query.transaction.referenceId)).toEqual([first.transaction.referenceId, second.transaction.referenceId]);
  });

  it('keeps unknown fields on each item and accepts unknown operators and statuses', async () => {
    const odd = {
      ...second,
      loyaltyPoints: 12,
      tag: {
        ...second.tag,
        status: 'lost',
        mobileNumbers: [{ operator: 'zamtel_kwacha', mobileNumber: '260955000001', status: 'active', primary: true }],
      },
      transaction: { ...second.transaction, status: 'completed' },
    };
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, total: 2, data: [first, odd] })));
    const [, item] = (await tapClient().listCustomerQueries()) as [CustomerQuery, CustomerQuery];
    expect(item).toMatchObject({ loyaltyPoints: 12, tag: { status: 'lost', mobileNumbers: [{ primary: true }] } });
    expect(item.transaction.status).toBe('completed');
    expect(mobileNumberFor(item, 'zamtel_kwacha')).toBe('260955000001');
  });

  it('validates each item, naming the bad item and field', async () => {
    const { customer: _dropped, ...broken } = second;
    const body = { success: true, data: [first, broken] };
    server.use(http.get(QUERIES_URL, () => HttpResponse.json(body)));
    const error = (await rejectionOf(tapClient().listCustomerQueries())) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual(['data.1.customer']);
    expect(error.body).toEqual(body);
    expect(error).toMatchObject({ service: 'tap', status: 200 });
  });

  it('validates each item of a bare array, reporting the body as the service sent it', async () => {
    const body = [first, { ...second, tag: { ...second.tag, mobileNumbers: 'none' } }];
    server.use(http.get(QUERIES_URL, () => HttpResponse.json(body)));
    const error = (await rejectionOf(tapClient().listCustomerQueries())) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual(['1.tag.mobileNumbers']);
    expect(error.body).toEqual(body);
  });

  it.each([
    [{ success: true }, 'data'],
    [{ success: true, data: { items: [] } }, 'data'],
    [{ success: true, data: [42] }, 'data.0'],
  ])('rejects the body %j with ResponseValidationError at %s', async (body, path) => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json(body)));
    const error = (await rejectionOf(tapClient().listCustomerQueries())) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it('rejects an HTML or empty 2xx body with ResponseValidationError', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.html('<h1>Maintenance</h1>')));
    const html = (await rejectionOf(tapClient().listCustomerQueries())) as ResponseValidationError;
    expect(html).toBeInstanceOf(ResponseValidationError);
    expect(html.body).toBe('<h1>Maintenance</h1>');

    server.use(http.get(QUERIES_URL, () => new HttpResponse('', { status: 200 })));
    const empty = (await rejectionOf(tapClient().listCustomerQueries())) as ResponseValidationError;
    expect(empty).toBeInstanceOf(ResponseValidationError);
    expect(empty.body).toBeUndefined();
  });

  it('retries a 503 and resolves with the next answer', async () => {
    let calls = 0;
    server.use(
      http.get(QUERIES_URL, () =>
        ++calls === 1
          ? new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } })
          : HttpResponse.json({ success: true, data: [first] }),
      ),
    );
    await expect(tapClient().listCustomerQueries()).resolves.toEqual([first]);
    expect(requests).toHaveLength(2);
  });

  it('sends client and per-call headers, never letting them replace the key', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [] })));
    await tapClient({ headers: { 'x-client': 'c', 'x-api-key': 'nope' } }).listCustomerQueries({
      headers: { 'x-call': 'k', 'X-API-Key': 'nope' },
    });
    expect(requests[0]?.headers).toMatchObject({ 'x-client': 'c', 'x-call': 'k', 'x-api-key': API_KEY });
  });

  it('maps a 401 to AuthenticationError', async () => {
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json({ success: false, message: 'Invalid API key', code: 401, error: 'auth/invalid-key' }, { status: 401 }),
      ),
    );
    const error = await rejectionOf(tapClient().listCustomerQueries());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, code: 'auth/invalid-key', service: 'tap' });
    expect(requests).toHaveLength(1);
  });

  it.each([[{ timeoutMs: 0 }], [{ maxRetries: -1 }], [{ headers: { 'x-trace': 'a\r\nb' } }], [null]])(
    'rejects the per-call options %j with RequestValidationError, sending nothing',
    async (options) => {
      const error = await rejectionOf(tapClient().listCustomerQueries(options as never));
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(error).toBeInstanceOf(TapCollectionsError);
      expect(requests).toHaveLength(0);
    },
  );
});
