/** A ConnectionError names the host it could not reach, and says whether DNS or the connection failed. */
import { describe, expect, it } from 'vitest';
import { CollectionsClient, ConfigurationError, ConnectionError, TapClient } from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';
import { closedPort, startLoopbackServer } from '../helpers/http-server.js';
import { rejectionOf } from '../helpers/tap.js';

const REFERENCE_ID = 'c0a8012e-7d3b-4f6a-9b1c-2d3e4f5a6b7c';

/** undici's shape for a failed lookup: `TypeError('fetch failed')` caused by a `getaddrinfo` error with its code. */
const undiciDnsFailure = (code: string, host: string) => async (): Promise<Response> => {
  throw new TypeError('fetch failed', { cause: Object.assign(new Error(`getaddrinfo ${code} ${host}`), { code, hostname: host }) });
};

function expectKeyAndPathAbsent(error: unknown): void {
  const seen = `${(error as Error).message} ${JSON.stringify(error)}`;
  expect(seen).not.toContain(API_KEY);
  expect(seen).not.toContain(REFERENCE_ID);
  expect(seen).not.toContain('/v1/');
}

describe('ConnectionError names the host', () => {
  it('a refused loopback port: reason connection-refused, the host and port named, nothing sent', async () => {
    const port = await closedPort();
    const client = new CollectionsClient({ apiKey: API_KEY, baseUrl: `http://127.0.0.1:${port}/gateway`, logLevel: 'off', maxRetries: 0 });
    const error = await rejectionOf(client.checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ host: `127.0.0.1:${port}`, reason: 'connection-refused', requestMayHaveBeenSent: false });
    expect((error as Error).message).toBe(`127.0.0.1:${port} refused the connection (nothing listens there); nothing was sent`);
    expectKeyAndPathAbsent(error);
  });

  it('a host name that cannot resolve (.invalid, NXDOMAIN by RFC 6761): reason dns-lookup-failed', async () => {
    const client = new TapClient({
      apiKey: API_KEY,
      baseUrl: 'https://tap-sdk-test.invalid',
      logLevel: 'off',
      maxRetries: 0,
      timeoutMs: 5_000,
    });
    const error = await rejectionOf(client.listCustomerQueries());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ host: 'tap-sdk-test.invalid', reason: 'dns-lookup-failed', requestMayHaveBeenSent: false });
    expect((error as Error).message).toContain('Could not resolve the host tap-sdk-test.invalid (DNS lookup failed); nothing was sent');
    expectKeyAndPathAbsent(error);
  });

  it.each(['ENOTFOUND', 'EAI_AGAIN'])('undici %s reads as a failed DNS lookup, not a refused connection', async (code) => {
    const host = 'api.example.zm';
    const client = new CollectionsClient({
      apiKey: API_KEY,
      baseUrl: `https://${host}`,
      logLevel: 'off',
      maxRetries: 0,
      fetch: undiciDnsFailure(code, host),
    });
    const error = await rejectionOf(client.checkStatus(REFERENCE_ID));
    expect(error).toMatchObject({ host, reason: 'dns-lookup-failed', requestMayHaveBeenSent: false });
    expect((error as Error).message).not.toContain('refused');
  });

  it('a connection cut after sending names the host and gives no reason', async () => {
    const client = new CollectionsClient({
      apiKey: API_KEY,
      baseUrl: 'https://api.example.zm:8443',
      logLevel: 'off',
      maxRetries: 0,
      fetch: async () => {
        throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
      },
    });
    const error = await rejectionOf(client.checkStatus(REFERENCE_ID));
    expect(error).toMatchObject({ host: 'api.example.zm:8443', reason: undefined, requestMayHaveBeenSent: true });
    expect((error as Error).message).toBe('The connection to api.example.zm:8443 failed; the request may have reached the service');
  });

  it('a key pasted into the host is never echoed', async () => {
    const key = 'colkey1234567890';
    const client = new CollectionsClient({
      apiKey: key,
      baseUrl: `https://${key}.example.zm`,
      logLevel: 'off',
      maxRetries: 0,
      fetch: undiciDnsFailure('ENOTFOUND', `${key}.example.zm`),
    });
    const error = await rejectionOf(client.checkStatus(REFERENCE_ID));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).not.toContain(key);
    expect((error as ConnectionError).host).not.toContain(key);
  });
});

describe('an https: base URL in front of a server that speaks plain HTTP (the TLS handshake answered in plain text)', () => {
  it('verify() and a status check: a ConfigurationError naming baseUrl, not "the request may have reached the service"', async () => {
    const server = await startLoopbackServer();
    try {
      const baseUrl = `https://127.0.0.1:${server.port}`;
      const client = new CollectionsClient({ apiKey: API_KEY, baseUrl, logLevel: 'off', maxRetries: 2 });
      for (const call of [() => client.verify(), () => client.checkStatus(REFERENCE_ID)]) {
        const error = await rejectionOf(call());
        expect(error).toBeInstanceOf(ConfigurationError);
        expect((error as Error).message).toBe(
          `Invalid client options: baseUrl https://127.0.0.1:${server.port} does not answer in TLS (a plain-HTTP server there? use its https: address, or http: for a loopback host)`,
        );
        expectKeyAndPathAbsent(error);
      }
      // Not one request reached the server as HTTP (each ended at the handshake), and none was retried as a network failure.
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a create keeps the safe reading (its attempt may have left): it names baseUrl, and never says nothing was sent', async () => {
    const server = await startLoopbackServer();
    try {
      const baseUrl = `https://127.0.0.1:${server.port}`;
      const client = new CollectionsClient({ apiKey: API_KEY, baseUrl, logLevel: 'off', maxRetries: 0 });
      const error = await rejectionOf(
        client.initiate({ productId: REFERENCE_ID, phoneNumber: '260977123456', amount: 5, referenceId: REFERENCE_ID }),
      );
      const messages: string[] = [];
      for (let current: unknown = error; current instanceof Error; current = current.cause) messages.push(current.message);
      expect(messages.join(' | ')).toContain(`baseUrl https://127.0.0.1:${server.port} does not answer in TLS`);
      expect(messages.join(' | ')).not.toContain('nothing was sent');
    } finally {
      await server.close();
    }
  });
});
