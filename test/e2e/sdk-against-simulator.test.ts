/**
 * The SDK against the simulator, over real loopback HTTP: the simulator follows the service documents, so
 * this checks the two against each other, row by row of each document's section 7.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  CollectionsClient,
  ConflictError,
  mobileNumberFor,
  NotFoundError,
  PermissionDeniedError,
  TapClient,
  UnprocessableEntityError,
} from '../../src/index.js';
import {
  COLLECTIONS_API_KEYS,
  createSimulator,
  PHONES,
  PRODUCTS,
  type RunningSimulator,
  startSimulator,
  TAGS,
  TAP_API_KEYS,
} from '../../src/testing/index.js';

let running: RunningSimulator;
const simulator = createSimulator({ settlement: { pendingPolls: 1 } });
const FAST_POLL = { initialDelayMs: 0, intervalMs: 5, maxIntervalMs: 10 };

beforeAll(async () => {
  running = await startSimulator({ simulator });
});
afterEach(() => simulator.reset());
afterAll(() => running.close());

const tap = (apiKey: string = TAP_API_KEYS.primary) =>
  new TapClient({ apiKey, baseUrl: running.tapBaseUrl, logLevel: 'off', maxRetries: 1 });
const collections = (apiKey: string = COLLECTIONS_API_KEYS.primary) =>
  new CollectionsClient({ apiKey, baseUrl: running.collectionsBaseUrl, logLevel: 'off', maxRetries: 1 });
let sequence = 0;
const query = (tagId: string = TAGS.active) => {
  sequence++;
  return { merchantId: `M-${sequence}`, merchantName: 'Kabwe Groceries', terminalId: `T-${sequence}`, amount: 25, tagId };
};

describe('Tap: every row of section 7 against the simulator', () => {
  it('resolves an active tag to its holder and airtel_money number', async () => {
    const resolved = await tap().submitCustomerQuery(query());
    expect(mobileNumberFor(resolved)).toBe(PHONES.succeeds);
    expect(resolved.transaction).toMatchObject({ currency: 'ZMW', status: 'pending', amount: 25 });
  });

  it('picks the active airtel_money number among several', async () => {
    const resolved = await tap().submitCustomerQuery(query(TAGS.multipleNumbers));
    const picked = mobileNumberFor(resolved);
    expect(resolved.tag.mobileNumbers.find((number) => number.mobileNumber === picked)).toMatchObject({
      operator: 'airtel_money',
      status: 'active',
    });
  });

  it.each([
    ['revoked', TAP_API_KEYS.revoked, AuthenticationError],
    ['expired', TAP_API_KEYS.expired, AuthenticationError],
    ['not authorized for queries', TAP_API_KEYS.noQueryPermission, PermissionDeniedError],
  ])('a %s key', async (_case, apiKey, ErrorClass) => {
    await expect(tap(apiKey).submitCustomerQuery(query())).rejects.toBeInstanceOf(ErrorClass);
  });

  it.each([
    ['a missing tag', TAGS.unknown],
    ['an inactive tag', TAGS.inactive],
    ['a tag without numbers', TAGS.noNumbers],
    ['a tag with only another operator', TAGS.otherOperatorOnly],
  ])('%s is a 404 or a 400, with the envelope identifier as code', async (_case, tagId) => {
    const error = await tap()
      .submitCustomerQuery(query(tagId))
      .catch((caught: unknown) => caught);
    expect(error instanceof NotFoundError || error instanceof BadRequestError).toBe(true);
    expect(error).toMatchObject({ service: 'tap', code: expect.any(String), requestId: expect.any(String) });
  });

  it.each(['merchantId', 'terminalId', 'referenceId'] as const)('a reused %s is a ConflictError', async (field) => {
    const first = { ...query(), referenceId: crypto.randomUUID() };
    await tap().submitCustomerQuery(first);
    const second = { ...query(), referenceId: crypto.randomUUID(), [field]: first[field] };
    await expect(tap().submitCustomerQuery(second)).rejects.toMatchObject({ status: 409, code: 'resource/already-exists-error' });
    await expect(tap().submitCustomerQuery(second)).rejects.toBeInstanceOf(ConflictError);
  });

  it('lists only the calling partner’s queries', async () => {
    await tap().submitCustomerQuery(query());
    expect(await tap().listCustomerQueries()).toHaveLength(1);
    expect(await tap(TAP_API_KEYS.second).listCustomerQueries()).toHaveLength(0);
  });

  it('a dropped connection after the query was committed still creates exactly one', async () => {
    simulator.injectFault({ route: 'POST /v1/tap/partners/customer-queries', drop: 'after', times: 1 });
    const resolved = await tap().submitCustomerQuery(query());
    expect(simulator.customerQueries()).toHaveLength(1);
    expect(simulator.customerQueries()[0]?.id).toBe(resolved.id);
  });
});

describe('Collections: every row of section 7 against the simulator', () => {
  it('health verifies credentials', async () => {
    await expect(collections().health()).resolves.toEqual({ status: 'ok' });
    await expect(collections(COLLECTIONS_API_KEYS.revoked).health()).rejects.toBeInstanceOf(AuthenticationError);
  });

  it('a key without the permission is a PermissionDeniedError', async () => {
    const input = { productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 5 };
    await expect(collections(COLLECTIONS_API_KEYS.noPermission).initiate(input)).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('a product the service refuses is a 422 naming the field', async () => {
    const error = await collections()
      .initiate({ productId: PRODUCTS.unknown, phoneNumber: PHONES.succeeds, amount: 5 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect(error).toMatchObject({ code: 'E_VALIDATION_ERROR', requestId: expect.any(String) });
    expect((error as UnprocessableEntityError).errors.map((item) => item.field)).toContain('body.productId');
  });

  it('a status check of an unknown reference is a NotFoundError', async () => {
    await expect(collections().checkStatus(crypto.randomUUID())).rejects.toBeInstanceOf(NotFoundError);
  });

  it.each([
    [PHONES.succeeds, 'successful', 'SUCCESS'],
    [PHONES.insufficientFunds, 'failed', 'INSUFFICIENT_FUNDS'],
    [PHONES.systemError, 'failed', 'INTERNAL_SYSTEM_ERROR'],
  ])('a push to %s settles %s (%s), and the record is readable by id', async (phoneNumber, statusText, transactionCode) => {
    const client = collections();
    const { referenceId, status } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber, amount: 12.5, narration: 'e2e' });
    expect(status).toBe('pending');
    const updates: string[] = [];
    const outcome = await client.pollUntilSettled(referenceId, { ...FAST_POLL, onUpdate: (seen) => updates.push(seen.statusText) });
    expect(outcome).toMatchObject({ referenceId, statusText, transactionCode });
    expect(updates.at(-1)).toBe(statusText);
    const [stored] = simulator.collections();
    const details = await client.getById(stored?.id ?? '');
    expect(details).toMatchObject({ referenceId, amount: 12.5, status: statusText });
  });

  it('a dropped connection after the push was committed never pushes twice', async () => {
    simulator.injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'after', times: 1 });
    const accepted = await collections().initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 5 });
    expect(simulator.collections()).toHaveLength(1);
    expect(simulator.collections()[0]?.referenceId).toBe(accepted.referenceId);
  });

  it('a 503 storm while polling is ridden out', async () => {
    const client = collections();
    const { referenceId } = await client.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 5 });
    simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 503, body: 'html', times: 3 });
    await expect(client.pollUntilSettled(referenceId, FAST_POLL)).resolves.toMatchObject({ statusText: 'successful' });
  });
});
