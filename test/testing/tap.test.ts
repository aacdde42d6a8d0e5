/** The Tap Partner API as the simulator serves it on loopback, rule by rule of the Tap document. */
import { describe, expect, it } from 'vitest';
import { COLLECTIONS_API_KEYS, PARTNERS, TAGS, TAP_API_KEYS } from '../../src/testing/index.js';
import { ISO_MS_Z, queryInput, UUID, useLoopbackSimulator } from './harness.js';

const sim = useLoopbackSimulator();
const { tap } = sim;

function expectTapError(answer: { status: number; body: unknown }, status: number, error?: string) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({ success: false, message: expect.any(String), code: status, error: error ?? expect.any(String) });
  expect(Object.keys(answer.body as object).sort()).toEqual(['code', 'error', 'message', 'success']);
}

describe('POST /v1/tap/partners/customer-queries (section 2, 4)', () => {
  it('answers 201 with every field of the customer query, typed as documented', async () => {
    const input = queryInput();
    const answer = await tap.submit(input);
    expect(answer.status).toBe(201);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('x-request-id')).toMatch(UUID);
    expect(answer.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(UUID),
        partner: { partnerId: PARTNERS.primary.partnerId, partnerName: PARTNERS.primary.partnerName },
        customer: { firstName: 'Mwila', lastName: 'Banda' },
        tag: {
          tagId: TAGS.active,
          tagNumber: expect.any(String),
          mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260977123456', status: 'active' }],
          status: 'active',
        },
        transaction: {
          merchantId: input.merchantId,
          merchantName: input.merchantName,
          terminalId: input.terminalId,
          referenceId: input.referenceId,
          currency: 'ZMW',
          amount: input.amount,
          serviceCharge: expect.any(Number),
          status: 'pending',
        },
        createdAt: expect.stringMatching(ISO_MS_Z),
        updatedAt: expect.stringMatching(ISO_MS_Z),
      },
    });
    expect(answer.body.data.tag.mobileNumbers[0].mobileNumber).toMatch(/^260\d{9}$/);
  });

  it('derives the partner from the key alone', async () => {
    const answer = await tap.submit(queryInput(), TAP_API_KEYS.second);
    expect(answer.body.data.partner).toEqual(PARTNERS.second);
  });

  it('refuses a partnerId in the body with 400 (identity comes from the key)', async () => {
    expectTapError(await tap.submit(queryInput({ partnerId: PARTNERS.second.partnerId })), 400, 'request/validation-error');
  });

  it('lists every number on the tag, whatever its operator or status', async () => {
    const answer = await tap.submit(queryInput({ tagId: TAGS.multipleNumbers }));
    expect(answer.status).toBe(201);
    expect(answer.body.data.tag.mobileNumbers).toEqual([
      { operator: 'mtn_money', mobileNumber: '260962345678', status: 'active' },
      { operator: 'airtel_money', mobileNumber: '260972345678', status: 'inactive' },
      { operator: 'airtel_money', mobileNumber: '260973456789', status: 'active' },
    ]);
  });

  it('resolves a tag whose only airtel_money number is inactive, showing its status', async () => {
    const answer = await tap.submit(queryInput({ tagId: TAGS.inactiveNumber }));
    expect(answer.status).toBe(201);
    expect(answer.body.data.tag.mobileNumbers).toEqual([{ operator: 'airtel_money', mobileNumber: '260976543210', status: 'inactive' }]);
  });
});

describe('tag rules (section 7)', () => {
  it('answers 404 for a tag that does not exist', async () => {
    expectTapError(await tap.submit(queryInput({ tagId: TAGS.unknown })), 404, 'resource/not-found-error');
  });

  it('answers 400 for a tag that is not active', async () => {
    expectTapError(await tap.submit(queryInput({ tagId: TAGS.inactive })), 400, 'tag/inactive-error');
  });

  it.each([
    ['no numbers at all', TAGS.noNumbers],
    ['only another operator', TAGS.otherOperatorOnly],
  ])('answers 404 for an active tag with %s for airtel_money', async (_case, tagId) => {
    expectTapError(await tap.submit(queryInput({ tagId })), 404, 'tag/mobile-number-not-found-error');
  });

  it('stores nothing for a refused query, so its identifiers stay free', async () => {
    const input = queryInput({ tagId: TAGS.unknown });
    expect((await tap.submit(input)).status).toBe(404);
    expect((await tap.submit({ ...input, tagId: TAGS.active })).status).toBe(201);
    expect(sim.running.simulator.customerQueries()).toHaveLength(1);
  });
});

describe('uniqueness per partner (section 4, 7)', () => {
  it.each(['merchantId', 'terminalId', 'referenceId'])(
    'answers 409 resource/already-exists-error when %s was used before',
    async (field) => {
      const first = queryInput();
      expect((await tap.submit(first)).status).toBe(201);
      const again = queryInput({ [field]: first[field] });
      expectTapError(await tap.submit(again), 409, 'resource/already-exists-error');
      expect(sim.running.simulator.customerQueries()).toHaveLength(1);
    },
  );

  it('allows another partner to reuse all three', async () => {
    const input = queryInput();
    expect((await tap.submit(input)).status).toBe(201);
    expect((await tap.submit(input, TAP_API_KEYS.second)).status).toBe(201);
    expect((await tap.submit(input)).status).toBe(409);
  });
});

describe('GET /v1/tap/partners/customer-queries', () => {
  it('answers 200 with an empty list before any query', async () => {
    const answer = await tap.list();
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, data: [] });
  });

  it("returns the caller's queries in submission order, never another partner's", async () => {
    const first = (await tap.submit(queryInput())).body.data;
    const second = (await tap.submit(queryInput())).body.data;
    const theirs = (await tap.submit(queryInput(), TAP_API_KEYS.second)).body.data;
    expect((await tap.list()).body).toEqual({ success: true, data: [first, second] });
    expect((await tap.list(TAP_API_KEYS.second)).body).toEqual({ success: true, data: [theirs] });
  });
});

describe('authentication (section 5)', () => {
  it.each([
    ['missing', null],
    ['invalid', 'tap_sim_not_a_real_key'],
    ['revoked', TAP_API_KEYS.revoked],
    ['expired', TAP_API_KEYS.expired],
    ['a Collections key', COLLECTIONS_API_KEYS.primary],
  ])('answers 401 in the Tap envelope when the key is %s', async (_case, key) => {
    expectTapError(await tap.submit(queryInput(), key), 401, 'auth/unauthorized-error');
    expectTapError(await tap.list(key), 401, 'auth/unauthorized-error');
  });

  it('answers 403 when the key is not authorized for customer queries', async () => {
    expectTapError(await tap.submit(queryInput(), TAP_API_KEYS.noQueryPermission), 403, 'auth/forbidden-error');
    expectTapError(await tap.list(TAP_API_KEYS.noQueryPermission), 403, 'auth/forbidden-error');
  });

  it('checks the key before the body', async () => {
    expectTapError(await tap.submit('{not json', null), 401);
  });
});

describe('invalid requests', () => {
  it.each([
    ['merchantId missing', { merchantId: undefined }],
    ['merchantName empty', { merchantName: '' }],
    ['terminalId not a string', { terminalId: 7 }],
    ['tagId missing', { tagId: undefined }],
    ['referenceId missing', { referenceId: undefined }],
    ['referenceId not UUID-shaped', { referenceId: 'ref-1' }],
    ['amount missing', { amount: undefined }],
    ['amount zero', { amount: 0 }],
    ['amount a string', { amount: '125.50' }],
  ])('answers 400 request/validation-error when %s', async (_case, overrides) => {
    const answer = await tap.submit(queryInput(overrides));
    expectTapError(answer, 400, 'request/validation-error');
  });

  it('names every problem in the message', async () => {
    const answer = await tap.submit({ amount: -1 });
    expect(answer.body.message).toMatch(/merchantId.*merchantName.*terminalId.*tagId.*referenceId.*amount/);
  });

  it('answers 400 for a body that is not JSON or not an object', async () => {
    expectTapError(await tap.submit('{"merchantId":'), 400, 'request/malformed-json-error');
    expectTapError(await tap.submit([queryInput()]), 400, 'request/validation-error');
  });

  it('answers 404 for an unknown path and 405 (with Allow) for an unknown method, in the Tap envelope', async () => {
    expectTapError(
      await tap.raw('/v1/tap/partners/unknown', { headers: { 'x-api-key': TAP_API_KEYS.primary } }),
      404,
      'route/not-found-error',
    );
    const answer = await tap.raw('/v1/tap/partners/customer-queries', { method: 'DELETE', headers: { 'x-api-key': TAP_API_KEYS.primary } });
    expectTapError(answer, 405, 'route/method-not-allowed-error');
    expect(answer.headers.get('allow')).toBe('POST, GET');
  });
});
