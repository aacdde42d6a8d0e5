import { describe, expect, it } from 'vitest';
import { type FetchFunction, TapClient, TimeoutError } from '../../src/index.js';
import { customerQuery, customerQueryInput, TAP_BASE_URL } from '../helpers/fixtures.js';

/** A fetch that never answers and watches only `init.signal`, as some fetch implementations do. */
function hangingFetch() {
  const seen: Array<{ signalGiven: boolean }> = [];
  const fetch: FetchFunction = (_input, init) => {
    seen.push({ signalGiven: init?.signal instanceof AbortSignal });
    return new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }));
  };
  return { fetch, seen };
}

describe('a custom fetch', () => {
  it('is given the attempt’s signal itself, so a timeout reaches a fetch that watches only init.signal', async () => {
    const { fetch, seen } = hangingFetch();
    const client = new TapClient({ apiKey: 'test-key-0001', baseUrl: TAP_BASE_URL, fetch, timeoutMs: 30, maxRetries: 0, logLevel: 'off' });
    await expect(client.listCustomerQueries()).rejects.toBeInstanceOf(TimeoutError);
    expect(seen).toEqual([{ signalGiven: true }]);
  });

  it('is given the attempt’s signal, so the caller’s abort reaches it too', async () => {
    const { fetch } = hangingFetch();
    const client = new TapClient({ apiKey: 'test-key-0001', baseUrl: TAP_BASE_URL, fetch, maxRetries: 0, logLevel: 'off' });
    const controller = new AbortController();
    const call = client.listCustomerQueries({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('till closed')), 10);
    await expect(call).rejects.toThrow('till closed');
  });

  it('is given the request body in init as well as in the Request, so it need not copy the Request’s body stream', async () => {
    const seen: Array<{ input: string; init: unknown }> = [];
    const input = customerQueryInput();
    const fetch: FetchFunction = async (request, init) => {
      seen.push({ input: await (request as Request).clone().text(), init: init?.body });
      return Response.json({ success: true, data: customerQuery(input) }, { status: 201 });
    };
    const client = new TapClient({ apiKey: 'test-key-0001', baseUrl: TAP_BASE_URL, fetch, maxRetries: 0, logLevel: 'off' });
    await client.submitCustomerQuery(input);
    await client.listCustomerQueries().catch(() => undefined);
    expect(seen).toEqual([
      { input: JSON.stringify(input), init: JSON.stringify(input) },
      { input: '', init: undefined },
    ]);
  });
});
