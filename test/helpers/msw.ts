/**
 * One msw server per test file: unhandled requests fail the test, handlers reset after each test,
 * and every request that reached a handler is recorded (method, path, headers, parsed body).
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll } from 'vitest';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

export function useMswServer() {
  const server = setupServer();
  const requests: RecordedRequest[] = [];
  server.events.on('request:start', async ({ request }) => {
    const text = await request.clone().text();
    let body: unknown = text === '' ? undefined : text;
    try {
      body = JSON.parse(text);
    } catch {}
    requests.push({
      method: request.method,
      path: new URL(request.url).pathname,
      headers: Object.fromEntries(request.headers.entries()),
      body,
    });
  });
  beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
  afterEach(() => {
    server.resetHandlers();
    requests.length = 0;
  });
  afterAll(() => server.close());
  return { server, requests };
}
