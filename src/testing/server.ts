/**
 * The loopback face: a real `node:http` server in front of a {@link Simulator}, for tests and examples that need
 * real sockets (another process, a dropped connection the way a network drops it). Needs no msw.
 *
 * `node:http` is loaded when the server starts, not when this module is imported, so the testing entry stays importable
 * in runtimes without it (a browser running the msw face).
 *
 * Both services share one port under distinct base paths, `/tap` and `/collections`, so a client configured with
 * the wrong base URL gets a 404 instead of silently talking to the other service.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimulatedService } from './fixtures.js';
import { createSimulator, MAX_REQUEST_BODY_BYTES, type Simulator, type StatusVocabulary } from './simulator.js';

/** The base path of the Tap service on the loopback server. @group Loopback server */
export const TAP_BASE_PATH = '/tap';
/** The base path of the Collections service on the loopback server. @group Loopback server */
export const COLLECTIONS_BASE_PATH = '/collections';

/** Past this many bytes an upload is not even drained: the connection is cut. */
const HARD_BODY_LIMIT = 16 * MAX_REQUEST_BODY_BYTES;

/** Options of {@link startSimulator}; every one optional. @group Loopback server */
export interface StartSimulatorOptions {
  /** TCP port; 0 lets the system choose a free one (read it from the result). @defaultValue 0 */
  port?: number | undefined;
  /** Interface to listen on. @defaultValue `'127.0.0.1'` (loopback only) */
  host?: string | undefined;
  /** The simulator to serve, e.g. one also exposed through msw handlers. @defaultValue a new {@link createSimulator}() */
  simulator?: Simulator | undefined;
  /**
   * The vocabulary of the new simulator's Collections service (see `SimulatorOptions.statusWords`); with
   * `simulator`, give it to {@link createSimulator} instead (both: a `TypeError`).
   * @defaultValue the document's words
   */
  statusWords?: StatusVocabulary | undefined;
  /**
   * Answer cross-origin requests (CORS), for a browser page on another origin talking to the simulator: preflights
   * get `204`, every answer allows the requesting origin, the requested headers (`authorization`, `x-api-key`, …)
   * and exposes `x-request-id` and `retry-after`. Off by default: no CORS headers, as the real services send none.
   * @defaultValue `false`
   */
  cors?: boolean | undefined;
}

/** A running loopback simulator. @group Loopback server */
export interface RunningSimulator {
  /** The server's root, e.g. `http://127.0.0.1:4010`. */
  readonly url: string;
  /** The Tap service's base URL: `url` + `/tap`. Pass it as the Tap client's `baseUrl`. */
  readonly tapBaseUrl: string;
  /** The Collections service's base URL: `url` + `/collections`. Pass it as the Collections client's `baseUrl`. */
  readonly collectionsBaseUrl: string;
  /** The port listened on. */
  readonly port: number;
  /** The state behind the server: inspect it, inject faults, settle collections, reset. */
  readonly simulator: Simulator;
  /** Stops listening, cuts every open connection (requests in progress get no answer) and resolves once closed. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the simulator on a loopback HTTP server. Request bodies above 1 MiB are answered 413.
 * @param options `port` (default 0: any free port), `host` (default `'127.0.0.1'`), `simulator` (default: a new one).
 *
 * @group Loopback server
 */
export async function startSimulator(options: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  if (options.simulator !== undefined && options.statusWords !== undefined) {
    throw new TypeError('startSimulator: give statusWords to createSimulator when you pass a simulator');
  }
  const simulator = options.simulator ?? createSimulator(options.statusWords === undefined ? {} : { statusWords: options.statusWords });
  const host = options.host ?? '127.0.0.1';
  const inFlight = new Set<AbortController>();
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    if (options.cors === true && answerPreflight(request, response)) return;
    if (options.cors === true) allowOrigin(request, response);
    void serve(simulator, request, response, inFlight);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  const address = server.address() as AddressInfo;
  const hostInUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostInUrl}:${address.port}`;
  let closed: Promise<void> | undefined;
  return {
    url,
    tapBaseUrl: `${url}${TAP_BASE_PATH}`,
    collectionsBaseUrl: `${url}${COLLECTIONS_BASE_PATH}`,
    port: address.port,
    simulator,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        for (const controller of inFlight) controller.abort();
        server.close(() => resolve());
        // Keep-alive and in-flight sockets would otherwise hold close() (and the test process) open.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

async function serve(
  simulator: Simulator,
  request: IncomingMessage,
  response: ServerResponse,
  inFlight: Set<AbortController>,
): Promise<void> {
  const controller = new AbortController();
  inFlight.add(controller);
  response.once('close', () => {
    controller.abort();
    inFlight.delete(controller);
  });
  try {
    const target = routeToService(request.url ?? '/');
    if (target === undefined) {
      request.resume();
      send(response, {
        status: 404,
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({
          success: false,
          message: `Unknown path; the services are under ${TAP_BASE_PATH} and ${COLLECTIONS_BASE_PATH}`,
        }),
      });
      return;
    }
    const read = await readBody(request);
    if (read === 'cut') {
      request.socket.destroy();
      return;
    }
    const outcome = await simulator.handle({
      service: target.service,
      method: request.method ?? 'GET',
      path: target.path,
      headers: flattenHeaders(request),
      body: read.tooLarge ? undefined : read.text,
      bodyTooLarge: read.tooLarge,
      signal: controller.signal,
    });
    if (outcome.kind === 'drop') {
      request.socket.destroy();
      return;
    }
    send(response, outcome.response);
  } catch (error) {
    // A simulator bug must surface as an answer a test can see, not as a hung request.
    send(response, {
      status: 500,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: `Simulator error: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
}

/** Answers a CORS preflight (`OPTIONS` with `Access-Control-Request-Method`); false for any other request. */
function answerPreflight(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return false;
  request.resume();
  allowOrigin(request, response);
  response.writeHead(204, {
    'access-control-allow-methods': 'GET, POST',
    'access-control-allow-headers': request.headers['access-control-request-headers'] ?? '',
    'access-control-max-age': '600',
    'content-length': '0',
  });
  response.end();
  return true;
}

/** Lets the requesting origin read the answer, and its request id and rate-limit headers. */
function allowOrigin(request: IncomingMessage, response: ServerResponse): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  response.setHeader('access-control-allow-origin', origin);
  response.setHeader('access-control-expose-headers', 'x-request-id, retry-after');
  response.setHeader('vary', 'origin');
}

function send(response: ServerResponse, answer: { status: number; headers: Readonly<Record<string, string>>; body: string }): void {
  if (response.destroyed || response.headersSent) return;
  response.writeHead(answer.status, { ...answer.headers, 'content-length': String(Buffer.byteLength(answer.body)) });
  response.end(answer.body);
}

function routeToService(rawUrl: string): { service: SimulatedService; path: string } | undefined {
  for (const [service, prefix] of [
    ['tap', TAP_BASE_PATH],
    ['collections', COLLECTIONS_BASE_PATH],
  ] as const) {
    if (rawUrl === prefix || rawUrl.startsWith(`${prefix}/`) || rawUrl.startsWith(`${prefix}?`)) {
      const rest = rawUrl.slice(prefix.length);
      return { service, path: rest.startsWith('/') ? rest : `/${rest}` };
    }
  }
  return undefined;
}

/**
 * Reads the body, keeping at most {@link MAX_REQUEST_BODY_BYTES}. A larger body is drained and discarded so the client
 * can read the 413; one past {@link HARD_BODY_LIMIT} is not worth draining and the connection is cut.
 */
async function readBody(request: IncomingMessage): Promise<{ text: string; tooLarge: boolean } | 'cut'> {
  const declared = Number(request.headers['content-length']);
  if (declared > HARD_BODY_LIMIT) return 'cut';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > HARD_BODY_LIMIT) return 'cut';
    if (size <= MAX_REQUEST_BODY_BYTES) chunks.push(chunk);
  }
  if (size > MAX_REQUEST_BODY_BYTES) return { text: '', tooLarge: true };
  return { text: Buffer.concat(chunks).toString('utf8'), tooLarge: false };
}

function flattenHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
