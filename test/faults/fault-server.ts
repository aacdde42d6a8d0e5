/**
 * A small, stateful fake of BOTH services over a real `node:http` server on 127.0.0.1 (port 0), with a
 * request log and a per-route fault queue, for the fault-injection suite.
 *
 * State follows the service documents: Tap customer queries are unique per partner by `merchantId`,
 * `terminalId` and `referenceId` (a repeat answers 409 `resource/already-exists-error`); collections are
 * unique by `referenceId` (a repeat answers 409, or the 422 problem body flagging `referenceId`, by
 * option). A fault queued on a route applies to the next N requests of that route; the requests after
 * it are served normally.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { validationProblem as documentedValidationProblem } from '../helpers/collections.js';
import { customerQuery } from '../helpers/fixtures.js';
import { closedPort } from '../helpers/http-server.js';

export const TAP_KEY = 'tap_fault_key_1a2b3c4d5e6f';
export const OTHER_PARTNER_TAP_KEY = 'tap_fault_key_other_partner_9z8y';
export const COLLECTIONS_KEY = 'col_fault_key_6f5e4d3c2b1a';

/** The routes of both services, as the request log and the fault queue name them. */
export const ROUTES = ['POST queries', 'GET queries', 'POST mobile-money', 'GET check', 'GET collection', 'GET health', 'unknown'] as const;
export type Route = (typeof ROUTES)[number];

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

/** A Tap customer query as stored: the response's `data`, and the partner it belongs to. */
export interface StoredQuery {
  readonly partnerId: string;
  readonly query: TapQuery;
}

export interface TapQuery {
  id: string;
  partner: { partnerId: string; partnerName: string };
  customer: { firstName: string; lastName: string };
  tag: {
    tagId: string;
    tagNumber: string;
    mobileNumbers: { operator: string; mobileNumber: string; status: string }[];
    status: string;
  };
  transaction: {
    merchantId: string;
    merchantName: string;
    terminalId: string;
    referenceId: string;
    currency: string;
    amount: number;
    serviceCharge: number;
    status: string;
  };
  createdAt: string;
  updatedAt: string;
}

export interface StoredCollection {
  id: string;
  referenceId: string;
  productId: string;
  phoneNumber: string;
  currency: string;
  amount: number;
  narration?: string;
  status: string;
  createdAt: string;
}

export interface FaultServerOptions {
  /** How a repeated collection `referenceId` is refused. @defaultValue 409 */
  readonly duplicateCollectionAnswer?: 409 | 422;
  /**
   * How long a new record stays invisible to reads (the Collections status check and details, the Tap
   * list) after it was stored: a read side that lags behind the create. A function is asked per record.
   * @defaultValue 0
   */
  readonly lagMs?: number | (() => number);
  /** Store Tap amounts rounded to the cent, half up (10.005 → 10.01), as a service may. @defaultValue false */
  readonly roundTapAmounts?: boolean;
  /** Asked for a fault when a route's queue is empty (seeded chaos). @defaultValue none */
  readonly pickFault?: (route: Route) => Fault | undefined;
}

/** A recording server on 127.0.0.1 that must receive nothing: the target of cross-origin redirects. */
export interface RecordingServer {
  readonly url: string;
  readonly requests: { method: string; path: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

export interface FaultServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The second origin a `redirect-cross-origin` fault points at. */
  readonly otherOrigin: RecordingServer;
  /** Every request received, in order. */
  readonly log: LoggedRequest[];
  /** Every customer query held, every partner's. */
  readonly tapQueries: StoredQuery[];
  /** Every collection held, by `referenceId`. */
  readonly collections: Map<string, StoredCollection>;
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
  seedCollection(input: Omit<StoredCollection, 'id' | 'status' | 'createdAt' | 'currency'> & { status?: string }): StoredCollection;
  /** Destroys every socket and stops both servers. */
  close(): Promise<void>;
}

export interface TapQueryInput {
  merchantId: string;
  merchantName: string;
  terminalId: string;
  referenceId: string;
  amount: number;
  tagId: string;
}

const QUERIES_PATH = '/v1/tap/partners/customer-queries';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PARTNERS: Record<string, { partnerId: string; partnerName: string }> = {
  [TAP_KEY]: { partnerId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', partnerName: 'Kabwe Retail Ltd' },
  [OTHER_PARTNER_TAP_KEY]: { partnerId: 'f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f', partnerName: 'Ndola Fuel Co' },
};
const HTML_PAGE = '<!doctype html><html><head><title>Gateway</title></head><body><h1>Something went wrong</h1></body></html>';
const FIXED_TIME = '2026-11-21T10:15:30.123Z';
const TAP_FAULT_CODES: Record<number, string> = { 404: 'resource/not-found-error', 429: 'rate-limit/exceeded' };
const COLLECTIONS_FAULT_CODES: Record<number, string> = { 404: 'E_NOT_FOUND', 429: 'E_TOO_MANY_REQUESTS' };

function routeOf(method: string, path: string): Route {
  if (path === QUERIES_PATH) return method === 'POST' ? 'POST queries' : method === 'GET' ? 'GET queries' : 'unknown';
  if (method === 'POST' && path === '/v1/collections/mobile-money') return 'POST mobile-money';
  if (method === 'GET' && path.startsWith('/v1/collections/check/')) return 'GET check';
  if (method === 'GET' && /^\/v1\/collections\/[^/]+$/.test(path)) return 'GET collection';
  if (method === 'GET' && path === '/health') return 'GET health';
  return 'unknown';
}

function serviceOf(route: Route): 'tap' | 'collections' {
  return route === 'POST queries' || route === 'GET queries' ? 'tap' : 'collections';
}

interface Reply {
  readonly status: number;
  readonly json: unknown;
}

const tapError = (status: number, error: string, message: string): Reply => ({
  status,
  json: { success: false, message, code: status, error },
});

const collectionsError = (status: number, code: string, message: string): Reply => ({
  status,
  json: { success: false, code, message, requestId: `req-${status}` },
});

function validationProblem(instance: string, errors: { message: string; rule: string; field: string }[]): Reply {
  return { status: 422, json: documentedValidationProblem(instance, errors) };
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function buildQuery(input: TapQueryInput, partner: { partnerId: string; partnerName: string }): TapQuery {
  return customerQuery(input, { id: randomUUID(), partner: { ...partner }, createdAt: FIXED_TIME, updatedAt: FIXED_TIME });
}

async function startRecordingServer(): Promise<RecordingServer> {
  const requests: RecordingServer['requests'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers });
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{}}');
  });
  trackSockets(server, sockets);
  const url = await listen(server);
  return { url, requests, close: () => shutDown(server, sockets) };
}

function trackSockets(server: Server, sockets: Set<Socket>): void {
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function shutDown(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise<void>((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
}

/** A loopback URL with nothing listening behind it: connecting is refused. */
export async function refusedBaseUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}

export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const duplicateAnswer = options.duplicateCollectionAnswer ?? 409;
  const lagMs = typeof options.lagMs === 'function' ? options.lagMs : () => (options.lagMs as number | undefined) ?? 0;
  const visibleAt = new Map<unknown, number>();
  const visible = (record: unknown) => (visibleAt.get(record) ?? 0) <= Date.now();
  const stores = new Map<string, number>();
  const rawTapRows: StoredQuery[] = [];
  let slowCommits = 0;
  const log: LoggedRequest[] = [];
  const tapQueries: StoredQuery[] = [];
  const collections = new Map<string, StoredCollection>();
  const queues = new Map<Route, { fault: Fault; remaining: number }[]>();
  const sockets = new Set<Socket>();
  const otherOrigin = await startRecordingServer();
  let down = false;

  function storeQuery(input: TapQueryInput, partner: { partnerId: string; partnerName: string }): Reply {
    const taken = tapQueries.some(
      ({ partnerId, query: { transaction } }) =>
        partnerId === partner.partnerId &&
        (transaction.merchantId === input.merchantId ||
          transaction.terminalId === input.terminalId ||
          transaction.referenceId === input.referenceId),
    );
    if (taken) {
      return tapError(409, 'resource/already-exists-error', 'merchantId, terminalId or referenceId was used in an earlier query');
    }
    const amount = options.roundTapAmounts ? Math.round((input.amount + 1e-9) * 100) / 100 : input.amount;
    const query = buildQuery({ ...input, amount }, partner);
    tapQueries.push({ partnerId: partner.partnerId, query });
    visibleAt.set(query, Date.now() + lagMs());
    stores.set(input.referenceId, (stores.get(input.referenceId) ?? 0) + 1);
    return { status: 201, json: { success: true, data: query } };
  }

  function serveTap(route: Route, headers: IncomingMessage['headers'], body: unknown): Reply {
    const key = headers['x-api-key'];
    const partner = typeof key === 'string' ? PARTNERS[key] : undefined;
    if (partner === undefined) return tapError(401, 'auth/invalid-api-key', 'The API key is missing or invalid');
    if (route === 'GET queries') {
      const data = [...tapQueries, ...rawTapRows]
        .filter((stored) => stored.partnerId === partner.partnerId && visible(stored.query))
        .map((stored) => stored.query);
      return { status: 200, json: { success: true, data } };
    }
    const input = body as Partial<TapQueryInput> | undefined;
    if (
      !input ||
      !isText(input.merchantId) ||
      !isText(input.merchantName) ||
      !isText(input.terminalId) ||
      !isText(input.tagId) ||
      typeof input.referenceId !== 'string' ||
      !UUID.test(input.referenceId) ||
      typeof input.amount !== 'number'
    ) {
      return tapError(400, 'validation/invalid-request', 'The request body is invalid');
    }
    return storeQuery(input as TapQueryInput, partner);
  }

  function serveCollections(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Reply {
    if (route === 'GET health') {
      return headers.authorization === `Bearer ${COLLECTIONS_KEY}`
        ? { status: 200, json: { status: 'ok' } }
        : collectionsError(401, 'E_UNAUTHORIZED', 'Unauthorized');
    }
    if (headers.authorization !== `Bearer ${COLLECTIONS_KEY}`) return collectionsError(401, 'E_UNAUTHORIZED', 'Unauthorized');
    if (route === 'GET check') {
      const referenceId = decodeURIComponent(path.slice('/v1/collections/check/'.length));
      if (!UUID.test(referenceId)) {
        return validationProblem(path, [
          { message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'params.referenceId' },
        ]);
      }
      const found = collections.get(referenceId);
      if (found === undefined || !visible(found)) return collectionsError(404, 'E_NOT_FOUND', 'Collection not found');
      return { status: 200, json: { success: true, data: { referenceId, statusText: found.status, transactionCode: null, reason: null } } };
    }
    if (route === 'GET collection') {
      const id = decodeURIComponent(path.slice('/v1/collections/'.length));
      const found = [...collections.values()].find((collection) => collection.id === id && visible(collection));
      return found === undefined
        ? collectionsError(404, 'E_NOT_FOUND', 'Collection not found')
        : { status: 200, json: { success: true, data: found } };
    }
    if (route !== 'POST mobile-money') return collectionsError(404, 'E_ROUTE_NOT_FOUND', 'Cannot find route');
    const input = body as Partial<StoredCollection> | undefined;
    if (!input || typeof input.referenceId !== 'string' || !UUID.test(input.referenceId) || typeof input.productId !== 'string') {
      return validationProblem(path, [{ message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'referenceId' }]);
    }
    if (collections.has(input.referenceId)) {
      return duplicateAnswer === 409
        ? collectionsError(409, 'E_DUPLICATE_REFERENCE', 'referenceId already exists')
        : validationProblem(path, [{ message: 'The referenceId has already been taken', rule: 'unique', field: 'referenceId' }]);
    }
    const stored: StoredCollection = {
      id: randomUUID(),
      referenceId: input.referenceId,
      productId: input.productId,
      phoneNumber: String(input.phoneNumber),
      currency: String(input.currency),
      amount: Number(input.amount),
      ...(input.narration === undefined ? {} : { narration: input.narration }),
      status: 'pending',
      createdAt: FIXED_TIME,
    };
    collections.set(stored.referenceId, stored);
    visibleAt.set(stored, Date.now() + lagMs());
    stores.set(stored.referenceId, (stores.get(stored.referenceId) ?? 0) + 1);
    return { status: 202, json: { success: true, data: { referenceId: stored.referenceId, status: stored.status } } };
  }

  function serve(route: Route, path: string, headers: IncomingMessage['headers'], body: unknown): Reply {
    if (route === 'unknown') return { status: 404, json: { success: false, message: 'no such route' } };
    return serviceOf(route) === 'tap' ? serveTap(route, headers, body) : serveCollections(route, path, headers, body);
  }

  function nextFault(route: Route): Fault | undefined {
    const queue = queues.get(route);
    const head = queue?.[0];
    if (queue === undefined || head === undefined) return undefined;
    head.remaining -= 1;
    if (head.remaining <= 0) queue.shift();
    return head.fault;
  }

  function faultBody(route: Route, status: number, kind: BodyKind): { text: string; type: string | undefined } {
    if (kind === 'empty') return { text: '', type: undefined };
    if (kind === 'html') return { text: HTML_PAGE, type: 'text/html; charset=utf-8' };
    const reply =
      serviceOf(route) === 'tap'
        ? tapError(status, TAP_FAULT_CODES[status] ?? 'server/internal-error', 'The service failed')
        : collectionsError(status, COLLECTIONS_FAULT_CODES[status] ?? 'E_INTERNAL_ERROR', 'The service failed');
    return { text: JSON.stringify(reply.json), type: 'application/json' };
  }

  function send(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
    response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(text)) }).end(text);
  }

  function handle(request: IncomingMessage, response: ServerResponse, text: string): void {
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
    const commit = () => serve(route, path, request.headers, body);
    const json = { 'content-type': 'application/json' };

    switch (fault?.kind) {
      case undefined: {
        const reply = commit();
        send(response, reply.status, JSON.stringify(reply.json), json);
        return;
      }
      case 'reset-before-headers':
        socket.destroy();
        return;
      case 'reset-after-commit':
        commit();
        socket.destroy();
        return;
      case 'reset-mid-body': {
        const reply = commit();
        const full = Buffer.from(JSON.stringify(reply.json));
        response.writeHead(reply.status, { ...json, 'content-length': String(full.byteLength) });
        response.write(full.subarray(0, Math.floor(full.byteLength / 2)), () => socket.destroy());
        return;
      }
      case 'hang':
        commit();
        return;
      case 'status': {
        if (fault.commit) commit();
        const { text: page, type } = faultBody(route, fault.status, fault.body);
        send(response, fault.status, page, {
          ...(type ? { 'content-type': type } : {}),
          ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }),
        });
        return;
      }
      case 'rate-limit': {
        const { text: page } = faultBody(route, 429, 'json');
        send(response, 429, page, { ...json, 'retry-after': fault.retryAfter });
        return;
      }
      case 'truncated-json': {
        const reply = commit();
        const full = JSON.stringify(reply.json);
        send(response, reply.status, full.slice(0, Math.floor(full.length / 2)), json);
        return;
      }
      case 'html-200':
        commit();
        send(response, 200, HTML_PAGE, { 'content-type': 'text/html; charset=utf-8' });
        return;
      case 'redirect-cross-origin':
        send(response, 307, '', { location: `${otherOrigin.url}${request.url ?? '/'}` });
        return;
      case 'slow-commit':
        slowCommits++;
        setTimeout(() => {
          slowCommits--;
          const reply = commit();
          if (!socket.destroyed) send(response, reply.status, JSON.stringify(reply.json), json);
        }, fault.delayMs);
        return;
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('error', () => undefined);
    request.on('end', () => {
      handle(request, response, Buffer.concat(chunks).toString('utf8'));
      if (down) void shutDown(server, sockets);
    });
  });
  trackSockets(server, sockets);
  const url = await listen(server);

  return {
    url,
    otherOrigin,
    log,
    tapQueries,
    collections,
    stores,
    pendingCommits: () => slowCommits,
    openConnections: () => sockets.size,
    seedRawTapRow(row, apiKey = TAP_KEY) {
      const partner = PARTNERS[apiKey];
      if (partner === undefined) throw new Error('unknown partner key');
      rawTapRows.push({ partnerId: partner.partnerId, query: row as TapQuery });
    },
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
    seedTapQuery(input, apiKey = TAP_KEY) {
      const partner = PARTNERS[apiKey];
      if (partner === undefined) throw new Error('unknown partner key');
      const query = buildQuery(input, partner);
      tapQueries.push({ partnerId: partner.partnerId, query });
      return query;
    },
    seedCollection(input) {
      const stored: StoredCollection = { id: randomUUID(), currency: 'ZMW', status: 'pending', createdAt: FIXED_TIME, ...input };
      collections.set(stored.referenceId, stored);
      return stored;
    },
    async close() {
      await Promise.all([shutDown(server, sockets), otherOrigin.close()]);
    },
  };
}
