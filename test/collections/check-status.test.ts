import { HttpResponse, http } from 'msw';
import { describe, expect, it } from 'vitest';
import { CollectionStatusSchema, NotFoundError, RequestValidationError, ResponseValidationError } from '../../src/index.js';
import {
  CHECK_URL,
  checkPath,
  collectionsClient,
  HEALTH_URL,
  issuePaths,
  json,
  REFERENCE_ID,
  rejectionOf,
  statusBody,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

describe('checkStatus', () => {
  it('GETs the status by reference and resolves with the parsed data', async () => {
    server.use(
      http.get(CHECK_URL, () =>
        HttpResponse.json(statusBody({ statusText: 'failed', transactionCode: 'INTERNAL_SYSTEM_ERROR', reason: 'Insufficient funds' })),
      ),
    );
    const status = await collectionsClient().checkStatus(REFERENCE_ID);
    expect(status).toEqual({
      referenceId: REFERENCE_ID,
      statusText: 'failed',
      transactionCode: 'INTERNAL_SYSTEM_ERROR',
      reason: 'Insufficient funds',
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'GET', path: checkPath(), body: undefined });
  });

  it('accepts an upper-case UUID and sends it in its one form, lower case (reference ids are compared without regard to case)', async () => {
    const upper = REFERENCE_ID.toUpperCase();
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ referenceId: REFERENCE_ID }))));
    await collectionsClient().checkStatus(upper);
    expect(requests[0]?.path).toBe(checkPath(REFERENCE_ID.toLowerCase()));
  });

  it.each(['abc', '', `${REFERENCE_ID}/../x`, `${REFERENCE_ID} `, '../health', 42, undefined])(
    'refuses %j before sending',
    async (referenceId) => {
      const error = await rejectionOf(collectionsClient().checkStatus(referenceId as never));
      expect(error).toBeInstanceOf(RequestValidationError);
      expect(issuePaths(error)).toEqual(['referenceId']);
      expect(requests).toHaveLength(0);
    },
  );

  it('accepts transactionCode and reason absent', async () => {
    server.use(http.get(CHECK_URL, () => HttpResponse.json({ success: true, data: { referenceId: REFERENCE_ID, statusText: 'pending' } })));
    const status = await collectionsClient().checkStatus(REFERENCE_ID);
    expect(status).toStrictEqual({ referenceId: REFERENCE_ID, statusText: 'pending' });
  });

  it('accepts transactionCode and reason null', async () => {
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ transactionCode: null, reason: null }))));
    const status = await collectionsClient().checkStatus(REFERENCE_ID);
    expect(status.transactionCode).toBeNull();
    expect(status.reason).toBeNull();
  });

  it('accepts a statusText beyond the documented ones', async () => {
    server.use(http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'expired' }))));
    expect((await collectionsClient().checkStatus(REFERENCE_ID)).statusText).toBe('expired');
  });

  it('keeps fields the document does not list, in data and nested', async () => {
    server.use(
      http.get(CHECK_URL, () =>
        HttpResponse.json({ success: true, data: { ...statusBody().data, operator: 'airtel', fees: { amount: 0.5 } }, meta: { v: 2 } }),
      ),
    );
    const status = await collectionsClient().checkStatus(REFERENCE_ID);
    expect(status).toMatchObject({ operator: 'airtel', fees: { amount: 0.5 } });
  });

  it("maps the service's own 404 to NotFoundError without retrying, saying it is no proof the push was never sent", async () => {
    server.use(
      http.get(CHECK_URL, () => json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' })),
      http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
    );
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, service: 'collections', code: 'E_NOT_FOUND', serviceEnvelope: true });
    expect((error as Error).message).toMatch(/no proof the push was never sent/);
    // One status check, and /health once: the base URL had not proved itself in this process yet.
    expect(requests.map((request) => request.path)).toEqual([`/v1/collections/check/${REFERENCE_ID}`, '/health']);
  });

  it.each([
    ['statusText missing', { success: true, data: { referenceId: REFERENCE_ID } }, 'data.statusText'],
    ['referenceId missing', { success: true, data: { statusText: 'pending' } }, 'data.referenceId'],
    ['data missing', { success: true }, 'data'],
    ['statusText not a string', { success: true, data: { referenceId: REFERENCE_ID, statusText: 3 } }, 'data.statusText'],
    [
      'transactionCode a number',
      { success: true, data: { referenceId: REFERENCE_ID, statusText: 'pending', transactionCode: 5 } },
      'data.transactionCode',
    ],
  ])('rejects a 2xx with %s with ResponseValidationError', async (_case, body, path) => {
    server.use(http.get(CHECK_URL, () => HttpResponse.json(body)));
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toEqual([path]);
    expect(error).toMatchObject({ status: 200, service: 'collections', body });
    expect(requests).toHaveLength(1);
  });

  it('rejects a 2xx that is not JSON with ResponseValidationError', async () => {
    server.use(http.get(CHECK_URL, () => HttpResponse.text('<html>ok</html>')));
    const error = await rejectionOf(collectionsClient().checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toMatchObject({ body: '<html>ok</html>' });
  });

  it('retries a 503 (Retry-After: 0) and resolves', async () => {
    let calls = 0;
    server.use(
      http.get(CHECK_URL, () => {
        calls++;
        return calls < 3 ? json(503, {}, { 'retry-after': '0' }) : HttpResponse.json(statusBody({ statusText: 'successful' }));
      }),
    );
    expect((await collectionsClient().checkStatus(REFERENCE_ID)).statusText).toBe('successful');
    expect(requests).toHaveLength(3);
  });
});

describe('CollectionStatusSchema', () => {
  it('validates stored statuses like the client does', () => {
    expect(CollectionStatusSchema.safeParse({ referenceId: REFERENCE_ID, statusText: 'expired', extra: 1 }).success).toBe(true);
    expect(CollectionStatusSchema.safeParse({ referenceId: REFERENCE_ID }).success).toBe(false);
  });
});
