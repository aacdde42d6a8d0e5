/** Log lines are leveled and redacted: no key, phone numbers masked, no personal names. */
import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ApiKeySource, type CustomerQueryInput, type Logger, type LogLevel, maskPhoneNumber, TapClient } from '../../src/index.js';
import { customerQuery, customerQueryInput, TAP_BASE_URL, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { MASKED_PHONE, PHONE, QUERIES_URL } from '../helpers/tap.js';

const KEY = 'tap_live_7e3d9a2c4b1f8e6d0a5c';
const { server, requests } = useMswServer();

afterEach(() => {
  vi.restoreAllMocks();
});

function fakeLogger() {
  return { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies Logger;
}

type FakeLogger = ReturnType<typeof fakeLogger>;

/** Every line written, at any level, as one searchable string per line. */
function lines(logger: FakeLogger): string[] {
  return (['debug', 'info', 'warn', 'error'] as const).flatMap((level) => logger[level].mock.calls.map((args) => JSON.stringify(args)));
}

function client(logger: Logger, logLevel?: LogLevel, apiKey: ApiKeySource = KEY) {
  return new TapClient({ apiKey, baseUrl: TAP_BASE_URL, logger, ...(logLevel ? { logLevel } : {}) });
}

/** A POST that fails once with 503 (the message quoting the number and names), then creates the query. */
function flakyCreate() {
  let posts = 0;
  return http.post(QUERIES_URL, async ({ request }) => {
    const input = (await request.json()) as CustomerQueryInput;
    if (++posts === 1) {
      return HttpResponse.json(tapError(503, 'service/unavailable', `Lookup of ${PHONE} timed out`), {
        status: 503,
        headers: { 'retry-after': '0' },
      });
    }
    return HttpResponse.json({ success: true, data: customerQuery(input) }, { status: 201 });
  });
}

/** An input that carries the phone number (as the tag id) and a merchant name. */
const inputWithPhone = () => customerQueryInput({ tagId: PHONE, merchantName: 'Chanda Mulenga Stores' });

describe('logging', () => {
  it('at debug, logs every attempt without the key, the full number or any name', async () => {
    server.use(flakyCreate());
    const logger = fakeLogger();
    const query = await client(logger, 'debug').submitCustomerQuery(inputWithPhone());
    expect(query.customer.firstName).toBe('Mwila');
    expect(query.tag.mobileNumbers[0]?.mobileNumber).toBe(PHONE);

    const written = lines(logger);
    expect(logger.debug.mock.calls.length).toBeGreaterThanOrEqual(4);
    const joined = written.join('\n');
    expect(joined).not.toContain(KEY);
    expect(joined).not.toContain(PHONE);
    expect(joined).toContain(MASKED_PHONE);
    for (const name of ['Mwila', 'Banda', 'Chanda Mulenga Stores', 'Kabwe Retail Ltd']) expect(joined).not.toContain(name);
    expect(joined).toContain('POST /v1/tap/partners/customer-queries');
    expect(requests).toHaveLength(2);
  });

  it('masks as 260*******56', () => {
    expect(maskPhoneNumber(PHONE)).toBe(MASKED_PHONE);
    expect(maskPhoneNumber('+260 977-123-456')).toBe(MASKED_PHONE);
  });

  it('does not log the key when it comes from a function, nor when the server echoes it', async () => {
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json(tapError(503, 'unavailable', `bad key ${KEY}`), { status: 503, headers: { 'retry-after': '0' } }),
      ),
    );
    const logger = fakeLogger();
    await client(logger, 'debug', () => KEY)
      .listCustomerQueries({ maxRetries: 1 })
      .catch(() => undefined);
    expect(lines(logger).length).toBeGreaterThan(0);
    expect(lines(logger).join('\n')).not.toContain(KEY);
    expect(requests).toHaveLength(2);
  });

  it('logs a retry as a warn line at the default level, and nothing at debug', async () => {
    server.use(flakyCreate());
    const logger = fakeLogger();
    await client(logger).submitCustomerQuery(inputWithPhone());
    expect(logger.debug).not.toHaveBeenCalled();
    expect(logger.info).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    const warn = JSON.stringify(logger.warn.mock.calls[0]);
    expect(warn).toMatch(/retry/i);
    expect(warn).not.toContain(PHONE);
    expect(warn).not.toContain(KEY);
  });

  it("writes to console.warn by default at 'warn'", async () => {
    server.use(flakyCreate());
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    await new TapClient({ apiKey: KEY, baseUrl: TAP_BASE_URL }).submitCustomerQuery(customerQueryInput());
    expect(warn).toHaveBeenCalledTimes(1);
    expect(debug).not.toHaveBeenCalled();
  });

  it("logs nothing at 'off', even on retries and failures", async () => {
    server.use(http.get(QUERIES_URL, () => new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } })));
    const logger = fakeLogger();
    await client(logger, 'off')
      .listCustomerQueries()
      .catch(() => undefined);
    expect(requests).toHaveLength(3);
    expect(lines(logger)).toEqual([]);
  });

  it("logs no warn line at 'error'", async () => {
    server.use(flakyCreate());
    const logger = fakeLogger();
    await client(logger, 'error').submitCustomerQuery(customerQueryInput());
    expect(lines(logger)).toEqual([]);
  });

  it('logs an error line when an outcome stays unknown', async () => {
    server.use(
      http.post(QUERIES_URL, () => new HttpResponse(null, { status: 503 })),
      http.get(QUERIES_URL, () => new HttpResponse(null, { status: 503 })),
    );
    const logger = fakeLogger();
    await client(logger, 'error')
      .submitCustomerQuery(customerQueryInput(), { maxRetries: 0 })
      .catch(() => undefined);
    expect(logger.error).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(logger.error.mock.calls[0])).toContain(customerQueryInput().referenceId);
  });
});
