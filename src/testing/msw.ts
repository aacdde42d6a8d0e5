/**
 * The msw face: request handlers that answer from a {@link Simulator}, for in-process tests.
 *
 * msw is an optional peer dependency, so this module loads it on first use with a dynamic `import('msw')`
 * instead of a static import: importing `tap-collections-sdk/testing` (for the loopback server or the fixtures)
 * then works without msw installed, and only {@link createSimulatorHandlers} needs it.
 *
 * @module
 */
import type { HttpHandler } from 'msw';
import type { SimulatedService } from './fixtures.js';
import { MAX_REQUEST_BODY_BYTES, type Simulator } from './simulator.js';

/** Where the two services are mocked. @group msw handlers */
export interface SimulatorHandlerOptions {
  /** The Tap client's `baseUrl`, e.g. `https://tap.test` (a path prefix is allowed; a trailing `/` is ignored). */
  tapBaseUrl: string;
  /** The Collections client's `baseUrl`, e.g. `https://collections.test`. */
  collectionsBaseUrl: string;
}

/**
 * msw handlers answering both services from `simulator`; pass them to `setupServer(...)` or `server.use(...)`.
 * Requests outside the two base URLs are left to other handlers. A dropped connection becomes `HttpResponse.error()`
 * (the client's `fetch` rejects with a `TypeError`).
 *
 * Asynchronous because it loads msw on demand: `setupServer(...(await createSimulatorHandlers(simulator, urls)))`.
 * @throws Error (rejects) when msw (v3 or later) is not installed; TypeError when a base URL is not absolute, has a query,
 *   or both base URLs are the same.
 *
 * @group msw handlers
 */
export async function createSimulatorHandlers(simulator: Simulator, options: SimulatorHandlerOptions): Promise<HttpHandler[]> {
  let msw: typeof import('msw');
  try {
    msw = await import('msw');
  } catch (cause) {
    throw new Error('createSimulatorHandlers needs msw: install it (npm install --save-dev msw)', { cause });
  }
  const { http, HttpResponse } = msw;
  const bases = [
    { service: 'tap', base: normalizeBase(options.tapBaseUrl, 'tapBaseUrl') },
    { service: 'collections', base: normalizeBase(options.collectionsBaseUrl, 'collectionsBaseUrl') },
  ] as const satisfies readonly { service: SimulatedService; base: URL }[];
  if (bases[0].base.href.replace(/\/$/, '') === bases[1].base.href.replace(/\/$/, '')) {
    throw new TypeError('tapBaseUrl and collectionsBaseUrl must differ, or one service would answer for both');
  }

  return bases.map(({ service, base }) =>
    http.all(`${base.href.replace(/\/$/, '')}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const basePath = base.pathname.replace(/\/$/, '');
      if (url.origin !== base.origin || !(url.pathname === basePath || url.pathname.startsWith(`${basePath}/`))) return undefined;
      const bytes = new Uint8Array(await request.arrayBuffer());
      const tooLarge = bytes.byteLength > MAX_REQUEST_BODY_BYTES;
      const outcome = await simulator.handle({
        service,
        method: request.method,
        path: `${url.pathname.slice(basePath.length) || '/'}${url.search}`,
        headers: Object.fromEntries(request.headers.entries()),
        body: tooLarge ? undefined : new TextDecoder().decode(bytes),
        bodyTooLarge: tooLarge,
        signal: request.signal,
      });
      if (outcome.kind === 'drop') return HttpResponse.error();
      const { status, headers, body } = outcome.response;
      return new HttpResponse(body === '' ? null : body, { status, headers });
    }),
  );
}

function normalizeBase(raw: string, name: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`${name} must be an absolute URL, got '${raw}'`);
  }
  if (url.search !== '' || url.hash !== '') throw new TypeError(`${name} must not have a query or fragment`);
  return url;
}
