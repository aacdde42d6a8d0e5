/**
 * Raw access: call an endpoint the SDK does not wrap — here `GET /v1/collections/summary`, which the
 * service documents do not list — through the same pipeline as every method (authentication, base URL,
 * timeouts, the redirect rule, typed errors, key redaction).
 *
 * Runs against the embedded simulator unless the sandbox variables are set (see connect.ts).
 *
 * Run: `node examples/raw-request.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import { ApiError, RequestValidationError } from 'tap-collections-sdk';
import { connect } from './connect.ts';

const connection = await connect();
try {
  const { collections } = connection;

  // A documented endpoint, raw: status, headers and the parsed body.
  const health = await collections.request('GET', '/health');
  console.log(`GET /health → ${health.status}`, health.body);

  // An endpoint the documents do not list, with a query. GETs are retried like every read; a POST, PUT,
  // PATCH or DELETE is never resent once its outcome is unknown (it carries no idempotency key).
  try {
    const summary = await collections.request('GET', '/v1/collections/summary', { query: { from: '2026-11-01', status: 'successful' } });
    console.log(`GET /v1/collections/summary → ${summary.status}`, summary.body);
  } catch (error) {
    // Non-2xx answers are the usual typed errors: here the service does not offer the endpoint.
    if (!(error instanceof ApiError)) throw error;
    console.log(`GET /v1/collections/summary → ${error.name} (${error.status}): not offered by the ${connection.target}`);
  }

  // The path stays under the base URL: an absolute URL, `//host`, `..` or `\` is refused before sending.
  try {
    await collections.request('GET', '/v1/../../admin');
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    console.log(`refused before sending: ${error.name} (${error.issues.map((issue) => issue.path).join(', ')})`);
  }
} finally {
  await connection.close();
}
