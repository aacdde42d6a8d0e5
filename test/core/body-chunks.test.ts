import { describe, expect, it } from 'vitest';
import { type FetchFunction, TapClient } from '../../src/index.js';
import { customerQuery, customerQueryInput, TAP_BASE_URL } from '../helpers/fixtures.js';

/** A fetch answering 201 with `text` split into chunks of `size` bytes (cutting through multi-byte characters). */
function chunkedFetch(text: string, size: number): FetchFunction {
  const bytes = new TextEncoder().encode(text);
  return async () => {
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.slice(offset, offset + size));
        offset += size;
      },
    });
    return new Response(body, { status: 201, headers: { 'content-type': 'application/json' } });
  };
}

describe('a response body read in chunks', () => {
  const input = customerQueryInput();
  // Names in several scripts: 2-, 3- and 4-byte UTF-8 characters, so small chunks split them.
  const query = customerQuery(input, { customer: { firstName: 'Chánda ✓', lastName: 'Mwale 𝄞' } });
  const text = JSON.stringify({ success: true, data: query });

  it.each([1, 2, 3, 7, 64, text.length * 4])('reads back whole in chunks of %i bytes', async (size) => {
    const client = new TapClient({ apiKey: 'test-key-0001', baseUrl: TAP_BASE_URL, fetch: chunkedFetch(text, size), logLevel: 'off' });
    expect(await client.submitCustomerQuery(input)).toEqual(query);
  });

  it('drops a leading byte-order mark, whether the body comes in one chunk or several', async () => {
    for (const size of [1, text.length * 4]) {
      const client = new TapClient({
        apiKey: 'test-key-0001',
        baseUrl: TAP_BASE_URL,
        fetch: chunkedFetch(`\uFEFF${text}`, size),
        logLevel: 'off',
      });
      expect(await client.submitCustomerQuery(input)).toEqual(query);
    }
  });
});
