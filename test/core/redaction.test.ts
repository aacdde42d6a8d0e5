/**
 * The one key-scrubbing rule applied to every string the SDK keeps from a response: headers, parsed
 * values (escaped echoes included), redirect locations, bodies cut at their size limit, every key a
 * rotating key function returned. And its limit: the data a caller asked for is returned as sent.
 */
import { inspect } from 'node:util';
import { HttpResponse, http } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import {
  type ApiKeySource,
  AuthenticationError,
  ConfigurationError,
  InternalServerError,
  RedirectError,
  ResponseValidationError,
  TapClient,
  type TapClientOptions,
} from '../../src/index.js';
import { customerQuery, customerQueryInput, TAP_BASE_URL, tapError } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_URL, rejectionOf } from '../helpers/tap.js';

const KEY = 'tapkey-live/9c2f6e1d7b4a3e8f';
const { server, requests } = useMswServer();

const client = (options: TapClientOptions = {}) =>
  new TapClient({ apiKey: KEY, baseUrl: TAP_BASE_URL, logLevel: 'off', maxRetries: 0, ...options });

/** Every form of `value` a log or a bug report could carry. */
function everyForm(value: unknown): string {
  const error = value as Error;
  return [String(error), error.stack ?? '', JSON.stringify(error), inspect(error, { depth: 10, showHidden: true })].join('\n');
}

function expectNoKey(value: unknown, key = KEY): void {
  const forms = everyForm(value).toLowerCase();
  expect(forms).not.toContain(key.toLowerCase());
  expect(forms).not.toContain(key.slice(0, 12).toLowerCase());
}

const fakeLogger = () => ({ debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() });

describe('the key is scrubbed from everything kept from a response', () => {
  it('an x-request-id header carrying the key: error.requestId, message and the retry warn line', async () => {
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json(tapError(503, 'unavailable', 'Unavailable'), {
          status: 503,
          headers: { 'retry-after': '0', 'x-request-id': KEY },
        }),
      ),
    );
    const logger = fakeLogger();
    const error = await rejectionOf(client({ logger, logLevel: 'warn', maxRetries: 1 }).listCustomerQueries());
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).requestId).toBe('[redacted]');
    expectNoKey(error);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(logger.warn.mock.calls)).not.toContain(KEY);
  });

  it.for([
    ['every character \\u-escaped', [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
    ['the slash escaped', KEY.replace('/', '\\/')],
    ['the dash escaped', KEY.replace('-', '\\u002d')],
  ])('a JSON-escaped echo (%s) is scrubbed after parsing', async ([, escaped]) => {
    const text = `{"success":false,"message":"invalid key ${escaped}","code":401,"error":"auth/${escaped}"}`;
    server.use(http.get(QUERIES_URL, () => new HttpResponse(text, { status: 401, headers: { 'content-type': 'application/json' } })));
    const error = await rejectionOf(client().listCustomerQueries());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).message).toContain('invalid key [redacted]');
    expectNoKey(error);
    expectNoKey((error as AuthenticationError).body);
    expect(JSON.stringify((error as AuthenticationError).body)).not.toContain(KEY);
  });

  it('a redirect whose Location host is the key (any letter case) keeps no key in RedirectError', async () => {
    const hostKey = 'tapkeylive9c2f6e1d7b4a3e8f';
    server.use(
      http.get(
        QUERIES_URL,
        () => new HttpResponse(null, { status: 307, headers: { location: `http://${hostKey.toUpperCase()}.attacker.test/` } }),
      ),
    );
    const error = await rejectionOf(client({ apiKey: hostKey }).listCustomerQueries());
    expect(error).toBeInstanceOf(RedirectError);
    expect((error as RedirectError).location).toBe('http://[redacted].attacker.test');
    expectNoKey(error, hostKey);
  });

  it('an error body cut at 64 KiB in the middle of the key keeps no part of it', async () => {
    const keep = 14;
    const text = `${'x'.repeat(64 * 1024 - keep)}${KEY}${'y'.repeat(100)}`;
    server.use(http.get(QUERIES_URL, () => new HttpResponse(text, { status: 500 })));
    const error = await rejectionOf(client().listCustomerQueries());
    const body = (error as InternalServerError).body as string;
    expect(body.endsWith('[redacted]')).toBe(true);
    expect(body).not.toContain(KEY.slice(0, 4));
  });

  it('every key a rotating key function returned is scrubbed, not only the current one', async () => {
    const keys = ['rotated-key-0001-aaaa', 'rotated-key-0002-bbbb'];
    let calls = 0;
    const apiKey: ApiKeySource = async () => keys[Math.min(calls++, 1)] as string;
    server.use(
      http.get(QUERIES_URL, () =>
        HttpResponse.json(tapError(401, 'auth/invalid', `revoked ${keys[0]}, current ${keys[1]}`), {
          status: 401,
          headers: { 'x-request-id': keys[0] as string },
        }),
      ),
    );
    const tap = client({ apiKey });
    await rejectionOf(tap.listCustomerQueries());
    const error = await rejectionOf(tap.listCustomerQueries());
    for (const key of keys) expectNoKey(error, key);
    expect(requests.map((request) => request.headers['x-api-key'])).toEqual(keys);
  });

  it('a ResponseValidationError keeps the body scrubbed, parsed values included', async () => {
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [{ echo: KEY, [KEY]: 1 }] })));
    const error = await rejectionOf(client().listCustomerQueries());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expectNoKey(error);
    expect(JSON.stringify((error as ResponseValidationError).body)).not.toContain(KEY);
  });
});

describe('the data the caller asked for is returned as the service sent it', () => {
  it('a key that also occurs in a valid response does not corrupt it', async () => {
    const input = customerQueryInput({ merchantName: `Shop ${KEY}` });
    const listed = customerQuery(input);
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [listed] })));
    expect(await client().listCustomerQueries()).toEqual([listed]);
  });

  it('a short key would corrupt ordinary text, so keys under 8 characters are refused', async () => {
    expect(() => new TapClient({ apiKey: 'abc1234', baseUrl: TAP_BASE_URL })).toThrow(ConfigurationError);
    expect(() => new TapClient({ apiKey: 'abc1234', baseUrl: TAP_BASE_URL })).toThrow(/at least 8 characters/);
    const error = await rejectionOf(client({ apiKey: () => 'abc' }).listCustomerQueries());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/at least 8 characters.*nothing was sent/);
    expect(requests).toHaveLength(0);
  });
});
