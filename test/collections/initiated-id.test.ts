/**
 * Where getById's id comes from: the 202's `id`, when the service sends one. And what else a 202 to the create
 * proves: that the base URL serves the Collections API, so a later 404 is judged without asking `/health`.
 */

import { http } from 'msw';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../src/index.js';
import {
  CHECK_URL,
  collectionInput,
  collectionsClient,
  DETAILS_URL,
  HEALTH_URL,
  INITIATE_URL,
  json,
  REFERENCE_ID,
  serviceNotFound,
} from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const accepting = (extra: Record<string, unknown>) =>
  http.post(INITIATE_URL, () => json(202, { success: true, data: { referenceId: REFERENCE_ID, status: 'pending', ...extra } }));

describe('initiate → getById', () => {
  it('resolves with the id the 202 carries, which getById takes as it is', async () => {
    server.use(
      accepting({ id: 'col_01J9Z' }),
      http.get(DETAILS_URL, ({ params }) => json(200, { success: true, data: { id: params.id, referenceId: REFERENCE_ID } })),
    );
    const client = collectionsClient();
    const created = await client.initiate(collectionInput());
    expect(created).toEqual({ referenceId: REFERENCE_ID, status: 'pending', id: 'col_01J9Z' });
    if (created.id === undefined) throw new Error('no id');
    expect(await client.getById(created.id)).toEqual({ id: 'col_01J9Z', referenceId: REFERENCE_ID });
    expect(requests[1]?.path).toBe('/v1/collections/col_01J9Z');
  });

  it('gives a numeric id as its decimal text', async () => {
    server.use(accepting({ id: 4211 }));
    expect((await collectionsClient().initiate(collectionInput())).id).toBe('4211');
  });

  it('leaves id out when the 202 has none (as the document shows it) or one getById could not take', async () => {
    server.use(accepting({}));
    expect(await collectionsClient().initiate(collectionInput())).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
    server.use(accepting({ id: { nested: true } }));
    const created = await collectionsClient().initiate(collectionInput());
    expect(created).not.toHaveProperty('id');
  });

  it('leaves out an empty id: getById could not take it', async () => {
    server.use(accepting({ id: '' }));
    expect(await collectionsClient().initiate(collectionInput())).toEqual({ referenceId: REFERENCE_ID, status: 'pending' });
  });
});

describe('what a 202 to the create proves', () => {
  it("the base URL serves the Collections API: a later status check's 404 is the service's answer, no /health asked", async () => {
    server.use(
      accepting({}),
      http.get(CHECK_URL, () => serviceNotFound()),
      http.get(HEALTH_URL, () => json(200, { status: 'ok' })),
    );
    const client = collectionsClient();
    await client.initiate(collectionInput());
    await expect(client.checkStatus(REFERENCE_ID)).rejects.toBeInstanceOf(NotFoundError);
    expect(requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /v1/collections/mobile-money',
      `GET /v1/collections/check/${REFERENCE_ID}`,
    ]);
  });
});
