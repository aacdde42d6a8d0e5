// The loopback example of docs/guide/testing.md, verbatim apart from the import paths: keep the two in step.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CollectionsClient } from '../../src/index.js';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.js';

let running: RunningSimulator;
let collections: CollectionsClient;

beforeAll(async () => {
  running = await startSimulator(); // 127.0.0.1, a free port
  collections = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: running.collectionsBaseUrl });
});
afterAll(() => running.close());

it('reports a declined payment as a result, not an exception', async () => {
  const { referenceId } = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.insufficientFunds, amount: 20 });
  const outcome = await collections.pollUntilSettled(referenceId, { initialDelayMs: 0, intervalMs: 10 });

  expect(outcome).toMatchObject({ statusText: 'failed', transactionCode: 'INSUFFICIENT_FUNDS' });
});

it('rides out a 503 while polling', async () => {
  const { referenceId } = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 20 });
  running.simulator.injectFault({ route: 'GET /v1/collections/check/:referenceId', status: 503, retryAfter: '0', times: 2 });
  const outcome = await collections.pollUntilSettled(referenceId, { initialDelayMs: 0, intervalMs: 10 });

  expect(outcome.statusText).toBe('successful');
});
