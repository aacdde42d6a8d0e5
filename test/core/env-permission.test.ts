/**
 * Reading defaults from the environment where the runtime may refuse it (Deno without `--allow-env` throws
 * `NotCapable` from every `process.env` read). Here `process.env` is replaced by one that refuses the same way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CollectionsClient, ConfigurationError, TapClient, TapCollectionsError } from '../../src/index.js';
import { API_KEY } from '../helpers/fixtures.js';

const realEnv = Object.getOwnPropertyDescriptor(process, 'env') as PropertyDescriptor;
let reads: (string | symbol)[];

/** Deno 2's refusal, by name and wording. */
class NotCapable extends Error {
  override name = 'NotCapable';
}

beforeEach(() => {
  reads = [];
  const refusing = new Proxy(
    {},
    {
      get(_target, name) {
        reads.push(name);
        throw new NotCapable(`Requires env access to "${String(name)}", run again with the --allow-env flag`);
      },
    },
  );
  Object.defineProperty(process, 'env', { value: refusing, configurable: true, writable: true });
});

afterEach(() => {
  Object.defineProperty(process, 'env', realEnv);
});

describe('an environment the runtime refuses to read', () => {
  it('explicit options need no permission: nothing is read', () => {
    expect(() => new TapClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:4010/tap', logLevel: 'off' })).not.toThrow();
    expect(() => new CollectionsClient({ apiKey: API_KEY, baseUrl: 'http://127.0.0.1:4010/collections', logLevel: 'off' })).not.toThrow();
    expect(reads).toEqual([]);
  });

  it('a default read that is refused ends as ConfigurationError naming the variable and --allow-env', () => {
    let error: unknown;
    try {
      new TapClient({ baseUrl: 'http://127.0.0.1:4010/tap' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error).toBeInstanceOf(TapCollectionsError);
    expect((error as Error).message).toContain('TAP_API_KEY');
    expect((error as Error).message).toContain('--allow-env=TAP_API_KEY');
    expect((error as Error).cause).toBeInstanceOf(NotCapable);
  });

  it('names the base URL variable when only the key is given', () => {
    expect(() => new CollectionsClient({ apiKey: API_KEY })).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', message: expect.stringContaining('--allow-env=COLLECTIONS_BASE_URL') }),
    );
  });
});
