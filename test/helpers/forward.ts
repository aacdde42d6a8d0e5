/**
 * A test front's way to the service behind it: the request passed on as it came (its body, its headers but the
 * hop-by-hop ones), the answer passed back with the headers a client reads. The crash tests put such a front before
 * the simulator to hold a push, as a service that commits late holds it.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** Sends `request` (with `body`, read already) to `origin`, and its answer to `response` unless the client went away. */
export async function forward(
  origin: string,
  request: IncomingMessage,
  body: Buffer<ArrayBuffer>,
  response: ServerResponse,
): Promise<void> {
  const answer = await fetch(`${origin}${request.url}`, {
    method: request.method,
    headers: forwarded(request.headers),
    ...(request.method === 'POST' ? { body } : {}),
  });
  const text = await answer.text();
  if (response.destroyed) return;
  const headers: Record<string, string> = {};
  for (const name of ['content-type', 'x-request-id', 'retry-after']) {
    const value = answer.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  response.writeHead(answer.status, headers);
  response.end(text);
}

function forwarded(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || ['host', 'connection', 'content-length', 'keep-alive'].includes(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
