/**
 * What `fetch` cannot send is refused before anything is sent, as a typed error naming the field: never a
 * create that ends "maybe sent" with zero requests at the server, never a raw TypeError or URIError.
 */
import { describe, expect, it } from 'vitest';
import { CollectionsClient, ConfigurationError, RequestValidationError, TapClient } from '../../src/index.js';
import { collectionInput, collectionsClient, REFERENCE_ID } from '../helpers/collections.js';
import { COLLECTIONS_BASE_URL, customerQueryInput, TAP_BASE_URL } from '../helpers/fixtures.js';
import { useMswServer } from '../helpers/msw.js';
import { rejectionOf, tapClient } from '../helpers/tap.js';

const { requests } = useMswServer();

const UNSENDABLE_HEADERS: readonly [string, Record<string, string>][] = [
  ['a value above U+00FF', { 'x-shop': 'Café €1' }],
  ...['expect', 'transfer-encoding', 'upgrade', 'keep-alive', 'connection', 'host', 'content-length', 'te', 'trailer'].map(
    (name): [string, Record<string, string>] => [`the runtime's header ${name}`, { [name]: name === 'expect' ? '100-continue' : 'x' }],
  ),
  ['a CR LF in the value', { 'x-shop': 'a\r\nx-injected: 1' }],
];

describe('headers fetch cannot send', () => {
  it.for(UNSENDABLE_HEADERS)('%s: ConfigurationError at construction, naming the header', ([, headers]) => {
    const name = Object.keys(headers)[0] as string;
    for (const construct of [
      () => new TapClient({ apiKey: 'test-key-0001', baseUrl: TAP_BASE_URL, headers }),
      () => new CollectionsClient({ apiKey: 'test-key-0001', baseUrl: COLLECTIONS_BASE_URL, headers }),
    ]) {
      expect(construct).toThrow(ConfigurationError);
      expect(construct).toThrow(`headers.${name}`);
    }
  });

  it.for(UNSENDABLE_HEADERS)('%s: RequestValidationError per call, nothing sent (creates too)', async ([, headers]) => {
    const name = Object.keys(headers)[0] as string;
    for (const call of [
      () => tapClient().submitCustomerQuery(customerQueryInput(), { headers }),
      () => collectionsClient().initiate(collectionInput(), { headers }),
      () => collectionsClient().checkStatus(REFERENCE_ID, { headers }),
    ]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(RequestValidationError);
      expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual([`options.headers.${name}`]);
    }
    expect(requests).toHaveLength(0);
  });

  it('an API key fetch cannot send is refused at construction', () => {
    expect(() => new TapClient({ apiKey: 'clé-€-0000001', baseUrl: TAP_BASE_URL })).toThrow(ConfigurationError);
  });

  it('an API key function returning a key fetch cannot send: ConfigurationError, nothing sent', async () => {
    const error = await rejectionOf(tapClient({ apiKey: () => 'clé-€-0000001' }).listCustomerQueries());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(requests).toHaveLength(0);
  });
});

describe('values JavaScript cannot do arithmetic or encoding with', () => {
  it.for([
    { option: 'intervalMs', label: '1n', value: 1n },
    { option: 'maxIntervalMs', label: '1n', value: 1n },
    { option: 'maxWaitMs', label: '5n', value: 5n },
    { option: 'initialDelayMs', label: 'a Symbol', value: Symbol('x') },
    { option: 'intervalMs', label: 'a Symbol', value: Symbol('x') },
    { option: 'timeoutMs', label: 'a Symbol', value: Symbol('x') },
    { option: 'settledStatuses', label: '[a Symbol]', value: [Symbol('x')] },
  ])('pollUntilSettled({ $option: $label }) → RequestValidationError naming it', async ({ option, value }) => {
    const error = await rejectionOf(collectionsClient().pollUntilSettled(REFERENCE_ID, { [option]: value } as never));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toContain(`options.${option}`);
    expect(requests).toHaveLength(0);
  });

  it.for(['\ud800', 'abc\udfff', '\udc00\ud800'])('getById(%j) (a lone surrogate) → RequestValidationError on id', async (id) => {
    const error = await rejectionOf(collectionsClient().getById(id));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual(['id']);
    expect(requests).toHaveLength(0);
  });

  it('getById keeps well-formed astral characters (a surrogate pair) and encodes them', async () => {
    const error = await rejectionOf(
      collectionsClient({
        fetch: async (input) => {
          throw new Error(String(input instanceof Request ? input.url : input));
        },
        maxRetries: 0,
      }).getById('id-😀'),
    );
    expect(String((error as Error).cause ?? error)).toContain('id-%F0%9F%98%80');
  });
});
