import { describe, expectTypeOf, it } from 'vitest';
import type { ApiError, ApiErrorCode, ConflictError, KnownErrorCode } from '../../src/index.js';

describe('ApiError.code', () => {
  it('names the codes both service documents give', () => {
    expectTypeOf<KnownErrorCode>().toEqualTypeOf<'resource/already-exists-error' | 'E_VALIDATION_ERROR'>();
  });

  it('is a KnownErrorCode or any other string, and undefined when the body had none', () => {
    expectTypeOf<ApiError['code']>().toEqualTypeOf<ApiErrorCode | undefined>();
    expectTypeOf<ConflictError['code']>().toEqualTypeOf<ApiErrorCode | undefined>();
    expectTypeOf<'resource/already-exists-error'>().toExtend<ApiErrorCode>();
    expectTypeOf<'E_VALIDATION_ERROR'>().toExtend<ApiErrorCode>();
    // Any string a service sends is still allowed: new identifiers must not break callers.
    expectTypeOf<'tag/inactive-error'>().toExtend<ApiErrorCode>();
    expectTypeOf<string>().toExtend<ApiErrorCode>();
  });

  it('keeps the known codes as literals, so editors suggest them (not widened to plain string)', () => {
    expectTypeOf<Extract<ApiErrorCode, KnownErrorCode>>().toEqualTypeOf<KnownErrorCode>();
    expectTypeOf<ApiErrorCode>().not.toEqualTypeOf<string>();
  });

  it('compares with a known code without a cast', () => {
    const isDuplicate = (error: ApiError) => error.code === 'resource/already-exists-error';
    expectTypeOf(isDuplicate).returns.toEqualTypeOf<boolean>();
  });
});
