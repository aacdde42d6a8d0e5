import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConflictError,
  ConnectionError,
  InternalServerError,
  MemoryJournal,
  ResponseValidationError,
  TapCollectionsError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../../src/index.js';
import {
  advanceUntilSettled,
  CHECK_URL,
  checkPath,
  collectionInput,
  collectionsClient,
  INITIATE_PATH,
  INITIATE_URL,
  inOrder,
  json,
  REFERENCE_ID,
  rejectionOf,
  sentBody,
  statusBody,
  track,
  UUID_V4,
  useFakeClock,
} from '../helpers/collections.js';
import { API_KEY } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

afterEach(() => {
  vi.useRealTimers();
});

const accepted = () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending' } });
const pending = () => HttpResponse.json(statusBody({ statusText: 'pending' }));
const notFound = () => json(404, { success: false, message: 'Collection not found' });
const unavailable = (status = 503) => json(status, { success: false }, { 'retry-after': '0' });
const dropped = () => HttpResponse.error();

/** The requests, as `POST` / `GET` in order, each checked to carry the key and to be on its endpoint with our reference. */
function trail(): string[] {
  return requests.map((request) => {
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    if (request.method === 'POST') {
      expect(request.path).toBe(INITIATE_PATH);
      expect((request.body as Record<string, unknown>).referenceId).toBe(REFERENCE_ID);
    } else expect(request.path).toBe(checkPath());
    return request.method;
  });
}

describe('initiate: one call never creates two collections', () => {
  it('(1) a dropped POST, then a status check that finds it pending, resolves with exactly one POST', async () => {
    useFakeClock();
    server.use(http.post(INITIATE_URL, dropped), http.get(CHECK_URL, pending));
    const call = track(collectionsClient({ maxRetries: 2 }).initiate(collectionInput()));
    await advanceUntilSettled(call);
    expect(call.error).toBeUndefined();
    expect(call.value).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(1b) keeps a generated referenceId for the reconciling check', async () => {
    useFakeClock();
    server.use(
      http.post(INITIATE_URL, dropped),
      http.get(CHECK_URL, ({ params }) => HttpResponse.json(statusBody({ referenceId: params.referenceId as string }))),
    );
    const { referenceId: _omitted, ...input } = collectionInput();
    const call = track(collectionsClient().initiate(input));
    await advanceUntilSettled(call);
    const posted = String(sentBody(requests, 0).referenceId);
    expect(posted).toMatch(UUID_V4);
    expect(requests.map((request) => request.path)).toEqual([INITIATE_PATH, checkPath(posted)]);
    expect(call.value).toEqual({ referenceId: posted, status: 'pending' });
  });

  it('(2) a 503, then a 404 status check: UnknownOutcomeError, never a second POST (the 404 may lag behind the create)', async () => {
    server.use(
      http.post(
        INITIATE_URL,
        inOrder(() => unavailable(503), accepted),
      ),
      http.get(CHECK_URL, notFound),
    );
    const error = await rejectionOf(collectionsClient({ maxRetries: 2 }).initiate(collectionInput()));
    // The service may have committed the first push and its status store not caught up; the Collections document
    // does not promise it refuses a second push with the same reference: resending could ask the customer twice.
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(REFERENCE_ID);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(InternalServerError);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(3) with a journal, a 409 on the first attempt is read back by a status check and resolves: no second POST', async () => {
    server.use(
      http.post(
        INITIATE_URL,
        inOrder(() => json(409, { success: false, code: 'E_DUPLICATE' }), accepted),
      ),
      http.get(CHECK_URL, pending),
    );
    const result = await collectionsClient({ maxRetries: 3, journal: new MemoryJournal() }).initiate(collectionInput());
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(3b) reads a 422 that flags referenceId as not unique the same way as a 409', async () => {
    const duplicate = {
      success: false,
      data: null,
      code: 'E_VALIDATION_ERROR',
      title: 'Validation Error',
      status: 422,
      detail: 'Validation failure',
      errors: [{ message: 'referenceId has already been taken', rule: 'unique', field: 'body.referenceId' }],
      requestId: 'req-dup',
    };
    server.use(
      http.post(INITIATE_URL, () => json(422, duplicate)),
      http.get(CHECK_URL, () => HttpResponse.json(statusBody({ statusText: 'successful' }))),
    );
    const result = await collectionsClient({ maxRetries: 3, journal: new MemoryJournal() }).initiate(collectionInput());
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'successful' });
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(3c) a duplicate answer the status check cannot confirm leaves the outcome unknown, with the referenceId', async () => {
    server.use(
      http.post(INITIATE_URL, () => json(409, { success: false })),
      http.get(CHECK_URL, notFound),
    );
    const error = await rejectionOf(collectionsClient({ maxRetries: 3, journal: new MemoryJournal() }).initiate(collectionInput()));
    // The check may lag behind the create: this call's own collection may hold the reference, so a
    // ConflictError (no referenceId, inviting a resend) would be unsafe.
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(REFERENCE_ID);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(ConflictError);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(4) POSTs and checks all dropped: UnknownOutcomeError with the referenceId and a cause, never a blind resend', async () => {
    useFakeClock();
    server.use(http.post(INITIATE_URL, dropped), http.get(CHECK_URL, dropped));
    const call = track(collectionsClient({ maxRetries: 2 }).initiate(collectionInput()));
    await advanceUntilSettled(call);
    expect(call.rejected).toBe(true);
    const error = call.error as UnknownOutcomeError;
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect(error.referenceId).toBe(REFERENCE_ID);
    expect(error.cause).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain(REFERENCE_ID);
    // One POST; every later attempt checks first, and every check fails: never sent twice.
    expect(trail()).toEqual(['POST', 'GET', 'GET', 'GET']);
  });

  it('(4b) with maxRetries 0: one POST, one reconciling check, then UnknownOutcomeError', async () => {
    server.use(
      http.post(INITIATE_URL, () => unavailable(500)),
      http.get(CHECK_URL, () => unavailable(503)),
    );
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(InternalServerError);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(4c) a 5xx, then a check 404: UnknownOutcomeError with the 5xx as cause, retries left unused (a 404 may be the check lagging)', async () => {
    server.use(
      http.post(INITIATE_URL, () => unavailable(500)),
      http.get(CHECK_URL, notFound),
    );
    const error = await rejectionOf(collectionsClient({ maxRetries: 1 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(REFERENCE_ID);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(InternalServerError);
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('(4d) a 5xx, then a check that fails (503), then one that finds it: resolves with one POST', async () => {
    server.use(
      http.post(INITIATE_URL, () => unavailable(500)),
      http.get(
        CHECK_URL,
        inOrder(() => unavailable(503), pending),
      ),
    );
    const result = await collectionsClient({ maxRetries: 2 }).initiate(collectionInput());
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual(['POST', 'GET', 'GET']);
  });

  it('(5) a plain 409 on the first attempt is a ConflictError, with no status check', async () => {
    server.use(
      http.post(INITIATE_URL, () => json(409, { success: false, code: 'E_DUPLICATE' })),
      http.get(CHECK_URL, pending),
    );
    const error = await rejectionOf(collectionsClient().initiate(collectionInput()));
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, code: 'E_DUPLICATE' });
    expect(trail()).toEqual(['POST']);
  });

  it('a 422 on the first attempt is final: no retry, no check', async () => {
    server.use(
      http.post(INITIATE_URL, () => json(422, { code: 'E_VALIDATION_ERROR', errors: [] })),
      http.get(CHECK_URL, pending),
    );
    expect(await rejectionOf(collectionsClient().initiate(collectionInput()))).toBeInstanceOf(UnprocessableEntityError);
    expect(trail()).toEqual(['POST']);
  });

  it('a 429 is not an unknown outcome: resent without a check', async () => {
    server.use(
      http.post(
        INITIATE_URL,
        inOrder(() => json(429, {}, { 'retry-after': '0' }), accepted),
      ),
      http.get(CHECK_URL, pending),
    );
    await collectionsClient().initiate(collectionInput());
    expect(trail()).toEqual(['POST', 'POST']);
  });

  it('a 202 with an unreadable body is read back by reference, not reported as a failure', async () => {
    server.use(
      http.post(INITIATE_URL, () => HttpResponse.text('<html>Accepted</html>', { status: 202 })),
      http.get(CHECK_URL, pending),
    );
    const result = await collectionsClient().initiate(collectionInput());
    expect(result).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    expect(trail()).toEqual(['POST', 'GET']);
  });

  it('a 202 with an unreadable body that no read-back confirms is an unknown outcome, its cause the Collections 202', async () => {
    server.use(
      http.post(INITIATE_URL, () => json(202, { success: true, data: { status: 'pending' } })),
      http.get(CHECK_URL, () => unavailable(503)),
    );
    const error = await rejectionOf(collectionsClient({ maxRetries: 0 }).initiate(collectionInput()));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    const cause = (error as UnknownOutcomeError).cause;
    expect(cause).toBeInstanceOf(ResponseValidationError);
    expect(cause).toMatchObject({ service: 'collections', status: 202 });
  });

  it('an abort while reconciling rejects with the reason, not UnknownOutcomeError', async () => {
    const controller = new AbortController();
    server.use(
      http.post(INITIATE_URL, () => unavailable(500)),
      http.get(CHECK_URL, () => {
        controller.abort(new Error('till closed'));
        return pending();
      }),
    );
    const error = await rejectionOf(collectionsClient().initiate(collectionInput(), { signal: controller.signal }));
    expect(error).toEqual(new Error('till closed'));
    expect(requests.filter((request) => request.method === 'POST')).toHaveLength(1);
  });
});
