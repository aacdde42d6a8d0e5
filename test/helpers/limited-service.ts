/**
 * A Collections service on loopback for the shared budget's tests and benchmark: it counts every arrival (its own
 * clock, at arrival) and, with a `limit`, answers 429 beyond `limit` accepted requests in any 1 s sliding window (the
 * service's per-key rate limit, value undocumented). Creates are accepted (202), status checks answer `pending`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the service saw it. */
export interface Arrival {
  readonly at: number;
  readonly method: string;
  readonly status: number;
  /** The `x-sender` header (which process sent it), when given. */
  readonly sender: string | undefined;
}

/** A running limited service. */
export interface LimitedService {
  /** The Collections base URL. */
  readonly baseUrl: string;
  /** Every arrival so far, in order. */
  readonly arrivals: Arrival[];
  /** Changes the limit (undefined: none). */
  setLimit(limit: number | undefined): void;
  close(): Promise<void>;
}

const CREATE = '/v1/collections/mobile-money';
const CHECK = '/v1/collections/check/';

/** Starts the service on 127.0.0.1 at a free port. */
export async function startLimitedService(options: { limit?: number } = {}): Promise<LimitedService> {
  let limit = options.limit;
  const arrivals: Arrival[] = [];
  /** Arrival times of the requests accepted in the last second (for the limit). */
  const accepted: number[] = [];
  const answer = (request: IncomingMessage, response: ServerResponse, body: string) => {
    const at = Date.now();
    const sender = typeof request.headers['x-sender'] === 'string' ? request.headers['x-sender'] : undefined;
    while (accepted.length > 0 && (accepted[0] as number) + 1_000 <= at) accepted.shift();
    const send = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      arrivals.push({ at, method: request.method ?? '', status, sender });
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(json));
    };
    if (limit !== undefined && accepted.length >= limit) {
      send(429, { code: 'E_RATE_LIMIT_EXCEEDED', message: 'Too Many Requests' }, { 'retry-after': '1' });
      return;
    }
    accepted.push(at);
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (request.method === 'POST' && path === CREATE) {
      const referenceId = (JSON.parse(body || '{}') as { referenceId?: string }).referenceId;
      send(202, { success: true, data: { referenceId, status: 'pending' } });
    } else if (request.method === 'GET' && path.startsWith(CHECK)) {
      send(200, {
        success: true,
        data: { referenceId: path.slice(CHECK.length), statusText: 'pending', transactionCode: null, reason: null },
      });
    } else send(404, { code: 'E_NOT_FOUND', message: 'Not found' });
  };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => answer(request, response, body));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    arrivals,
    setLimit: (value) => {
      limit = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Arrivals per second while every sender of `senders` was sending, from `settleMs` after the last one's first arrival
 * to the first one's last arrival (processes start and stop at slightly different times).
 */
export function steadyRate(arrivals: readonly Arrival[], senders: readonly string[], settleMs: number): number {
  const firsts = senders.map((sender) => arrivals.find((arrival) => arrival.sender === sender)?.at ?? Number.POSITIVE_INFINITY);
  const lasts = senders.map((sender) => arrivals.findLast((arrival) => arrival.sender === sender)?.at ?? Number.NEGATIVE_INFINITY);
  const from = Math.max(...firsts) + settleMs;
  const to = Math.min(...lasts);
  if (!(to - from >= 1_000)) return 0;
  return (arrivals.filter((arrival) => arrival.at >= from && arrival.at < to).length * 1_000) / (to - from);
}
