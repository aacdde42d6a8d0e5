/** Shared pieces of the Tap client tests: the endpoint, an echoing handler, and a rejection catcher. */
import { HttpResponse, http } from 'msw';
import { type CustomerQueryInput, TapClient, type TapClientOptions } from '../../src/index.js';
import { API_KEY, customerQuery, TAP_BASE_URL } from './fixtures.js';

export const QUERIES_PATH = '/v1/tap/partners/customer-queries';
export const QUERIES_URL = `${TAP_BASE_URL}${QUERIES_PATH}`;
export const PHONE = '260977123456';
export const MASKED_PHONE = '260*******56';
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A TapClient against the msw base URL; logging off unless the test says otherwise. */
export function tapClient(options: TapClientOptions = {}): TapClient {
  return new TapClient({ apiKey: API_KEY, baseUrl: TAP_BASE_URL, logLevel: 'off', ...options });
}

/** A POST handler that answers 201 with the query the service would build from the request body. */
export function echoSubmission() {
  return http.post(QUERIES_URL, async ({ request }) =>
    HttpResponse.json({ success: true, data: customerQuery((await request.json()) as CustomerQueryInput) }, { status: 201 }),
  );
}

/** The value `promise` rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
