import { http } from 'msw';
import { describe, expect, it } from 'vitest';
import { ConflictError, RequestValidationError, UnprocessableEntityError } from '../../src/index.js';
import {
  acceptCollection,
  collectionInput,
  collectionsClient,
  INITIATE_PATH,
  INITIATE_URL,
  issuePaths,
  json,
  PRODUCT_ID,
  REFERENCE_ID,
  rejectionOf,
  sentBody,
  UUID_V4,
  validationProblem,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

describe('initiate: the request and the result', () => {
  it('posts the normalized input with currency ZMW and resolves with {referenceId, status} on 202', async () => {
    server.use(acceptCollection());
    const result = await collectionsClient().initiate(
      collectionInput({ phoneNumber: '+260 97 712 3456', amount: 4.35, narration: 'Groceries' }),
    );
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe(INITIATE_PATH);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({
      productId: PRODUCT_ID,
      referenceId: REFERENCE_ID,
      phoneNumber: '260977123456',
      currency: 'ZMW',
      amount: 4.35,
      narration: 'Groceries',
    });
  });

  it('resolves with every field of data, those the document does not list included', async () => {
    server.use(
      http.post(INITIATE_URL, () =>
        json(202, {
          success: true,
          data: { referenceId: REFERENCE_ID, status: 'pending', internal: 'x', fee: { amount: 0.5 } },
          extra: true,
        }),
      ),
    );
    expect(await collectionsClient().initiate(collectionInput())).toStrictEqual({
      referenceId: REFERENCE_ID,
      status: 'pending',
      internal: 'x',
      fee: { amount: 0.5 },
    });
  });

  it('omits narration when absent (the key is not sent at all)', async () => {
    server.use(acceptCollection());
    await collectionsClient().initiate(collectionInput());
    expect(Object.keys(sentBody(requests)).sort()).toEqual(['amount', 'currency', 'phoneNumber', 'productId', 'referenceId']);
  });

  it('sends an explicit currency ZMW as ZMW', async () => {
    server.use(acceptCollection());
    await collectionsClient().initiate(collectionInput({ currency: 'ZMW' }));
    expect(sentBody(requests, 0).currency).toBe('ZMW');
  });

  it('generates a UUID v4 referenceId when absent, sends it and returns it', async () => {
    server.use(acceptCollection());
    const { referenceId: _omitted, ...input } = collectionInput();
    const result = await collectionsClient().initiate(input);
    expect(result.referenceId).toMatch(UUID_V4);
    expect(sentBody(requests, 0).referenceId).toBe(result.referenceId);
  });

  it('generates a different referenceId for each call', async () => {
    server.use(acceptCollection());
    const { referenceId: _omitted, ...input } = collectionInput();
    const client = collectionsClient();
    const first = await client.initiate(input);
    const second = await client.initiate(input);
    expect(first.referenceId).not.toBe(second.referenceId);
    expect(requests).toHaveLength(2);
  });

  it('sends the same generated referenceId on every attempt of one call', async () => {
    let posts = 0;
    server.use(
      http.post(INITIATE_URL, async ({ request }) => {
        posts++;
        // A 429 is retried without a status check (nothing was processed): the body is resent as it was.
        if (posts === 1) return json(429, { success: false }, { 'retry-after': '0' });
        const { referenceId } = (await request.json()) as { referenceId: string };
        return json(202, { success: true, data: { referenceId, status: 'pending' } });
      }),
    );
    const { referenceId: _omitted, ...input } = collectionInput();
    const result = await collectionsClient().initiate(input);
    const sent = requests
      .filter((request) => request.method === 'POST')
      .map((request) => (request.body as Record<string, unknown>).referenceId);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(UUID_V4);
    expect(sent[1]).toBe(sent[0]);
    expect(result.referenceId).toBe(sent[0]);
  });

  it('maps a 422 problem to UnprocessableEntityError with its errors', async () => {
    const problem = validationProblem(INITIATE_PATH);
    server.use(http.post(INITIATE_URL, () => json(422, problem)));
    const error = await rejectionOf(collectionsClient().initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: 'E_VALIDATION_ERROR', requestId: problem.requestId, errors: problem.errors });
    expect(requests).toHaveLength(1);
  });

  it('maps a 409 on the first attempt to ConflictError without checking the status', async () => {
    server.use(http.post(INITIATE_URL, () => json(409, { success: false, code: 'E_DUPLICATE', message: 'Duplicate referenceId' })));
    const error = await rejectionOf(collectionsClient().initiate(collectionInput()));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'E_DUPLICATE', service: 'collections' });
    expect(requests.map((request) => request.method)).toEqual(['POST']);
  });
});

describe('initiate: input rules (nothing is sent)', () => {
  async function refused(input: unknown): Promise<RequestValidationError> {
    const error = await rejectionOf(collectionsClient().initiate(input as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(requests).toHaveLength(0);
    return error as RequestValidationError;
  }

  it.each([
    ['productId', { productId: 'not-a-uuid' }],
    ['productId', { productId: '' }],
    ['productId', { productId: `${PRODUCT_ID}0` }],
    ['referenceId', { referenceId: 'not-a-uuid' }],
    ['referenceId', { referenceId: '' }],
    ['amount', { amount: 0.99 }],
    ['amount', { amount: 10000.01 }],
    ['amount', { amount: 1.234 }],
    ['amount', { amount: 0 }],
    ['amount', { amount: -5 }],
    ['amount', { amount: Number.NaN }],
    ['amount', { amount: Number.POSITIVE_INFINITY }],
    ['amount', { amount: '5' }],
    ['narration', { narration: '' }],
    ['narration', { narration: 'x'.repeat(101) }],
    ['currency', { currency: 'USD' }],
    ['phoneNumber', { phoneNumber: '0877123456' }],
    ['phoneNumber', { phoneNumber: '' }],
  ])('refuses %s = %j', async (field, override) => {
    const error = await refused({ ...collectionInput(), ...override });
    expect(issuePaths(error)).toEqual([field]);
    expect(error.message).toContain(field);
  });

  it.each(['productId', 'phoneNumber', 'amount'])('refuses a missing %s', async (field) => {
    const input: Record<string, unknown> = { ...collectionInput() };
    delete input[field];
    expect(issuePaths(await refused(input))).toEqual([field]);
  });

  it('refuses a non-object input', async () => {
    await refused(null);
    await refused('input');
  });

  it.each([4.35, 1, 10000, 9999.99, 1.5, 12.3])('accepts amount %s and sends it unchanged', async (amount) => {
    server.use(acceptCollection());
    await collectionsClient().initiate(collectionInput({ amount }));
    expect(sentBody(requests, 0).amount).toBe(amount);
  });

  it('accepts a narration of exactly 100 characters', async () => {
    server.use(acceptCollection());
    const narration = 'n'.repeat(100);
    await collectionsClient().initiate(collectionInput({ narration }));
    expect(sentBody(requests, 0).narration).toBe(narration);
  });

  it('lists every bad field in one error', async () => {
    const error = await refused({
      productId: 'nope',
      referenceId: 'nope',
      phoneNumber: '977123456',
      amount: 1.234,
      narration: '',
      currency: 'USD',
    });
    expect(issuePaths(error)).toEqual(['amount', 'currency', 'narration', 'phoneNumber', 'productId', 'referenceId']);
  });

  it('never echoes the phone number in the error', async () => {
    const error = await refused(collectionInput({ phoneNumber: '0877123456' }));
    expect(error.message).not.toContain('0877123456');
    expect(JSON.stringify(error)).not.toContain('877123456');
  });
});
