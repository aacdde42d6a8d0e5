import { describe, expectTypeOf, it } from 'vitest';
import type { CollectionsClient, InitiatedCollection } from '../../src/index.js';

describe('InitiatedCollection', () => {
  it("types the 202's optional id as getById takes it", () => {
    expectTypeOf<InitiatedCollection['id']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<NonNullable<InitiatedCollection['id']>>().toExtend<Parameters<CollectionsClient['getById']>[0]>();
  });
});
