// The msw example of docs/guide/testing.md, verbatim apart from the import paths: keep the two in step.
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { CollectionsClient, mobileNumberFor, TapClient, UnknownOutcomeError } from '../../src/index.js';
import { COLLECTIONS_API_KEYS, createSimulator, createSimulatorHandlers, PRODUCTS, TAGS, TAP_API_KEYS } from '../../src/testing/index.js';

const TAP_URL = 'https://tap.sandbox.test';
const COLLECTIONS_URL = 'https://collections.sandbox.test';
const simulator = createSimulator({ settlement: { pendingPolls: 1 } });
const server = setupServer(...(await createSimulatorHandlers(simulator, { tapBaseUrl: TAP_URL, collectionsBaseUrl: COLLECTIONS_URL })));

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => simulator.reset());
afterAll(() => server.close());

const tap = new TapClient({ apiKey: TAP_API_KEYS.primary, baseUrl: TAP_URL });
const collections = new CollectionsClient({ apiKey: COLLECTIONS_API_KEYS.primary, baseUrl: COLLECTIONS_URL });

it('charges the number on a tapped tag', async () => {
  const query = await tap.submitCustomerQuery({
    merchantId: 'M-1',
    merchantName: 'Shop',
    terminalId: 'T-1',
    amount: 20,
    tagId: TAGS.active,
  });
  const { referenceId } = await collections.initiate({
    productId: PRODUCTS.primary,
    phoneNumber: mobileNumberFor(query) ?? '',
    amount: 20,
  });
  const outcome = await collections.pollUntilSettled(referenceId, { initialDelayMs: 0, intervalMs: 10 });

  expect(outcome.statusText).toBe('successful');
  expect(simulator.collections()).toHaveLength(1);
});

it('never pushes twice when the connection drops after the push was accepted', async () => {
  simulator.injectFault({ route: 'POST /v1/collections/mobile-money', drop: 'after', times: 1 });
  const accepted = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber: '0977123456', amount: 20 });

  expect(accepted.status).toBe('pending');
  expect(simulator.collections()).toHaveLength(1); // reconciled by referenceId, not pushed again
});

it('says the outcome is unknown when the service stays unreachable', async () => {
  simulator.injectFault({ route: '*', service: 'collections', drop: 'after' });
  const error = await collections
    .initiate({ productId: PRODUCTS.primary, phoneNumber: '0977123456', amount: 20 }, { maxRetries: 1 })
    .catch((caught) => caught);

  expect(error).toBeInstanceOf(UnknownOutcomeError);
  expect(simulator.collections()).toHaveLength(1); // it did happen: reconcile by error.referenceId later
});
