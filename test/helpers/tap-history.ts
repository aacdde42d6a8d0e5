/**
 * A Tap service with a long history, on loopback: `GET /v1/tap/partners/customer-queries` streams `count`
 * queries generated on the fly (about 700 bytes each, never held whole), writing only as fast as the client
 * reads (backpressure), and counts what it wrote and whether the client closed the connection before the end.
 * `POST` answers as a timed-out create would: the first attempt's connection is dropped, later ones get 409.
 *
 * Only `node:` imports, so both vitest and the benchmarks (run by Node directly) load it as it is.
 */
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const HISTORY_QUERIES_PATH = '/v1/tap/partners/customer-queries';

/** The referenceId of the query at `index` of a generated history (UUID-shaped, unique). */
export function historyReferenceId(index: number): string {
  return `00000000-0000-4000-8000-${index.toString(16).padStart(12, '0')}`;
}

/** The create input of the query at `index`: what a till would have sent. */
export function historyInput(index: number) {
  return {
    merchantId: `merchant-${index}`,
    merchantName: 'Kabwe Groceries and General Dealers Ltd',
    terminalId: `terminal-${index}`,
    amount: 125.5,
    tagId: `TAG-${index}`,
    referenceId: historyReferenceId(index),
  };
}

/** The JSON text of the query at `index`, as the service lists it (about 700 bytes). */
export function historyQueryText(index: number): string {
  const id = `9b2e4c1a-0d3f-4e5a-8b6c-${index.toString(16).padStart(12, '0')}`;
  const input = historyInput(index);
  return (
    `{"id":"${id}","partner":{"partnerId":"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d","partnerName":"Kabwe Retail Ltd"},` +
    `"customer":{"firstName":"Mwila","lastName":"Banda"},` +
    `"tag":{"tagId":"${input.tagId}","tagNumber":"0001-2345-6789","status":"active",` +
    `"mobileNumbers":[{"operator":"airtel_money","mobileNumber":"260977123456","status":"active"}]},` +
    `"transaction":{"merchantId":"${input.merchantId}","merchantName":"${input.merchantName}","terminalId":"${input.terminalId}",` +
    `"referenceId":"${input.referenceId}","currency":"ZMW","amount":${input.amount},"serviceCharge":2.5,"status":"pending",` +
    `"narration":"Tap \\"purchase\\" at till \\\\ ${index}"},` +
    `"createdAt":"2026-11-21T10:15:30.123Z","updatedAt":"2026-11-21T10:15:30.123Z"}`
  );
}

/** What one list response did. */
export interface ListResponseStats {
  /** Body bytes written to the socket. */
  bytesWritten: number;
  /** Queries written. */
  queriesWritten: number;
  /** True once the whole list was written. */
  finished: boolean;
  /** Resolves when the response's connection closed (or the response ended). */
  readonly closed: Promise<void>;
}

export interface HistoryServerOptions {
  /** Earlier queries in the list. */
  readonly count: number;
  /** `{ success, data: [...] }` (default) or a bare array. */
  readonly shape?: 'data' | 'bare';
  /** The JSON text of the item at `index`, instead of {@link historyQueryText} (return `undefined` to keep it). */
  readonly itemAt?: (index: number) => string | undefined;
  /** After this many items: `destroy` the socket, or `stall` (write nothing more, keep it open). */
  readonly failAfter?: { readonly items: number; readonly how: 'destroy' | 'stall' };
}

export interface HistoryServer {
  readonly url: string;
  /** One entry per list request, in order. */
  readonly lists: ListResponseStats[];
  /** POST requests received. */
  posts: number;
  close(): Promise<void>;
}

/** Items per write: big enough that generating is cheap, small enough that backpressure is felt. */
const BATCH = 32;

export async function startHistoryServer(options: HistoryServerOptions): Promise<HistoryServer> {
  const sockets = new Set<Socket>();
  const state: HistoryServer = { url: '', lists: [], posts: 0, close: async () => undefined };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.method === 'POST') {
        state.posts++;
        // The first attempt's outcome is unknown to the client (the connection drops after the body arrived).
        if (state.posts === 1) request.socket.destroy();
        else {
          const body = JSON.stringify({ success: false, message: 'exists', code: 409, error: 'resource/already-exists-error' });
          response.writeHead(409, { 'content-type': 'application/json' }).end(body);
        }
        return;
      }
      void streamList(response, options, state.lists);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

async function streamList(response: ServerResponse, options: HistoryServerOptions, lists: ListResponseStats[]): Promise<void> {
  let gone = false;
  const closed = new Promise<void>((resolve) => response.once('close', resolve));
  void closed.then(() => {
    gone = true;
  });
  const stats: ListResponseStats = { bytesWritten: 0, queriesWritten: 0, finished: false, closed };
  lists.push(stats);
  response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-history' });
  const write = async (text: string) => {
    stats.bytesWritten += Buffer.byteLength(text);
    if (!response.write(text)) await Promise.race([once(response, 'drain'), closed]);
  };
  const bare = options.shape === 'bare';
  await write(bare ? '[' : '{"success":true,"data":[');
  const end = options.failAfter?.items ?? options.count;
  for (let index = 0; index < end && !gone; ) {
    const parts: string[] = [];
    const stop = Math.min(end, index + BATCH);
    for (; index < stop; index++) parts.push((index === 0 ? '' : ',') + (options.itemAt?.(index) ?? historyQueryText(index)));
    await write(parts.join(''));
    stats.queriesWritten = index;
  }
  if (gone) return;
  if (options.failAfter?.how === 'destroy') response.socket?.destroy();
  if (options.failAfter !== undefined) return;
  await write(bare ? ']' : `],"total":${options.count}}`);
  stats.finished = true;
  response.end();
}

/** What the client did with the last GET's response body. */
export interface BodyUse {
  /** When the GET was sent (`performance.now()`). */
  started: number;
  /** When its body was read to the end or cancelled; `undefined` while open. */
  ended: number | undefined;
}

/**
 * A `fetch` that counts the response body bytes the client consumed (what it read, not what the socket
 * buffered), for the client's `fetch` option; `lastGet` times the last GET from its sending to its body's end.
 */
export function countingFetch(): { fetch: typeof fetch; consumed: () => number; lastGet: () => BodyUse | undefined } {
  let consumed = 0;
  let lastGet: BodyUse | undefined;
  const counting: typeof fetch = async (input, init) => {
    const use: BodyUse = { started: performance.now(), ended: undefined };
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    if (method === 'GET') lastGet = use;
    const response = await fetch(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done) {
            use.ended = performance.now();
            controller.close();
          } else {
            consumed += value.byteLength;
            controller.enqueue(value);
          }
        },
        cancel: (reason) => {
          use.ended = performance.now();
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return { fetch: counting, consumed: () => consumed, lastGet: () => lastGet };
}
