import { describe, expect, it } from 'vitest';
import { CollectionsClient, type FetchFunction } from '../../src/index.js';
import { COLLECTIONS_BASE_URL } from '../helpers/fixtures.js';

const REFERENCES = Array.from({ length: 6 }, (_, index) => `3f1c1d7e-8a2b-4c3d-9e4f-5a6b7c8d9e0${index}`);

/** A fetch that holds every response until released, counting how many requests are in flight. */
function heldFetch() {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as string[], release: [] as Array<() => void> };
  const fetch: FetchFunction = (input) => {
    const url = input instanceof Request ? input.url : String(input);
    const referenceId = url.slice(url.lastIndexOf('/') + 1);
    state.started.push(referenceId);
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    return new Promise((resolve) => {
      state.release.push(() => {
        state.inFlight--;
        resolve(Response.json({ success: true, data: { referenceId, statusText: 'pending' } }));
      });
    });
  };
  return { fetch, state };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('maxConcurrentRequests', () => {
  it('keeps at most that many requests in flight; the rest queue and run in order', async () => {
    const { fetch, state } = heldFetch();
    const client = new CollectionsClient({
      apiKey: 'test-key-0001',
      baseUrl: COLLECTIONS_BASE_URL,
      fetch,
      maxConcurrentRequests: 2,
      logLevel: 'off',
    });
    const calls = REFERENCES.map((referenceId) => client.checkStatus(referenceId));
    await flush();
    expect(state.started).toEqual(REFERENCES.slice(0, 2));
    while (state.release.length > 0) {
      state.release.shift()?.();
      await flush();
    }
    const statuses = await Promise.all(calls);
    expect(statuses.map((status) => status.referenceId)).toEqual(REFERENCES);
    expect(state.started).toEqual(REFERENCES);
    expect(state.maxInFlight).toBe(2);
  });

  it('lets an aborted queued call leave at once, without taking a slot', async () => {
    const { fetch, state } = heldFetch();
    const client = new CollectionsClient({
      apiKey: 'test-key-0001',
      baseUrl: COLLECTIONS_BASE_URL,
      fetch,
      maxConcurrentRequests: 1,
      logLevel: 'off',
    });
    const first = client.checkStatus(REFERENCES[0] as string);
    const controller = new AbortController();
    const queued = client.checkStatus(REFERENCES[1] as string, { signal: controller.signal });
    const third = client.checkStatus(REFERENCES[2] as string);
    await flush();
    controller.abort(new Error('till closed'));
    await expect(queued).rejects.toThrow('till closed');
    state.release.shift()?.();
    await flush();
    state.release.shift()?.();
    await expect(Promise.all([first, third])).resolves.toHaveLength(2);
    expect(state.started).toEqual([REFERENCES[0], REFERENCES[2]]);
  });

  it('allows 64 requests in flight by default; Infinity removes the limit', async () => {
    const references = Array.from({ length: 70 }, (_, index) => `3f1c1d7e-8a2b-4c3d-9e4f-${String(index).padStart(12, '0')}`);
    for (const maxConcurrentRequests of [undefined, Number.POSITIVE_INFINITY]) {
      const { fetch, state } = heldFetch();
      const client = new CollectionsClient({
        apiKey: 'test-key-0001',
        baseUrl: COLLECTIONS_BASE_URL,
        fetch,
        logLevel: 'off',
        maxConcurrentRequests,
      });
      const calls = references.map((referenceId) => client.checkStatus(referenceId));
      await flush();
      expect(state.inFlight).toBe(maxConcurrentRequests === undefined ? 64 : 70);
      while (state.release.length > 0) {
        for (const release of state.release.splice(0)) release();
        await flush();
      }
      await Promise.all(calls);
    }
  });
});
