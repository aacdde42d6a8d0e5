import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { ConflictError, mobileNumberFor, RequestValidationError, TapClient } from '../../src/index.js';
import { API_KEY, customerQuery, customerQueryInput, TAP_BASE_URL, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const PATH = `${TAP_BASE_URL}/v1/tap/partners/customer-queries`;
const { server, requests } = useMswServer();
const client = () => new TapClient({ apiKey: API_KEY, baseUrl: TAP_BASE_URL, logLevel: 'off' });

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
    expect((requests[0]?.body as { referenceId: string }).referenceId).toBe(query.transaction.referenceId);
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
