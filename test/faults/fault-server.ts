/**
 * The fault suite's server: both services (`fake-services.ts`) behind a real `node:http` server on 127.0.0.1
 * (port 0), with a request log and a per-route fault queue that breaks the wire (resets before and after the
 * commit, hangs, cut bodies, HTML pages, 429s, cross-origin redirects, slow commits). A fault queued on a route
 * applies to the next N requests of that route; the requests after it are served normally.
 *
 * The services' keys, routes and record shapes are re-exported here, so a test imports its server from one place.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { closedPort, type LoopbackServer, startLoopbackServer } from '../helpers/http-server.js';
import {
  FakeServices,
  type FakeServicesOptions,
  type Route,
  routeOf,
  type SeededCollectionInput,
  type StoredCollection,
  type StoredQuery,
  serviceFailure,
  type TapQuery,
  type TapQueryInput,
} from './fake-services.js';

export {
  COLLECTIONS_KEY,
  COLLECTIONS_PRODUCT_ID,
  OTHER_PARTNER_TAP_KEY,
  ROUTES,
  type Route,
  type StoredCollection,
  type StoredQuery,
  TAP_KEY,
  type TapQuery,
  type TapQueryInput,
} from './fake-services.js';

export type BodyKind = 'json' | 'html' | 'empty';

/** What the server does to a request instead of (or after) serving it. */
export type Fault =
  /** Destroys the socket as soon as the request arrived: nothing is processed. */
  | { readonly kind: 'reset-before-headers' }
  /** Processes the request (a create is committed), then destroys the socket without answering. */
  | { readonly kind: 'reset-after-commit' }
  /** Processes the request, writes the headers and half the JSON body, then destroys the socket. */
  | { readonly kind: 'reset-mid-body' }
  /** Processes the request, then never answers (the client's `timeoutMs` must end the attempt). */
  | { readonly kind: 'hang' }
  /** Answers `status` with a JSON envelope, an HTML page or nothing; `commit` processes the request first. */
  | { readonly kind: 'status'; readonly status: number; readonly body: BodyKind; readonly retryAfter?: string; readonly commit?: boolean }
  /** Answers 429 with `Retry-After` (seconds or an HTTP date) and the service's JSON envelope. */
  | { readonly kind: 'rate-limit'; readonly retryAfter: string }
  /** Processes the request and answers its 2xx status with the JSON body cut in half. */
  | { readonly kind: 'truncated-json' }
  /** Processes the request and answers 200 with an HTML page. */
  | { readonly kind: 'html-200' }
  /** Answers 307 to the same path on the second ("other origin") server, processing nothing. */
  | { readonly kind: 'redirect-cross-origin' }
  /** Processes the request only after `delayMs` (the client may have given up by then), then answers normally. */
  | { readonly kind: 'slow-commit'; readonly delayMs: number };

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  readonly route: Route;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
  /** The fault applied to this request, if any. */
  readonly fault: Fault['kind'] | undefined;
}

export interface FaultServerOptions extends FakeServicesOptions {
  /** Asked for a fault when a route's queue is empty (seeded chaos). @defaultValue none */
  readonly pickFault?: (route: Route) => Fault | undefined;
}

export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The second origin a `redirect-cross-origin` fault points at. */
  readonly otherOrigin: LoopbackServer;
  /** Every request received, in order. */
  readonly log: LoggedRequest[];
  /** Every customer query held, every partner's. */
  readonly tapQueries: StoredQuery[];
  /** Every collection held, by `referenceId`. */
  readonly collections: ReadonlyMap<string, StoredCollection>;
  /** How many times a create was stored, per `referenceId` (both services): more than 1 is a double record. */
  readonly stores: Map<string, number>;
  /** Creates still to be processed by a `slow-commit` fault. */
  pendingCommits(): number;
  /** Connections open right now. */
  openConnections(): number;
  /** Adds a raw row to a partner's Tap list, as the service might return one it cannot describe well. */
  seedRawTapRow(row: unknown, apiKey?: string): void;
  /** Applies `fault` to the next `times` requests of `route` (`Infinity`: every one). Faults queue in order. */
  fault(route: Route, fault: Fault, times?: number): void;
  /** After the next request is handled (and its fault applied), stops listening and drops every connection: later connects are refused. */
  goDownAfterNextRequest(): void;
  /** How many requests each route received (routes with none are left out). */
  counts(): Partial<Record<Route, number>>;
  /** Stores a customer query for a partner, as if submitted earlier. */
  seedTapQuery(input: TapQueryInput, apiKey?: string): TapQuery;
  /** Stores a collection, as if initiated earlier. */
  seedCollection(input: SeededCollectionInput): StoredCollection;
  /** Destroys every socket and stops both servers. */
  close(): Promise<void>;
}

const HTML_PAGE = '<!doctype html><html><head><title>Gateway</title></head><body><h1>Something went wrong</h1></body></html>';

/** A loopback URL with nothing listening behind it: connecting is refused. */
export async function refusedBaseUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}

/** A server on 127.0.0.1 that must receive nothing: the target of cross-origin redirects, answering 200 if reached. */
async function startOtherOrigin(): Promise<LoopbackServer> {
  const server = await startLoopbackServer();
  server.handle((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{}}');
  });
  return server;
}

function shutDown(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise<void>((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
}

export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const services = new FakeServices(options);
  let slowCommits = 0;
  const log: LoggedRequest[] = [];
  const queues = new Map<Route, { fault: Fault; remaining: number }[]>();
  const sockets = new Set<Socket>();
  const otherOrigin = await startOtherOrigin();
  let down = false;

  function nextFault(route: Route): Fault | undefined {
    const queue = queues.get(route);
    const head = queue?.[0];
    if (queue === undefined || head === undefined) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.shift();
    return head.fault;
  }

  function faultBody(route: Route, path: string, status: number, kind: BodyKind): { text: string; type: string | undefined } {
    if (kind === 'empty') return { text: '', type: undefined };
    if (kind === 'html') return { text: HTML_PAGE, type: 'text/html; charset=utf-8' };
    return { text: JSON.stringify(serviceFailure(route, status, path).json), type: 'application/json' };
  }

  function send(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
    response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(text)) }).end(text);
  }

  async function handle(request: IncomingMessage, response: ServerResponse, text: string): Promise<void> {
    const method = request.method ?? '';
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const route = routeOf(method, path);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const fault = nextFault(route) ?? options.pickFault?.(route);
    log.push({ method, path, route, headers: request.headers, body, fault: fault?.kind });
    const socket = request.socket;
    const commit = () => services.serve(route, path, request.headers, body);
    const json = { 'content-type': 'application/json' };

    switch (fault?.kind) {
      case undefined: {
        const reply = await commit();
        send(response, reply.status, JSON.stringify(reply.json), json);
        return;
      }
      case 'reset-before-headers':
        socket.destroy();
        return;
      case 'reset-after-commit':
        await commit();
        socket.destroy();
        return;
      case 'reset-mid-body': {
        const reply = await commit();
        const full = Buffer.from(JSON.stringify(reply.json));
        response.writeHead(reply.status, { ...json, 'content-length': String(full.byteLength) });
        response.write(full.subarray(0, Math.floor(full.byteLength / 2)), () => socket.destroy());
        return;
      }
      case 'hang':
        await commit();
        return;
      case 'status': {
        if (fault.commit) await commit();
        const { text: page, type } = faultBody(route, path, fault.status, fault.body);
        send(response, fault.status, page, {
          ...(type ? { 'content-type': type } : {}),
          ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
        });
        return;
      }
      case 'rate-limit': {
        const { text: page } = faultBody(route, path, 429, 'json');
        send(response, 429, page, { ...json, 'retry-after': fault.retryAfter });
        return;
      }
      case 'truncated-json': {
        const reply = await commit();
        const full = JSON.stringify(reply.json);
        send(response, reply.status, full.slice(0, Math.floor(full.length / 2)), json);
        return;
      }
      case 'html-200':
        await commit();
        send(response, 200, HTML_PAGE, { 'content-type': 'text/html; charset=utf-8' });
        return;
      case 'redirect-cross-origin':
        send(response, 307, '', { location: `${otherOrigin.url}${request.url ?? '/'}` });
        return;
      case 'slow-commit':
        slowCommits++;
        setTimeout(async () => {
          const reply = await commit();
          slowCommits--;
          if (!socket.destroyed) send(response, reply.status, JSON.stringify(reply.json), json);
        }, fault.delayMs);
        return;
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', () => undefined);
    request.on('end', async () => {
      await handle(request, response, Buffer.concat(chunks).toString('utf8'));
      if (down) void shutDown(server, sockets);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    otherOrigin,
    log,
    tapQueries: services.tapQueries,
    get collections() {
      return services.collections;
    },
    stores: services.stores,
    pendingCommits: () => slowCommits,
    openConnections: () => sockets.size,
    seedRawTapRow: (row, apiKey) => services.seedRawTapRow(row, apiKey),
    fault(route, fault, times = 1) {
      const queue = queues.get(route) ?? [];
      queue.push({ fault, remaining: times });
      queues.set(route, queue);
    },
    goDownAfterNextRequest() {
      down = true;
    },
    counts() {
      const counts: Partial<Record<Route, number>> = {};
      for (const { route } of log) counts[route] = (counts[route] ?? 0) + 1;
      return counts;
    },
    seedTapQuery: (input, apiKey) => services.seedTapQuery(input, apiKey),
    seedCollection: (input) => services.seedCollection(input),
    async close() {
      await Promise.all([shutDown(server, sockets), otherOrigin.close()]);
    },
  };
}
