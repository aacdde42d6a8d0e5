/**
 * Every failure a partner handles, provoked against the simulator (it needs the simulator's revoked keys
 * and fault injection, so it never runs against the sandbox): what is thrown and what to do about it.
 *
 * Run: `node examples/handle-errors.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import {
  AuthenticationError,
  BadRequestError,
  CollectionsClient,
  ConflictError,
  NotFoundError,
  RateLimitError,
  type RequestValidationError,
  TapClient,
  TapCollectionsError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from 'tap-collections-sdk';
import { COLLECTIONS_API_KEYS, PRODUCTS, startSimulator, TAGS, TAP_API_KEYS } from 'tap-collections-sdk/testing';

const running = await startSimulator();
const tap = new TapClient({ apiKey: TAP_API_KEYS.primary, baseUrl: running.tapBaseUrl, logLevel: 'off' });
const collections = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl, logLevel: 'off' });
const query = { merchantId: 'M-1', merchantName: 'Kabwe Groceries', terminalId: 'T-1', amount: 10, tagId: TAGS.active };

async function show(what: string, call: () => Promise<unknown>, advice: (error: TapCollectionsError) => string): Promise<void> {
  try {
    await call();
    console.log(`✘ ${what}: no error`);
    process.exitCode = 1;
  } catch (error) {
    if (!(error instanceof TapCollectionsError)) throw error;
    console.log(`✔ ${what}\n    ${error.name}: ${error.message}\n    → ${advice(error)}`);
  }
}

try {
  await show(
    'Bad input is refused before anything is sent',
    () => collections.initiate({ productId: 'not-a-uuid', phoneNumber: '0877', amount: 1.234 }),
    (error) => `fix the fields: ${(error as RequestValidationError).issues.map((issue) => issue.path).join(', ')}`,
  );
  await show(
    'A revoked key',
    () => new TapClient({ apiKey: TAP_API_KEYS.revoked, baseUrl: running.tapBaseUrl }).listCustomerQueries(),
    (error) => (error instanceof AuthenticationError ? 'rotate the key (apiKey may be a function that fetches the current one)' : '?'),
  );
  await show(
    'An inactive tag',
    () => tap.submitCustomerQuery({ ...query, tagId: TAGS.inactive }),
    (error) => (error instanceof BadRequestError || error instanceof NotFoundError ? 'ask for another payment method' : '?'),
  );
  await tap.submitCustomerQuery(query);
  await show(
    'A merchantId/terminalId used before',
    () => tap.submitCustomerQuery({ ...query, referenceId: crypto.randomUUID() }),
    (error) => (error instanceof ConflictError ? `code ${error.code}: send unique ids per query` : '?'),
  );
  await show(
    'The Collections service rejects a field (422)',
    () => collections.initiate({ productId: PRODUCTS.unknown, phoneNumber: '0977123456', amount: 5 }),
    (error) =>
      error instanceof UnprocessableEntityError ? `fields: ${error.errors.map((item) => `${item.field} (${item.rule})`).join(', ')}` : '?',
  );
  running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 429, retryAfter: '120', times: 1 });
  await show(
    'Rate limited for longer than maxRetryAfterMs',
    () => collections.checkStatus(crypto.randomUUID()),
    (error) => (error instanceof RateLimitError ? `come back in ${error.retryAfterMs} ms` : '?'),
  );
  running.simulator.injectFault({ route: '*', service: 'collections', drop: 'before' });
  await show(
    'The service unreachable in the middle of a push',
    () => collections.initiate({ productId: PRODUCTS.primary, phoneNumber: '0977123456', amount: 5 }, { maxRetries: 1 }),
    (error) =>
      error instanceof UnknownOutcomeError
        ? `do NOT push again: reconcile referenceId ${error.referenceId} with checkStatus later`
        : 'nothing was sent',
  );
} finally {
  await running.close();
}
