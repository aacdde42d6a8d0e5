/**
 * How a create ends once an attempt's outcome was unknown (docs/guide/reliability.md, "What proves nothing was created"),
 * through both clients: only another operation holding one of the call's unique keys lets a definite error stand,
 * the reconciling lookup after the last attempt is numbered as the next attempt, an abort during it ends the call
 * with the signal's reason, and an unknown outcome is logged with what to do about it.
 */
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { ConflictError, type CustomerQueryInput, InternalServerError, UnknownOutcomeError } from '../../src/index.js';
import { CHECK_URL, collectionInput, collectionsClient, INITIATE_URL, json, REFERENCE_ID, statusBody } from '../helpers/collections.js';
import { customerQuery, customerQueryInput, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_URL, rejectionOf, tapClient } from '../helpers/tap.js';

const { server, requests } = useMswServer();

const unavailable = () => json(503, { success: false }, { 'retry-after': '0' });
const tapUnavailable = () =>
  HttpResponse.json(tapError(503, 'service/unavailable', 'Try again'), { status: 503, headers: { 'retry-after': '0' } });
const trail = () => requests.map((request) => request.method);

/** The partner's list: one earlier query that holds this call's terminalId under another referenceId. */
function listedHoldingTerminal(input: CustomerQueryInput) {
  const earlier = customerQuery({ ...input, merchantId: 'm-earlier', referenceId: crypto.randomUUID(), amount: 5 });
  return http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [earlier] }));
}

describe('Tap: another query holding one of the call’s keys proves nothing was created', () => {
  it('after a 503 on the only attempt, the reconciling lookup finds the terminal taken: the 503 stands', async () => {
    const input = customerQueryInput();
    server.use(http.post(QUERIES_URL, tapUnavailable), listedHoldingTerminal(input));
    const error = await rejectionOf(tapClient({ maxRetries: 0 }).submitCustomerQuery(input));
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).status).toBe(503);
    expect(error).not.toBeInstanceOf(UnknownOutcomeError);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('a 409 on the resend after a 503, with the terminal taken: ConflictError after one lookup, not two', async () => {
    const input = customerQueryInput();
    let posts = 0;
    server.use(
      http.post(QUERIES_URL, () => {
        posts++;
        if (posts === 1) return tapUnavailable();
        return HttpResponse.json(tapError(409, 'resource/already-exists-error', 'terminal busy'), { status: 409 });
      }),
      listedHoldingTerminal(input),
    );
    const error = await rejectionOf(tapClient({ maxRetries: 1 }).submitCustomerQuery(input));
    expect(error).toBeInstanceOf(ConflictError);
    // The lookup that proved the 409 is not this call's own query settles it: the call does not ask again.
    expect(trail()).toEqual(['POST', 'POST', 'GET']);
  });
});

describe('Collections: the reconciling check after the last attempt', () => {
  it('is numbered as the next attempt in onResponse', async () => {
    const attempts: number[] = [];
    server.use(
      http.post(INITIATE_URL, unavailable),
      http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'pending' }))),
    );
    const client = collectionsClient({ maxRetries: 0, onResponse: (info) => void attempts.push(info.attempt) });
    const created = await client.initiate(collectionInput({ referenceId: REFERENCE_ID }));
    expect(created.referenceId).toBe(REFERENCE_ID);
    expect(trail()).toEqual(['POST', 'GET']);
    expect(attempts).toEqual([1, 2]);
  });

  it('an abort while it is in flight ends the call with the signal’s reason, not UnknownOutcomeError', async () => {
    const controller = new AbortController();
    const reason = new Error('the till was closed');
    server.use(
      http.post(INITIATE_URL, unavailable),
      http.get(CHECK_URL, () => {
        controller.abort(reason);
        return new Promise<Response>(() => {});
      }),
    );
    const error = await rejectionOf(
      collectionsClient({ maxRetries: 0 }).initiate(collectionInput({ referenceId: REFERENCE_ID }), { signal: controller.signal }),
    );
    expect(error).toBe(reason);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('a check that does not see the collection ends the call UnknownOutcomeError, logged with what to do', async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    server.use(
      http.post(INITIATE_URL, unavailable),
      http.get(CHECK_URL, () => json(404, { success: false, message: 'Collection not found' })),
    );
    const error = await rejectionOf(
      collectionsClient({ maxRetries: 0, logger, logLevel: 'error' }).initiate(collectionInput({ referenceId: REFERENCE_ID })),
    );
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(logger.error.mock.calls.map((call) => String(call[0]))).toEqual([
      expect.stringContaining(`outcome unknown for referenceId ${REFERENCE_ID}: reconcile later by this referenceId, do not resend`),
    ]);
  });
});
