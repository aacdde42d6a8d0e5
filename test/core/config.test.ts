import { HttpResponse, http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError, InternalServerError, TapClient, type TapClientOptions, TapCollectionsError } from '../../src/index.js';
import { API_KEY, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { QUERIES_PATH, QUERIES_URL, rejectionOf } from '../helpers/tap.js';

const { server, requests } = useMswServer();
const valid: TapClientOptions = { apiKey: API_KEY, baseUrl: TAP_BASE_URL, logLevel: 'off' };

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

function constructionError(options?: unknown): ConfigurationError {
  let caught: unknown;
  try {
    new TapClient(options as TapClientOptions);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ConfigurationError);
  expect(caught).toBeInstanceOf(TapCollectionsError);
  return caught as ConfigurationError;
}

function clearTapEnv() {
  vi.stubEnv('TAP_API_KEY', undefined);
  vi.stubEnv('TAP_BASE_URL', undefined);
}

describe('TapClient configuration: the environment', () => {
  it('reads TAP_API_KEY and TAP_BASE_URL when no options are given', async () => {
    vi.stubEnv('TAP_API_KEY', 'env-key-0123456789');
    vi.stubEnv('TAP_BASE_URL', 'https://env.tap.test');
    server.use(http.get('https://env.tap.test/v1/tap/partners/customer-queries', () => HttpResponse.json({ success: true, data: [] })));
    await expect(new TapClient().listCustomerQueries()).resolves.toEqual([]);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers['x-api-key']).toBe('env-key-0123456789');
  });

  it('trims the environment values', async () => {
    vi.stubEnv('TAP_API_KEY', '  env-key-trimmed \n');
    vi.stubEnv('TAP_BASE_URL', ` ${TAP_BASE_URL} `);
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [] })));
    await new TapClient({ logLevel: 'off' }).listCustomerQueries();
    expect(requests[0]?.headers['x-api-key']).toBe('env-key-trimmed');
  });

  it('prefers the options over the environment', async () => {
    vi.stubEnv('TAP_API_KEY', 'env-key-0123456789');
    vi.stubEnv('TAP_BASE_URL', 'https://env.tap.test');
    server.use(http.get(QUERIES_URL, () => HttpResponse.json({ success: true, data: [] })));
    await new TapClient(valid).listCustomerQueries();
    expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
  });

  it('names the option and the variable when the key is missing', () => {
    clearTapEnv();
    const error = constructionError({ baseUrl: TAP_BASE_URL });
    expect(error.message).toContain('apiKey');
    expect(error.message).toContain('TAP_API_KEY');
    expect(error.message).not.toContain('TAP_BASE_URL');
  });

  it('names the option and the variable when the base URL is missing', () => {
    clearTapEnv();
    const error = constructionError({ apiKey: API_KEY });
    expect(error.message).toContain('baseUrl');
    expect(error.message).toContain('TAP_BASE_URL');
    expect(error.message).not.toContain('TAP_API_KEY');
  });

  it('names both when neither is set anywhere', () => {
    clearTapEnv();
    const error = constructionError();
    expect(error.message).toContain('TAP_API_KEY');
    expect(error.message).toContain('TAP_BASE_URL');
  });

  it('treats an empty environment variable as missing', () => {
    vi.stubEnv('TAP_API_KEY', '');
    vi.stubEnv('TAP_BASE_URL', '   ');
    const error = constructionError({});
    expect(error.message).toContain('TAP_API_KEY');
    expect(error.message).toContain('TAP_BASE_URL');
  });
});

describe('TapClient configuration: baseUrl', () => {
  it.each([
    'https://tap.test',
    'https://tap.test/',
    'https://api.tap.test:8443/sandbox',
    'http://localhost',
    'http://localhost:3000',
    'http://127.0.0.1:8080',
    'http://127.1.2.3',
    'http://[::1]',
    'http://[::1]:9000/',
    'http://api.localhost',
  ])('accepts %s', (baseUrl) => {
    expect(() => new TapClient({ ...valid, baseUrl })).not.toThrow();
  });

  it.each([
    ['http://example.com', 'https'],
    ['http://10.0.0.5', 'https'],
    ['http://localhost.example.com', 'https'],
    ['ftp://tap.test', 'https'],
    ['not-a-url', 'URL'],
    ['/v1/tap', 'URL'],
    ['', 'URL'],
    ['https://partner:s3cr3t-pass@tap.test', 'credentials'],
    ['https://tap.test/?key=1', 'query'],
    ['https://tap.test/#frag', 'query'],
  ])('refuses %j', (baseUrl, reason) => {
    const error = constructionError({ ...valid, baseUrl });
    expect(error.message).toContain('baseUrl');
    expect(error.message).toContain(reason);
    expect(error.message).not.toContain('s3cr3t-pass');
  });

  it.each([
    ['htp://tap.test', 'baseUrl htp: is not a scheme (use https:)'],
    ['ftp://tap.test', 'baseUrl ftp: is not a scheme (use https:)'],
    ['http://example.com/v1', 'baseUrl http: is allowed only for loopback hosts, and example.com is not one (use https:)'],
  ])('names the fault of %j, as verify() names what it finds: ConfigurationError, "Invalid … options: baseUrl …"', (baseUrl, fault) => {
    const error = constructionError({ ...valid, baseUrl });
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toBe(`Invalid TapClient options: ${fault}`);
  });

  it('refuses a baseUrl that is not a string', () => {
    expect(constructionError({ ...valid, baseUrl: new URL(TAP_BASE_URL) }).message).toContain('baseUrl');
  });

  it('joins the path without a double slash, keeping a path prefix', async () => {
    server.use(http.get('https://tap.test/sandbox/v1/tap/partners/customer-queries', () => HttpResponse.json({ success: true, data: [] })));
    await new TapClient({ ...valid, baseUrl: 'https://tap.test/sandbox/' }).listCustomerQueries();
    expect(requests[0]?.path).toBe(`/sandbox${QUERIES_PATH}`);
  });
});

describe('TapClient configuration: other options', () => {
  it.each([
    ['timeoutMs', 0],
    ['timeoutMs', -1],
    ['timeoutMs', 1.5],
    ['timeoutMs', Number.NaN],
    ['timeoutMs', Number.POSITIVE_INFINITY],
    ['timeoutMs', 2 ** 31],
    ['timeoutMs', '1000'],
    ['maxRetries', -1],
    ['maxRetries', 11],
    ['maxRetries', 0.5],
    ['maxRetries', '2'],
    ['maxRetryAfterMs', -1],
    ['maxConcurrentRequests', 0],
    ['maxResponseBytes', 100],
    ['logLevel', 'verbose'],
    ['logLevel', 'WARN'],
    ['logger', {}],
    ['logger', { debug() {}, info() {}, warn() {} }],
    ['logger', 'console'],
    ['logger', null],
    ['fetch', 'fetch'],
    ['apiKey', ''],
    ['apiKey', '   '],
    ['apiKey', 42],
    ['headers', { 'x-trace': 'a\r\nx-injected: 1' }],
    ['headers', { 'x-trace': 'line\nbreak' }],
    ['headers', { 'x-trace': 'nul\0' }],
    ['headers', { 'bad header': 'v' }],
    ['headers', { 'x-bad:': 'v' }],
    ['headers', { 'x-number': 42 }],
    ['headers', 'x-trace: 1'],
    ['headers', [['x-trace', '1']]],
  ])('refuses %s = %j, naming it', (option, value) => {
    const error = constructionError({ ...valid, [option]: value });
    expect(error.message).toContain(option);
  });

  it('names every bad option at once', () => {
    const error = constructionError({ ...valid, timeoutMs: 0, maxRetries: -1, logLevel: 'loud', headers: { 'a b': 'c' } });
    for (const option of ['timeoutMs', 'maxRetries', 'logLevel', 'headers']) expect(error.message).toContain(option);
  });

  it.each([null, 'https://tap.test', 42])('refuses options that are not an object (%j)', (options) => {
    constructionError(options);
  });

  it('accepts the edges of the ranges', () => {
    expect(() => new TapClient({ ...valid, timeoutMs: 1, maxRetries: 0 })).not.toThrow();
    expect(() => new TapClient({ ...valid, timeoutMs: 2_147_483_647, maxRetries: 10 })).not.toThrow();
    for (const logLevel of ['off', 'error', 'warn', 'info', 'debug'] as const)
      expect(() => new TapClient({ ...valid, logLevel })).not.toThrow();
  });

  it('never echoes a key that contains a line break', () => {
    const apiKey = 'tap_live_SECRET_9f8e7d\nx-injected: 1';
    const error = constructionError({ ...valid, apiKey });
    expect(error.message).toContain('apiKey');
    expect(error.message).not.toContain('tap_live_SECRET_9f8e7d');
    expect(error.stack ?? '').not.toContain('tap_live_SECRET_9f8e7d');
    expect(JSON.stringify(error)).not.toContain('tap_live_SECRET_9f8e7d');
  });

  it('never echoes a header value it refuses', () => {
    const error = constructionError({ ...valid, headers: { 'x-trace': 'private-value\r\n' } });
    expect(error.message).toContain('x-trace');
    expect(error.message).not.toContain('private-value');
  });

  it('retries twice by default', async () => {
    server.use(http.get(QUERIES_URL, () => new HttpResponse(null, { status: 503, headers: { 'retry-after': '0' } })));
    const error = await rejectionOf(new TapClient(valid).listCustomerQueries());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(requests).toHaveLength(3);
  });

  it('uses the given fetch instead of the global one', async () => {
    const fetch = vi.fn(async () => Response.json({ success: true, data: [] }));
    await expect(new TapClient({ ...valid, fetch }).listCustomerQueries()).resolves.toEqual([]);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(requests).toHaveLength(0);
  });
});

describe('TapClient configuration: browsers', () => {
  it('refuses to construct in a browser page', () => {
    vi.stubGlobal('window', { document: {} });
    const error = constructionError(valid);
    expect(error.message).toContain('dangerouslyAllowBrowser');
  });

  it('constructs in a browser page with dangerouslyAllowBrowser: true', () => {
    vi.stubGlobal('window', { document: {} });
    expect(() => new TapClient({ ...valid, dangerouslyAllowBrowser: true })).not.toThrow();
  });

  it('does not mistake a window without a document (e.g. some workers) for a page', () => {
    vi.stubGlobal('window', {});
    expect(() => new TapClient(valid)).not.toThrow();
  });
});

describe('the global fetch', () => {
  it('is looked up per request, so an interceptor installed after construction still sees the call', async () => {
    const client = new TapClient({ apiKey: 'tap_key_for_fetch_test', baseUrl: 'https://tap.test', maxRetries: 0, logLevel: 'off' });
    const seen: string[] = [];
    vi.stubGlobal('fetch', async (input: Request) => {
      seen.push(input.url);
      return new Response(JSON.stringify({ success: true, data: [] }), { status: 200 });
    });
    try {
      await expect(client.listCustomerQueries()).resolves.toEqual([]);
      expect(seen).toEqual(['https://tap.test/v1/tap/partners/customer-queries']);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
