/** The Collections Gateway API as the simulator serves it on loopback, rule by rule of the Collections document. */
import { describe, expect, it } from 'vitest';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, TAP_API_KEYS } from '../../src/testing/index.js';
import { collectionInput, ISO_MS_Z, UUID, useLoopbackSimulator } from './harness.js';

const sim = useLoopbackSimulator();
const { collections } = sim;

function expectCollectionsError(answer: { status: number; headers: Headers; body: unknown }, status: number, code?: string) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({
    success: false,
    data: null,
    code: code ?? expect.any(String),
    message: expect.any(String),
    requestId: expect.any(String),
  });
  expect((answer.body as { requestId: string }).requestId).toBe(answer.headers.get('x-request-id'));
}

describe('POST /v1/collections/mobile-money', () => {
  it('accepts a valid request with 202 and exactly { referenceId, status: pending }', async () => {
    const input = collectionInput();
    const answer = await collections.initiate(input);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ success: true, data: { referenceId: input.referenceId, status: 'pending' } });
  });

  it('answers 422 with the problem body exactly as section 7 shows it', async () => {
    const answer = await collections.initiate(collectionInput({ amount: 10_000.5 }));
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      type: expect.any(String),
      title: 'Validation Error',
      status: 422,
      detail: 'Validation failure',
      instance: '/v1/collections/mobile-money',
      errors: [{ message: expect.any(String), rule: 'max', field: 'body.amount' }],
      requestId: answer.headers.get('x-request-id'),
    });
    expect(new URL(answer.body.type).protocol).toBe('https:');
    expect(Object.keys(answer.body)).toEqual([
      'success',
      'data',
      'code',
      'type',
      'title',
      'status',
      'detail',
      'instance',
      'errors',
      'requestId',
    ]);
  });

  it.each([
    ['productId', undefined, 'required'],
    ['productId', 42, 'string'],
    ['productId', 'product-1', 'uuid'],
    ['productId', PRODUCTS.unknown, 'exists'],
    ['productId', PRODUCTS.second, 'exists'],
    ['referenceId', undefined, 'required'],
    ['referenceId', 'ref-1', 'uuid'],
    ['phoneNumber', undefined, 'required'],
    ['phoneNumber', '12345', 'mobile'],
    ['phoneNumber', '260877123456', 'mobile'],
    ['phoneNumber', '26097712345', 'mobile'],
    ['phoneNumber', '0977 123 456', 'mobile'],
    ['currency', undefined, 'required'],
    ['currency', 'USD', 'enum'],
    ['amount', undefined, 'required'],
    ['amount', '250', 'number'],
    ['amount', 0.99, 'min'],
    ['amount', 10_000.01, 'max'],
    ['amount', 1.005, 'decimal'],
    ['narration', 'x'.repeat(101), 'maxLength'],
    ['narration', 5, 'string'],
  ])('answers 422 for %s = %j (rule %s)', async (field, value, rule) => {
    const answer = await collections.initiate(collectionInput({ [field]: value }));
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([{ message: expect.stringContaining(field), rule, field: `body.${field}` }]);
    expect(sim.running.simulator.collections()).toHaveLength(0);
  });

  it.each([
    ['amount', 1],
    ['amount', 10_000],
    ['amount', 4.35],
    ['narration', 'x'.repeat(100)],
    ['narration', undefined],
    ['phoneNumber', '260977123456'],
    ['phoneNumber', '+260977123456'],
    ['phoneNumber', '0977123456'],
    ['phoneNumber', '0961234567'],
  ])('accepts %s = %j', async (field, value) => {
    expect((await collections.initiate(collectionInput({ [field]: value }))).status).toBe(202);
  });

  it('reports one error per invalid field, all at once', async () => {
    const answer = await collections.initiate({ currency: 'ZMW', amount: 0 });
    expect(answer.body.errors.map((error: { field: string; rule: string }) => `${error.field}:${error.rule}`)).toEqual([
      'body.productId:required',
      'body.referenceId:required',
      'body.phoneNumber:required',
      'body.amount:min',
    ]);
  });

  it('answers 422 for a body that is not an object, and 400 for one that is not JSON', async () => {
    const answer = await collections.initiate([1, 2]);
    expect(answer.status).toBe(422);
    expect(answer.body.errors).toEqual([{ message: expect.any(String), rule: 'object', field: 'body' }]);
    expectCollectionsError(await collections.initiate('{"amount":'), 400, 'E_BAD_REQUEST');
  });

  it('answers 409 for a referenceId already used by the partner, and stores nothing', async () => {
    const input = collectionInput();
    expect((await collections.initiate(input)).status).toBe(202);
    expectCollectionsError(await collections.initiate({ ...input, amount: 99 }), 409, 'E_DUPLICATE_REFERENCE');
    expect(sim.running.simulator.collections()).toHaveLength(1);
  });

  it('lets another partner use the same referenceId', async () => {
    const input = collectionInput();
    expect((await collections.initiate(input)).status).toBe(202);
    expect((await collections.initiate({ ...input, productId: PRODUCTS.second }, COLLECTIONS_API_KEYS.second)).status).toBe(202);
  });
});

describe('GET /v1/collections/check/:referenceId', () => {
  it('answers 200 pending with null transactionCode and reason before settlement', async () => {
    const input = collectionInput();
    await collections.initiate(input);
    const answer = await collections.check(input.referenceId as string);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      data: { referenceId: input.referenceId, statusText: 'pending', transactionCode: null, reason: null },
    });
  });

  it('answers 422 with field params.referenceId and rule uuid for a referenceId that is not a UUID', async () => {
    const answer = await collections.check('not-a-uuid');
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      type: expect.any(String),
      title: 'Validation Error',
      status: 422,
      detail: 'Validation failure',
      instance: '/v1/collections/check/not-a-uuid',
      errors: [{ message: expect.any(String), rule: 'uuid', field: 'params.referenceId' }],
      requestId: expect.any(String),
    });
  });

  it("answers 404 for no collection, including another partner's", async () => {
    expectCollectionsError(await collections.check(globalThis.crypto.randomUUID()), 404, 'E_NOT_FOUND');
    const input = collectionInput();
    await collections.initiate(input);
    expectCollectionsError(await collections.check(input.referenceId as string, COLLECTIONS_API_KEYS.second), 404, 'E_NOT_FOUND');
  });
});

describe('GET /v1/collections/:id', () => {
  it('answers 200 with the whole record', async () => {
    const input = collectionInput({ narration: undefined });
    await collections.initiate(input);
    const [stored] = sim.running.simulator.collections();
    const answer = await collections.get(stored?.id as string);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(UUID),
        referenceId: input.referenceId,
        productId: input.productId,
        phoneNumber: input.phoneNumber,
        amount: input.amount,
        currency: 'ZMW',
        narration: null,
        status: 'pending',
        transactionCode: null,
        reason: null,
        createdAt: expect.stringMatching(ISO_MS_Z),
        updatedAt: expect.stringMatching(ISO_MS_Z),
      },
    });
  });

  it("answers 404 for an unknown id and for another partner's collection", async () => {
    expectCollectionsError(await collections.get(globalThis.crypto.randomUUID()), 404, 'E_NOT_FOUND');
    expectCollectionsError(await collections.get('anything'), 404, 'E_NOT_FOUND');
    await collections.initiate(collectionInput());
    const [stored] = sim.running.simulator.collections();
    expectCollectionsError(await collections.get(stored?.id as string, COLLECTIONS_API_KEYS.second), 404, 'E_NOT_FOUND');
  });
});

describe('GET /health', () => {
  it('answers 200 { status: ok } to any valid key, even one without the collections permission', async () => {
    for (const key of [COLLECTIONS_API_KEYS.primary, COLLECTIONS_API_KEYS.noPermission]) {
      const answer = await collections.health(key);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ status: 'ok' });
    }
  });

  it.each([
    ['missing', null],
    ['invalid', 'col_sim_not_a_key'],
    ['revoked', COLLECTIONS_API_KEYS.revoked],
    ['a Tap key', TAP_API_KEYS.primary],
  ])('answers 401 when the key is %s', async (_case, key) => {
    expectCollectionsError(await collections.health(key), 401, 'E_UNAUTHORIZED');
  });
});

describe('authentication (section 5)', () => {
  it('answers 401 for a header that is not a Bearer token', async () => {
    const answer = await sim.running.simulator.handle({
      service: 'collections',
      method: 'GET',
      path: '/health',
      headers: { authorization: `Basic ${COLLECTIONS_API_KEYS.primary}` },
    });
    expect(answer.kind === 'respond' && answer.response.status).toBe(401);
  });

  it.each([
    ['missing', null],
    ['invalid', 'col_sim_not_a_key'],
    ['revoked', COLLECTIONS_API_KEYS.revoked],
  ])('answers 401 on every endpoint when the key is %s', async (_case, key) => {
    const id = globalThis.crypto.randomUUID();
    expectCollectionsError(await collections.initiate(collectionInput(), key), 401, 'E_UNAUTHORIZED');
    expectCollectionsError(await collections.check(id, key), 401, 'E_UNAUTHORIZED');
    expectCollectionsError(await collections.get(id, key), 401, 'E_UNAUTHORIZED');
  });

  it('answers 403 on the collection endpoints for a key without the permission', async () => {
    const key = COLLECTIONS_API_KEYS.noPermission;
    const id = globalThis.crypto.randomUUID();
    expectCollectionsError(await collections.initiate(collectionInput(), key), 403, 'E_FORBIDDEN');
    expectCollectionsError(await collections.check(id, key), 403, 'E_FORBIDDEN');
    expectCollectionsError(await collections.get(id, key), 403, 'E_FORBIDDEN');
  });

  it('matches the Bearer scheme case-insensitively', async () => {
    const answer = await sim.running.simulator.handle({
      service: 'collections',
      method: 'GET',
      path: '/health',
      headers: { authorization: `bearer ${COLLECTIONS_API_KEYS.primary}` },
    });
    expect(answer.kind === 'respond' && answer.response.status).toBe(200);
  });
});

describe('phone number outcomes (fixtures)', () => {
  it.each([
    [PHONES.succeeds, 'successful', 'SUCCESS'],
    [PHONES.insufficientFunds, 'failed', 'INSUFFICIENT_FUNDS'],
    [PHONES.systemError, 'failed', 'INTERNAL_SYSTEM_ERROR'],
    [PHONES.declined, 'failed', 'TRANSACTION_DECLINED'],
    [`0${PHONES.insufficientFunds.slice(3)}`, 'failed', 'INSUFFICIENT_FUNDS'],
  ])('%s settles %s with %s', async (phoneNumber, statusText, transactionCode) => {
    const input = collectionInput({ phoneNumber });
    await collections.initiate(input);
    await collections.check(input.referenceId as string);
    const settled = await collections.check(input.referenceId as string);
    expect(settled.body.data).toEqual({ referenceId: input.referenceId, statusText, transactionCode, reason: expect.any(String) });
    expect(settled.body.data.reason.length).toBeGreaterThan(0);
  });
});
