import { describe, expectTypeOf, it } from 'vitest';
import type { ApiResponse, CollectionsClient, HttpMethod, InitiatedCollection, PollOptions, ResponseEvent } from '../../src/index.js';
import {
  type ApiError,
  type ApiErrorCode,
  type ApiKeySource,
  type CustomerQuery,
  type CustomerQueryInput,
  CustomerQuerySchema,
  type FieldError,
  type LogLevel,
  type MobileNumber,
  mobileNumberFor,
  type OpenEnum,
  RateLimitError,
  type RequestOptions,
  type RequestValidationError,
  ResponseValidationError,
  TapClient,
  type TapClientOptions,
  type TapCollectionsError,
  UnknownOutcomeError,
  UnprocessableEntityError,
} from '../../src/index.js';

type Operator = CustomerQuery['tag']['mobileNumbers'][number]['operator'];

describe('public types', () => {
  it('submitCustomerQuery resolves with a CustomerQuery', () => {
    expectTypeOf<TapClient['submitCustomerQuery']>().returns.toEqualTypeOf<Promise<CustomerQuery>>();
    expectTypeOf<TapClient['submitCustomerQuery']>().parameter(0).toEqualTypeOf<CustomerQueryInput>();
    expectTypeOf<TapClient['submitCustomerQuery']>().parameter(1).toEqualTypeOf<RequestOptions | undefined>();
  });

  it('listCustomerQueries resolves with CustomerQuery[]', () => {
    expectTypeOf<TapClient['listCustomerQueries']>().returns.toEqualTypeOf<Promise<CustomerQuery[]>>();
  });

  it("operator is an open enum: 'airtel_money' and any string", () => {
    expectTypeOf<'airtel_money'>().toExtend<Operator>();
    expectTypeOf<'mtn_money'>().toExtend<Operator>();
    expectTypeOf<string>().toExtend<Operator>();
    expectTypeOf<Operator>().toExtend<string>();
    expectTypeOf<Operator>().toEqualTypeOf<OpenEnum<'airtel_money'>>();
    expectTypeOf<MobileNumber['status']>().toEqualTypeOf<OpenEnum<'active'>>();
    expectTypeOf<CustomerQuery['transaction']['status']>().toEqualTypeOf<OpenEnum<'pending'>>();
  });

  it('the schema infers the CustomerQuery type', () => {
    expectTypeOf(CustomerQuerySchema.parse({})).toEqualTypeOf<CustomerQuery>();
    expectTypeOf<CustomerQuery['transaction']['amount']>().toEqualTypeOf<number>();
    expectTypeOf<CustomerQuery['customer']['firstName']>().toEqualTypeOf<string>();
  });

  it('mobileNumberFor returns string | undefined, the operator optional', () => {
    expectTypeOf(mobileNumberFor).returns.toEqualTypeOf<string | undefined>();
    expectTypeOf(mobileNumberFor).toBeCallableWith({} as CustomerQuery);
    expectTypeOf(mobileNumberFor).toBeCallableWith({} as CustomerQuery, 'mtn_money');
    // @ts-expect-error an operator is a string
    mobileNumberFor({} as CustomerQuery, 42);
  });

  it('narrows errors with instanceof', () => {
    const error: unknown = undefined;
    if (error instanceof RateLimitError) {
      expectTypeOf(error.retryAfterMs).toEqualTypeOf<number | undefined>();
      expectTypeOf(error.status).toEqualTypeOf<number>();
    }
    if (error instanceof UnprocessableEntityError) expectTypeOf(error.errors).toEqualTypeOf<readonly FieldError[]>();
    if (error instanceof UnknownOutcomeError) expectTypeOf(error.referenceId).toEqualTypeOf<string>();
    if (error instanceof ResponseValidationError) expectTypeOf(error.body).toEqualTypeOf<unknown>();
    expectTypeOf<RateLimitError>().toExtend<ApiError>();
    expectTypeOf<ApiError>().toExtend<TapCollectionsError>();
    expectTypeOf<TapCollectionsError>().toExtend<Error>();
  });

  it("ApiError['service'] is 'tap' | 'collections'", () => {
    expectTypeOf<ApiError['service']>().toEqualTypeOf<'tap' | 'collections'>();
    expectTypeOf<ApiError['code']>().toEqualTypeOf<ApiErrorCode | undefined>();
    expectTypeOf<ApiError['requestId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ApiError['body']>().toEqualTypeOf<unknown>();
  });

  it('RequestValidationError issues are { path: string; message: string }', () => {
    type Issue = RequestValidationError['issues'][number];
    expectTypeOf<Issue['path']>().toEqualTypeOf<string>();
    expectTypeOf<Issue['message']>().toEqualTypeOf<string>();
    expectTypeOf<keyof Issue>().toEqualTypeOf<'path' | 'message'>();
  });

  it('CustomerQueryInput.referenceId is optional; the rest required', () => {
    expectTypeOf<CustomerQueryInput['referenceId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<{
      merchantId: string;
      merchantName: string;
      terminalId: string;
      amount: number;
      tagId: string;
    }>().toExtend<CustomerQueryInput>();
    expectTypeOf<{ merchantId: string; merchantName: string; terminalId: string; amount: number }>().not.toExtend<CustomerQueryInput>();
    expectTypeOf<{
      merchantId: string;
      merchantName: string;
      terminalId: string;
      amount: string;
      tagId: string;
    }>().not.toExtend<CustomerQueryInput>();
  });

  it('the client options', () => {
    expectTypeOf<ApiKeySource>().toEqualTypeOf<string | (() => string | Promise<string>)>();
    expectTypeOf<TapClientOptions['apiKey']>().toEqualTypeOf<ApiKeySource | undefined>();
    expectTypeOf<LogLevel>().toEqualTypeOf<'off' | 'error' | 'warn' | 'info' | 'debug'>();
    expectTypeOf(TapClient).toBeConstructibleWith();
    expectTypeOf(TapClient).toBeConstructibleWith({ apiKey: async () => 'k', baseUrl: 'https://tap.test' });
    expectTypeOf<RequestOptions>().toEqualTypeOf<{
      signal?: AbortSignal;
      timeoutMs?: number;
      maxRetries?: number;
      headers?: Record<string, string>;
    }>();
  });

  it('raw access: request() on both clients, ApiResponse, onResponse events', () => {
    expectTypeOf<HttpMethod>().toEqualTypeOf<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>();
    expectTypeOf<TapClient['request']>().returns.resolves.toEqualTypeOf<ApiResponse>();
    expectTypeOf<Parameters<CollectionsClient['request']>[0]>().toEqualTypeOf<HttpMethod>();
    expectTypeOf<Parameters<CollectionsClient['request']>[1]>().toEqualTypeOf<string>();
    expectTypeOf<NonNullable<Parameters<CollectionsClient['request']>[2]>['query']>().toEqualTypeOf<
      Record<string, string | number | boolean> | undefined
    >();
    expectTypeOf<ApiResponse>().toEqualTypeOf<{
      status: number;
      headers: Record<string, string>;
      body: unknown;
      requestId: string | undefined;
    }>();
    expectTypeOf<ResponseEvent['attempt']>().toEqualTypeOf<number>();
    expectTypeOf<TapClientOptions['onResponse']>().toEqualTypeOf<((event: ResponseEvent) => void) | undefined>();
  });

  it('initiate resolves with the known fields and an open record; settledStatuses is a string list', () => {
    expectTypeOf<InitiatedCollection['referenceId']>().toEqualTypeOf<string>();
    expectTypeOf<InitiatedCollection['fee']>().toEqualTypeOf<unknown>();
    expectTypeOf<PollOptions['settledStatuses']>().toEqualTypeOf<readonly string[] | undefined>();
  });
});
