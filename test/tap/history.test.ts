/**
 * The Tap list at any history size, on a real loopback server that generates the list as it is read and
 * counts what it wrote: the reconcile and verify() stop reading early (the server never finishes, the
 * connection closes), customerQueries() yields every query one at a time and cancels the rest when the
 * loop ends early, and the reconcile finds a query near the end of a list far past `maxResponseBytes`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  ConnectionError,
  type CustomerQuery,
  ResponseValidationError,
  TapClient,
  type TapClientOptions,
  TimeoutError,
} from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';
import { rejectionOf } from '../helpers/tap.js';
import {
  countingFetch,
  type HistoryServer,
  type HistoryServerOptions,
  historyInput,
  historyQueryText,
  historyReferenceId,
  startHistoryServer,
} from '../helpers/tap-history.js';

const servers: HistoryServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function historyOf(options: HistoryServerOptions): Promise<HistoryServer> {
  const server = await startHistoryServer(options);
  servers.push(server);
  return server;
}

const clientOf = (server: HistoryServer, options: TapClientOptions = {}) =>
  new TapClient({ apiKey: API_KEY, baseUrl: server.url, logLevel: 'off', maxRetries: 1, ...options });

/** About 700 bytes a query: 50 000 queries are a 36 MB list. */
const LARGE = 50_000;

async function collect(iterable: AsyncIterable<CustomerQuery>): Promise<CustomerQuery[]> {
  const queries: CustomerQuery[] = [];
  for await (const query of iterable) queries.push(query);
  return queries;
}

describe('verify() at any history size', () => {
  it('reads only the start of a 50 000-query list and closes the connection', async () => {
    const server = await historyOf({ count: LARGE });
    const counting = countingFetch();
    await expect(clientOf(server, { fetch: counting.fetch }).verify()).resolves.toBeUndefined();
    const [list] = server.lists;
    await list?.closed;
    expect(list?.finished).toBe(false);
    expect(list?.queriesWritten).toBeLessThan(LARGE / 4);
    expect(counting.consumed()).toBeLessThan(64 * 1024);
  });

  it('still reads a list whose first query is malformed as a configuration problem', async () => {
    const server = await historyOf({ count: 3, itemAt: (index) => (index === 0 ? '{"id":"x"}' : undefined) });
    const error = await rejectionOf(clientOf(server).verify());
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).cause).toBeInstanceOf(ResponseValidationError);
  });

  it('resolves on an empty list', async () => {
    const server = await historyOf({ count: 0 });
    await expect(clientOf(server).verify()).resolves.toBeUndefined();
  });
});

describe('reconcile of a timed-out submitCustomerQuery at any history size', () => {
  it('stops reading at its own query near the start of a 50 000-query list', async () => {
    const server = await historyOf({ count: LARGE });
    const counting = countingFetch();
    const query = await clientOf(server, { fetch: counting.fetch }).submitCustomerQuery(historyInput(10));
    expect(query.transaction.referenceId).toBe(historyReferenceId(10));
    expect(server.posts).toBe(2);
    const [list] = server.lists;
    await list?.closed;
    expect(list?.finished).toBe(false);
    expect(list?.queriesWritten).toBeLessThan(LARGE / 4);
    expect(counting.consumed()).toBeLessThan(256 * 1024);
  });

  it('finds its query near the end of a 50 000-query list far past maxResponseBytes, one query at a time', async () => {
    const server = await historyOf({ count: LARGE });
    // 36 MB of list against a 1 MiB maxResponseBytes: the list is never held whole.
    const client = clientOf(server, { maxResponseBytes: 1024 * 1024 });
    const query = await client.submitCustomerQuery(historyInput(LARGE - 2));
    expect(query.transaction.referenceId).toBe(historyReferenceId(LARGE - 2));
    expect(server.lists[0]?.queriesWritten).toBe(LARGE);
    // The array read still stops at its limit, and names the way to read a list this long.
    const error = await rejectionOf(client.listCustomerQueries());
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as Error).message).toContain('customerQueries()');
  });

  it('finds its own query and the query that excludes it however the service escapes their ids', async () => {
    // Rows are parsed only when their text may hold one of the call's ids: a \u escape may spell any of them.
    const escaped = (text: string) => [...text].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const own = historyReferenceId(300);
    const server = await historyOf({
      count: 400,
      itemAt: (index) => (index === 300 ? historyQueryText(300).replace(own, escaped(own)) : undefined),
    });
    const query = await clientOf(server).submitCustomerQuery(historyInput(300));
    expect(query.transaction.referenceId).toBe(own);

    // Another query holding this call's terminalId, spelt with escapes: the 409 stands as a definite error.
    const other = await historyOf({
      count: 400,
      itemAt: (index) => (index === 200 ? historyQueryText(200).replace('"terminal-200"', `"${escaped('terminal-x')}"`) : undefined),
    });
    const error = await rejectionOf(clientOf(other).submitCustomerQuery({ ...historyInput(500), terminalId: 'terminal-x' }));
    expect(error).toMatchObject({ name: 'ConflictError' });
  });

  it('stops with UnknownOutcomeError, never a false "not created", when the list is past maxListBytes', async () => {
    const server = await historyOf({ count: 2_000 });
    const error = await rejectionOf(clientOf(server, { maxListBytes: 64 * 1024 }).submitCustomerQuery(historyInput(1_999)));
    expect(error).toMatchObject({ name: 'UnknownOutcomeError', referenceId: historyReferenceId(1_999) });
  });
});

describe('customerQueries()', () => {
  it('yields every query of a 20 000-query list, in order, each validated', async () => {
    const server = await historyOf({ count: 20_000 });
    let count = 0;
    for await (const query of clientOf(server).customerQueries()) {
      expect(query.transaction.referenceId).toBe(historyReferenceId(count));
      count++;
    }
    expect(count).toBe(20_000);
    expect(server.lists[0]?.finished).toBe(true);
  });

  it('reads a bare array too, naming a bad item by its index', async () => {
    const server = await historyOf({ count: 5, shape: 'bare', itemAt: (index) => (index === 3 ? '{"id":"x"}' : undefined) });
    const seen: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const query of clientOf(server).customerQueries()) seen.push(query.id);
      })(),
    );
    expect(seen).toHaveLength(3);
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect((error as ResponseValidationError).issues[0]?.path).toBe('3.partner');
    expect((error as ResponseValidationError).body).toEqual({ id: 'x' });
  });

  it('cancels the response when the loop breaks early', async () => {
    const server = await historyOf({ count: LARGE });
    let count = 0;
    for await (const _query of clientOf(server).customerQueries()) if (++count === 5) break;
    const [list] = server.lists;
    await list?.closed;
    expect(list?.finished).toBe(false);
    expect(list?.queriesWritten).toBeLessThan(LARGE / 4);
  });

  it('rejects with ResponseValidationError naming a malformed item (not JSON, or not a query)', async () => {
    const broken = await historyOf({ count: 10, itemAt: (index) => (index === 4 ? '{"id":}' : undefined) });
    const notJson = (await rejectionOf(collect(clientOf(broken).customerQueries()))) as ResponseValidationError;
    expect(notJson).toBeInstanceOf(ResponseValidationError);
    expect(notJson.issues).toEqual([{ path: 'data.4', message: 'the item is not JSON' }]);

    const { customer: _dropped, ...withoutCustomer } = JSON.parse(historyQueryText(6)) as CustomerQuery;
    const invalid = await historyOf({ count: 10, itemAt: (index) => (index === 6 ? JSON.stringify(withoutCustomer) : undefined) });
    const error = (await rejectionOf(collect(clientOf(invalid).customerQueries()))) as ResponseValidationError;
    expect(error.issues.map((issue) => issue.path)).toEqual(['data.6.customer']);
    expect(error.message).toContain('data.6.customer');
  });

  it('keeps the key out of a malformed item kept on the error', async () => {
    const server = await historyOf({ count: 2, itemAt: (index) => (index === 1 ? JSON.stringify({ id: 1, note: API_KEY }) : undefined) });
    const error = (await rejectionOf(collect(clientOf(server).customerQueries()))) as ResponseValidationError;
    expect(JSON.stringify(error.body)).not.toContain(API_KEY);
  });

  it('rejects with ConnectionError when the connection drops mid-list, after the queries that arrived', async () => {
    const server = await historyOf({ count: LARGE, failAfter: { items: 1_000, how: 'destroy' } });
    let count = 0;
    const error = await rejectionOf(
      (async () => {
        for await (const _query of clientOf(server).customerQueries()) count++;
      })(),
    );
    expect(error).toBeInstanceOf(ConnectionError);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(1_000);
  });

  it('rejects with TimeoutError when the list stalls mid-stream, though a slow consumer is never timed out', async () => {
    const stalled = await historyOf({ count: LARGE, failAfter: { items: 100, how: 'stall' } });
    const error = await rejectionOf(collect(clientOf(stalled, { timeoutMs: 100 }).customerQueries()));
    expect(error).toBeInstanceOf(TimeoutError);

    // The timer runs only while the SDK waits for bytes, not while the loop body works.
    const server = await historyOf({ count: 3 });
    let count = 0;
    for await (const _query of clientOf(server, { timeoutMs: 100 }).customerQueries()) {
      if (count++ === 0) await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(count).toBe(3);
  });

  it('ends with the abort reason when the signal aborts mid-list, closing the connection', async () => {
    const server = await historyOf({ count: LARGE });
    const controller = new AbortController();
    const reason = new Error('till closed');
    let count = 0;
    const error = await rejectionOf(
      (async () => {
        for await (const _query of clientOf(server).customerQueries({ signal: controller.signal })) {
          if (++count === 10) controller.abort(reason);
        }
      })(),
    );
    expect(error).toBe(reason);
    await server.lists[0]?.closed;
    expect(server.lists[0]?.finished).toBe(false);
  });

  it('rejects bad options at once and bad maxListBytes at construction, sending nothing', async () => {
    const server = await historyOf({ count: 1 });
    expect(() => clientOf(server).customerQueries({ timeoutMs: 0 })).toThrow(/options\.timeoutMs/);
    expect(() => clientOf(server, { maxListBytes: 10 })).toThrow(ConfigurationError);
    expect(server.lists).toHaveLength(0);
  });
});

describe('customerQueries() across chunk boundaries', () => {
  /** A `fetch` answering `text` in pieces cut at `cuts` (byte offsets), as a network may deliver it. */
  const piecewise =
    (text: string, cuts: (length: number) => number[]): typeof fetch =>
    async () => {
      const bytes = new TextEncoder().encode(text);
      const ends = [...cuts(bytes.length), bytes.length];
      let start = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const end = ends.shift();
          if (end === undefined) return controller.close();
          controller.enqueue(bytes.slice(start, end));
          start = end;
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
    };

  // Strings holding quotes, backslashes (an escape may be cut between its two characters), brackets and
  // multi-byte characters (cut mid-character); members before and after `data`.
  const tricky = [0, 1, 2].map((index) => ({
    ...(JSON.parse(historyQueryText(index)) as CustomerQuery),
    note: ['a "quoted" ] } [ {', 'back\\slash\\\\', 'Chipata — Lusaka ✓ 🇿🇲', '\\"'][index],
  }));
  const text = ` \n{"success":true,"meta":{"note":"data: [\\"not it\\"]","n":[1,{"a":"]"}]},"data" : [ ${tricky
    .map((query) => JSON.stringify(query))
    .join(' ,\n')} ] ,"total":3}`;

  it.each([
    ['one byte at a time', (length: number) => Array.from({ length: length - 1 }, (_, index) => index + 1)],
    ['in pieces of 7 bytes', (length: number) => Array.from({ length: Math.floor((length - 1) / 7) }, (_, index) => (index + 1) * 7)],
    ['whole', () => []],
  ])('yields the same queries as JSON.parse when the body arrives %s', async (_name, cuts) => {
    const client = new TapClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:8080', logLevel: 'off', fetch: piecewise(text, cuts) });
    expect(await collect(client.customerQueries())).toEqual(tricky);
  });

  it.each([
    ['{"success":true}', '', 'the object has no data array'],
    ['{"data":{"items":[]}}', 'data', 'data is not an array'],
    [`{"data":[${historyQueryText(0)},]}`, 'data.1', 'the list ends with a comma'],
    ['{"data":[', '', 'the body ends before the list does'],
    ['', '', 'the body is empty'],
    ['<html>', '', 'the body is neither a JSON array nor an object with a data array'],
  ])('rejects body %# with ResponseValidationError at %j', async (body, path, message) => {
    const client = new TapClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:8080', logLevel: 'off', fetch: piecewise(body, () => []) });
    const error = (await rejectionOf(collect(client.customerQueries()))) as ResponseValidationError;
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error.issues).toEqual([{ path, message }]);
  });
});
