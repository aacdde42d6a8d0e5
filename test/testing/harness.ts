/**
 * Plain-fetch helpers for the simulator's tests: they speak the wire as the service documents describe it,
 * never through the SDK, so the simulator is checked against the documents alone.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  COLLECTIONS_API_KEYS,
  createSimulator,
  PHONES,
  PRODUCTS,
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
  TAGS,
  TAP_API_KEYS,
} from '../../src/testing/index.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests index into documented JSON bodies freely.
  body: any;
}

export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** `null` sends no key at all. */
type Key = string | null;

export function tapApi(baseUrl: () => string) {
  const path = () => `${baseUrl()}/v1/tap/partners/customer-queries`;
  const headers = (key: Key): Record<string, string> => ({
    'content-type': 'application/json',
    ...(key === null ? {} : { 'x-api-key': key }),
  });
  return {
    submit: (body: unknown, key: Key = TAP_API_KEYS.primary) =>
      call(path(), { method: 'POST', headers: headers(key), body: typeof body === 'string' ? body : JSON.stringify(body) }),
    list: (key: Key = TAP_API_KEYS.primary) => call(path(), { headers: headers(key) }),
    raw: (subPath: string, init: RequestInit = {}) => call(`${baseUrl()}${subPath}`, init),
  };
}

export function collectionsApi(baseUrl: () => string) {
  const headers = (key: Key): Record<string, string> => ({
    'content-type': 'application/json',
    ...(key === null ? {} : { authorization: `Bearer ${key}` }),
  });
  return {
    initiate: (body: unknown, key: Key = COLLECTIONS_API_KEYS.primary) =>
      call(`${baseUrl()}/v1/collections/mobile-money`, {
        method: 'POST',
        headers: headers(key),
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    check: (referenceId: string, key: Key = COLLECTIONS_API_KEYS.primary) =>
      call(`${baseUrl()}/v1/collections/check/${referenceId}`, { headers: headers(key) }),
    get: (id: string, key: Key = COLLECTIONS_API_KEYS.primary) => call(`${baseUrl()}/v1/collections/${id}`, { headers: headers(key) }),
    health: (key: Key = COLLECTIONS_API_KEYS.primary) => call(`${baseUrl()}/health`, { headers: headers(key) }),
    headers,
  };
}

let counter = 0;
/** A distinct, valid customer query request each call (merchant, terminal and reference all fresh). */
export function queryInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    merchantId: `merchant-${counter}`,
    merchantName: 'Kabwe Groceries',
    terminalId: `terminal-${counter}`,
    referenceId: globalThis.crypto.randomUUID(),
    amount: 125.5,
    tagId: TAGS.active,
    ...overrides,
  };
}

/** A valid collection creation request with a fresh referenceId. */
export function collectionInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    productId: PRODUCTS.primary,
    referenceId: globalThis.crypto.randomUUID(),
    phoneNumber: PHONES.succeeds,
    currency: 'ZMW',
    amount: 250,
    narration: 'Groceries',
    ...overrides,
  };
}

/** One loopback simulator for the file, reset after each test. */
export function useLoopbackSimulator(options: SimulatorOptions = {}) {
  let running: RunningSimulator | undefined;
  beforeAll(async () => {
    running = await startSimulator({ simulator: createSimulator(options) });
  });
  afterEach(() => running?.simulator.reset());
  afterAll(() => running?.close());
  const get = (): RunningSimulator => {
    if (running === undefined) throw new Error('the simulator is not running yet');
    return running;
  };
  return {
    get running() {
      return get();
    },
    tap: tapApi(() => get().tapBaseUrl),
    collections: collectionsApi(() => get().collectionsBaseUrl),
  };
}
