import { describe, expect, it } from 'vitest';
import { classifyConnectionFailure } from '../../src/core/connection-failure.js';
import { CollectionsClient, ConfigurationError, ConnectionError, TapClient, UnknownOutcomeError } from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';
import { closedPort } from '../helpers/http-server.js';
import { rejectionOf } from '../helpers/tap.js';

const PRODUCT_ID = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';

/** Deno 2.9: a refused connection, no `code` anywhere. */
const denoRefused = () =>
  new TypeError('fetch failed', {
    cause: new Error(
      'error sending request for url (http://127.0.0.1:39999/collections/health): client error (Connect): tcp connect error: Connection refused (os error 111)',
    ),
  });
/** Deno 2.9: a port on fetch's blocked list. */
const denoBlockedPort = () => new TypeError('Fetch failed: Requests to port 6000 are blocked');
/** Deno 2.9 without `--allow-net`. */
const denoNotCapable = () =>
  Object.assign(new Error('Requires net access to "127.0.0.1:39999", run again with the --allow-net flag'), { name: 'NotCapable' });
/** Bun 1.4: the code on the error itself. */
const bunRefused = () =>
  Object.assign(new TypeError('ECONNREFUSED: Unable to connect. Is the computer able to access the url?'), { code: 'ECONNREFUSED' });
/** workerd: said of a refused connection and of one cut after sending alike. */
const workerdLost = () => new Error('Network connection lost.');

/** A fetch that fails every call with `makeError()`, counting calls. */
function failingFetch(makeError: () => Error) {
  const fetch = async (): Promise<Response> => {
    fetch.calls++;
    throw makeError();
  };
  fetch.calls = 0;
  return fetch;
}

function collections(fetch: ReturnType<typeof failingFetch>, maxRetries = 0) {
  return new CollectionsClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:39999', logLevel: 'off', maxRetries, fetch });
}

async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}

describe('a refused connection, read per runtime', () => {
  it.each([
    ['Deno (message only, no code)', denoRefused],
    ['Deno, blocked port', denoBlockedPort],
    ['Bun', bunRefused],
  ])('%s: health fails as ConnectionError, not sent', async (_runtime, makeError) => {
    const error = await rejectionOf(collections(failingFetch(makeError)).health());
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(false);
    expect((error as ConnectionError).message).toContain('nothing was sent');
  });

  it('Deno: initiate ends as ConnectionError (nothing was sent), not UnknownOutcomeError', async () => {
    const fetch = failingFetch(denoRefused);
    const error = await rejectionOf(collections(fetch).initiate({ productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 5 }));
    expect(error).not.toBeInstanceOf(UnknownOutcomeError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(false);
    // No lookup by reference: nothing could have been created.
    expect(fetch.calls).toBe(1);
  });

  it('workerd cannot tell a refusal from a cut: the safe reading stands, and initiate reports an unknown outcome', async () => {
    const health = await rejectionOf(collections(failingFetch(workerdLost)).health());
    expect((health as ConnectionError).requestMayHaveBeenSent).toBe(true);
    const initiate = await rejectionOf(
      collections(failingFetch(workerdLost)).initiate({ productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 5 }),
    );
    expect(initiate).toBeInstanceOf(UnknownOutcomeError);
  });

  it('Node: a real refused connection is read as not sent', async () => {
    const client = new CollectionsClient({ apiKey: API_KEY, baseUrl: await closedPortUrl(), logLevel: 'off', maxRetries: 0 });
    const error = await rejectionOf(client.health());
    expect((error as ConnectionError).requestMayHaveBeenSent).toBe(false);
  });

  it("Node: undici's real 'bad port' refusal proves nothing was sent", async () => {
    const failure = await globalThis.fetch('http://127.0.0.1:6000/').catch((error: unknown) => error);
    expect(classifyConnectionFailure(failure)).toBe('not-sent');
  });

  it('reads a reset, a bare TypeError or a non-error as possibly sent', () => {
    expect(classifyConnectionFailure(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))).toBe('may-have-been-sent');
    expect(classifyConnectionFailure(new TypeError('Failed to fetch'))).toBe('may-have-been-sent');
    expect(classifyConnectionFailure(new Error('the server refused the payment'))).toBe('may-have-been-sent');
    expect(classifyConnectionFailure('ECONNREFUSED')).toBe('may-have-been-sent');
    // The first code decides: a reset wrapping a refusal's wording is still a reset.
    const reset = Object.assign(new Error('socket hang up', { cause: new Error('tcp connect error: Connection refused') }), {
      code: 'ECONNRESET',
    });
    expect(classifyConnectionFailure(reset)).toBe('may-have-been-sent');
  });
});

describe('a network permission refused (Deno without --allow-net)', () => {
  it('is a ConfigurationError naming the flag, not retried', async () => {
    const fetch = failingFetch(denoNotCapable);
    const error = await rejectionOf(collections(fetch, 2).health());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('--allow-net');
    expect(fetch.calls).toBe(1);
  });

  it('ends initiate as ConfigurationError (nothing was sent), never UnknownOutcomeError', async () => {
    const fetch = failingFetch(denoNotCapable);
    const error = await rejectionOf(collections(fetch, 2).initiate({ productId: PRODUCT_ID, phoneNumber: '0977123456', amount: 5 }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(fetch.calls).toBe(1);
  });
});

describe("ports on fetch's blocked list", () => {
  it.each([1, 6000, 6666, 10080])('a base URL on port %i is refused at construction, naming baseUrl', (port) => {
    expect(() => new TapClient({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${port}` })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', message: expect.stringMatching(new RegExp(`baseUrl uses port ${port}`)) }),
    );
  });

  it('allows the default ports and ordinary ones', () => {
    expect(() => new TapClient({ apiKey: API_KEY, baseUrl: 'https://sandbox.example' })).not.toThrow();
    expect(() => new TapClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:4010' })).not.toThrow();
  });
});
