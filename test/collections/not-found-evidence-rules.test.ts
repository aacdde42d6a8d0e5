/**
 * The one judgement of a status check's 404 (src/collections/not-found-evidence.ts), rule by rule: which 404s are the
 * Collections service's own answer, when `/health` is asked, how its refusal is remembered, and the notes a 404
 * carries to callers. End to end over sockets: test/collections/not-found-evidence.test.ts. `performance.now()` is
 * faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  HEALTH_RECHECK_MS,
  isNotSentVerdict,
  NotFoundEvidence,
  notProof,
  provenNotSent,
  WrongBaseUrlError,
} from '../../src/collections/not-found-evidence.ts';
import { ApiError, ConfigurationError, InternalServerError, NotFoundError } from '../../src/core/errors.ts';

const serviceNotFound = (code = 'E_NOT_FOUND') =>
  new NotFoundError({
    status: 404,
    code,
    message: 'Collection not found',
    requestId: 'req-404',
    body: { success: false, data: null, code, message: 'Collection not found' },
    service: 'collections',
    retryAfterMs: 7,
    serviceEnvelope: true,
  });

const bareNotFound = (body: unknown, code?: string) =>
  new NotFoundError({ status: 404, code, message: 'Not found', requestId: undefined, body, service: 'collections' });

const healthError = (status: number) =>
  new ApiError({ status, code: undefined, message: `HTTP ${status}`, requestId: undefined, body: undefined, service: 'collections' });

/** A `/health` probe that answers as told and counts its calls. */
function probe(answers: (() => Promise<unknown>)[]) {
  const calls = { count: 0 };
  const evidence = new NotFoundEvidence(() => {
    const answer = answers[Math.min(calls.count, answers.length - 1)];
    calls.count++;
    return answer?.() ?? Promise.resolve();
  });
  return { evidence, calls };
}

const ok = () => Promise.resolve({ status: 'ok' });
const fails = (error: unknown) => () => Promise.reject(error);

beforeEach(() => vi.useFakeTimers({ toFake: ['performance'] }));
afterEach(() => vi.useRealTimers());

describe('NotFoundEvidence.judge: which 404 is evidence', () => {
  it("the service's envelope from a base URL that proved itself: evidence, /health asked once and never again", async () => {
    const { evidence, calls } = probe([ok]);
    expect(evidence.proved).toBe(false);
    await evidence.judge(serviceNotFound());
    expect(evidence.proved).toBe(true);
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(1);
  });

  it('a base URL proved by another endpoint (markProved) is not asked at all', async () => {
    const { evidence, calls } = probe([ok]);
    evidence.markProved();
    expect(evidence.proved).toBe(true);
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(0);
  });

  it('404s judged while /health is being asked share the one request', async () => {
    let answer: (value: unknown) => void = () => undefined;
    const { evidence, calls } = probe([() => new Promise((resolve) => (answer = resolve))]);
    const first = evidence.judge(serviceNotFound());
    const second = evidence.judge(serviceNotFound());
    answer({ status: 'ok' });
    await Promise.all([first, second]);
    expect(calls.count).toBe(1);
  });

  it('a code naming a route (any case) is a wrong base URL, even from a proved base URL', async () => {
    const { evidence } = probe([ok]);
    evidence.markProved();
    for (const code of ['E_ROUTE_NOT_FOUND', 'no_Route']) {
      const error = await evidence.judge(serviceNotFound(code)).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WrongBaseUrlError);
      expect((error as Error).message).toContain(`with code ${code}, which names a route`);
    }
  });

  it('the error names the base URL that does not answer as the service, when the client gave one', async () => {
    const named = await new NotFoundEvidence(ok, 'https://collections.example.test')
      .judge(bareNotFound('Not Found'))
      .catch((caught: unknown) => caught);
    expect((named as Error).message).toMatch(
      /^CollectionsClient: the base URL does not answer as the Collections API \(https:\/\/collections\.example\.test\): a status check/,
    );
    expect((named as WrongBaseUrlError).baseUrl).toBe('https://collections.example.test');
    const unnamed = await new NotFoundEvidence(ok).judge(bareNotFound('Not Found')).catch((caught: unknown) => caught);
    expect((unnamed as Error).message).toMatch(/^CollectionsClient: the base URL does not answer as the Collections API: a status check/);
  });

  it.each([
    ['no body', undefined, 'an empty body'],
    ['an empty text', '', 'an empty body'],
    ['an HTML page', '  <html><body>404</body></html>', 'an HTML page'],
    ['a text body', 'Not Found', 'a text body'],
    ['a text body with a tag later on', 'Not Found <br>', 'a text body'],
    ["the Tap API's envelope", { success: false, error: 'NOT_FOUND', code: 404 }, "the Tap API's envelope"],
    ['a numeric code', { success: false, code: 404 }, 'an envelope whose code is not a string'],
    ['a JSON body without success: false', { success: true, code: 'X' }, 'a JSON body that is not the envelope'],
    ['an error string without success: false', { success: true, error: 'NOT_FOUND' }, 'a JSON body that is not the envelope'],
    ['success: false alone', { success: false }, 'a JSON body that is not the envelope'],
    ['JSON null', null, 'a body that is not the envelope'],
    ['a number', 404, 'a body that is not the envelope'],
  ])('without the envelope (%s): ConfigurationError naming baseUrl and what the body was, /health not asked', async (_kind, body, said) => {
    const { evidence, calls } = probe([ok]);
    evidence.markProved();
    const error = await evidence.judge(bareNotFound(body)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WrongBaseUrlError);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).name).toBe('ConfigurationError');
    expect((error as Error).message).toContain(`without the Collections API's error envelope (${said})`);
    expect((error as Error).message).toContain('baseUrl');
    expect((error as Error).cause).toBeInstanceOf(NotFoundError);
    expect(calls.count).toBe(0);
  });
});

describe('NotFoundEvidence.judge: /health refusing', () => {
  it.each([404, 405])('/health answering %i: a wrong base URL, remembered for HEALTH_RECHECK_MS, then asked again', async (status) => {
    const { evidence, calls } = probe([fails(healthError(status)), ok]);
    // Not at the clock's zero: the refusal's age is measured from when it came.
    vi.advanceTimersByTime(10_000);
    const first = await evidence.judge(serviceNotFound()).catch((caught: unknown) => caught);
    expect(first).toBeInstanceOf(WrongBaseUrlError);
    expect((first as Error).message).toContain(`GET /health answered HTTP ${status}`);
    expect(evidence.proved).toBe(false);
    vi.advanceTimersByTime(HEALTH_RECHECK_MS - 1);
    // Within the recheck time: the same refusal, without asking.
    await expect(evidence.judge(serviceNotFound())).rejects.toBe(first);
    expect(calls.count).toBe(1);
    vi.advanceTimersByTime(1);
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(2);
    expect(evidence.proved).toBe(true);
  });

  it('a refusal is forgotten once another endpoint proves the base URL', async () => {
    const { evidence, calls } = probe([fails(healthError(404))]);
    await expect(evidence.judge(serviceNotFound())).rejects.toBeInstanceOf(WrongBaseUrlError);
    evidence.markProved();
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(1);
  });

  it('/health failing otherwise (5xx, no answer) decides nothing: its own error, not remembered, asked again next time', async () => {
    const unavailable = new InternalServerError({
      status: 503,
      code: undefined,
      message: 'unavailable',
      requestId: undefined,
      body: undefined,
      service: 'collections',
    });
    const { evidence, calls } = probe([fails(unavailable), fails(new TypeError('fetch failed')), ok]);
    await expect(evidence.judge(serviceNotFound())).rejects.toBe(unavailable);
    await expect(evidence.judge(serviceNotFound())).rejects.toBeInstanceOf(TypeError);
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(3);
    expect(evidence.proved).toBe(true);
  });

  it('a failed probe is not shared with the next 404: it is asked again at once', async () => {
    const { evidence, calls } = probe([fails(healthError(503)), ok]);
    await expect(evidence.judge(serviceNotFound())).rejects.toBeInstanceOf(ApiError);
    await evidence.judge(serviceNotFound());
    expect(calls.count).toBe(2);
  });
});

describe('the notes a 404 carries', () => {
  it('notProof: the same 404 saying it proves nothing, every field kept, no verdict', () => {
    const original = serviceNotFound();
    const note = notProof(original);
    expect(note).toBeInstanceOf(NotFoundError);
    expect(note.message).toMatch(/^Collection not found: the service does not hold this collection .*no proof the push was never sent/);
    expect(note).toMatchObject({
      status: 404,
      code: 'E_NOT_FOUND',
      requestId: 'req-404',
      body: original.body,
      service: 'collections',
      retryAfterMs: 7,
      serviceEnvelope: true,
    });
    expect(isNotSentVerdict(note)).toBe(false);
    expect(isNotSentVerdict(original)).toBe(false);
  });

  it('provenNotSent: the journal verdict, every field kept, recognised as a verdict', () => {
    const verdict = provenNotSent(serviceNotFound());
    expect(verdict.message).toMatch(/^Collection not found: the payment journal records this payment not-sent/);
    expect(verdict).toMatchObject({ status: 404, code: 'E_NOT_FOUND', requestId: 'req-404', retryAfterMs: 7, serviceEnvelope: true });
    expect(isNotSentVerdict(verdict)).toBe(true);
    expect(isNotSentVerdict(new Error(verdict.message))).toBe(false);
    expect(isNotSentVerdict(undefined)).toBe(false);
  });
});
