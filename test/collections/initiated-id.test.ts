/** Where getById's id comes from: the 202's `id`, when the service sends one. */

import { http } from 'msw';
import { describe, expect, it } from 'vitest';
import { collectionInput, collectionsClient, DETAILS_URL, INITIATE_URL, json, REFERENCE_ID } from '../helpers/collections.js';
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
});
