/**
 * tap-collections-sdk/testing: a stateful, in-memory simulator of the Tap Partner API and the Collections Gateway API,
 * for partners' own tests and for the examples. One {@link Simulator} holds the state; two faces expose it:
 *
 * - {@link createSimulatorHandlers}: msw handlers for in-process tests (needs the optional peer `msw`, loaded on demand);
 * - {@link startSimulator}: a real HTTP server on loopback (needs no msw), also runnable as
 *   `tap-collections-sdk simulate --port 4010`.
 *
 * ```ts
 * import { createSimulator, startSimulator, TAP_API_KEYS, TAGS } from 'tap-collections-sdk/testing';
 *
 * const running = await startSimulator();
 * const tap = new TapClient({ apiKey: TAP_API_KEYS.primary, baseUrl: running.tapBaseUrl });
 * running.simulator.injectFault({ route: 'POST /v1/tap/partners/customer-queries', drop: 'after', times: 1 });
 * await running.close();
 * ```
 *
 * The seeded partners, keys, tags, products and phone numbers are listed in the table of the fixtures module
 * ({@link defaultFixtures}).
 *
 * @packageDocumentation
 * @module tap-collections-sdk/testing
 */
export {
  type ApiKeyFixture,
  COLLECTIONS_API_KEYS,
  defaultFixtures,
  type MobileNumberFixture,
  OUTCOMES,
  PARTNERS,
  type PartnerFixture,
  type Permission,
  PHONES,
  type PlannedOutcome,
  PRODUCTS,
  type ProductFixture,
  type SettlementOutcome,
  type SimulatedService,
  type SimulatorFixtures,
  TAGS,
  TAP_API_KEYS,
  type TagFixture,
} from './fixtures.js';
export { checkPaymentJournal, type JournalCheckResult, type OpenPaymentJournal } from './journal-conformance.js';
export { createSimulatorHandlers, type SimulatorHandlerOptions } from './msw.js';
export { COLLECTIONS_BASE_PATH, type RunningSimulator, type StartSimulatorOptions, startSimulator, TAP_BASE_PATH } from './server.js';
export {
  createManualClock,
  createSimulator,
  type FaultSpec,
  type InjectedFault,
  MAX_REQUEST_BODY_BYTES,
  type ManualClock,
  REQUESTED_PROVIDER,
  type ReceivedRequest,
  type SettlementOptions,
  type SimulatedCollection,
  type SimulatedCustomerQuery,
  Simulator,
  type SimulatorOptions,
  type SimulatorOutcome,
  type SimulatorRequest,
  type SimulatorResponse,
  type StatusVocabulary,
  type StoredCollection,
  type StoredCustomerQuery,
} from './simulator.js';
