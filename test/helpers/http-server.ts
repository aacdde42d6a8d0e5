/**
 * A real HTTP server on loopback (127.0.0.1, a free port), for transport tests msw cannot express:
 * stalled bodies, dropped sockets, refused connections, cross-origin redirects. Each request is
 * recorded (method, path, headers, body text) before the current handler runs; `close()` destroys
 * every open socket, so a handler that never answers cannot hold the test run open.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** Replaces the handler for the requests that follow. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

const notFound: Handler = (_request, response) => {
  response.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false}');
};

export async function startLoopbackServer(): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let handler: Handler = notFound;
  const server: Server = createServer((request, response) => {
    const received: ReceivedRequest = {
      method: request.method ?? '',
      path: new URL(request.url ?? '/', 'http://127.0.0.1').pathname,
      headers: request.headers,
      body: '',
    };
    requests.push(received);
    const current = handler;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.body = Buffer.concat(chunks).toString('utf8');
      current(request, response, received.body);
    });
    request.on('error', () => undefined);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    handle(next) {
      handler = next;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback port with nothing listening on it. A port from `listen(0)` that was closed again can be handed to a
 * server of another test file running in parallel, so the port comes from below 1024 (never handed out by
 * `listen(0)`, and off fetch's blocked list), checked to refuse connections now.
 */
export async function closedPort(): Promise<number> {
  for (let port = 1023; port >= 1016; port--) {
    if (await refusesConnections(port)) return port;
  }
  throw new Error('no loopback port from 1016 to 1023 refuses connections');
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Sends `value` as a JSON response. */
export function sendJson(response: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}
