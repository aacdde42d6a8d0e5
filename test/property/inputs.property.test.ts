/**
 * Property: whatever a caller passes to a create, the SDK either refuses it before any I/O
 * (`RequestValidationError` naming exactly the bad fields, zero requests), or sends exactly one request
 * whose JSON body is the normalized input — nothing more, nothing less.
 *
 * The expected outcome comes from an oracle written from the contract's input rules, not from the
 * SDK's schemas; phone numbers are built with their normal form known by construction.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CollectionsClient, type CustomerQueryInput, type FetchFunction, RequestValidationError, TapClient } from '../../src/index.js';
import { customerQuery } from '../helpers/fixtures.js';

const RUNS = 200;
const TAP_BASE_URL = 'https://tap.test';
const COLLECTIONS_BASE_URL = 'https://collections.test';
const API_KEY = 'prop_input_key_0f1e2d3c4b5a';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly body: unknown;
}

/** A `fetch` that records each request and answers with `answer(body)`. */
function recordingFetch(answer: (body: Record<string, unknown>) => Response): { fetch: FetchFunction; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchFunction = async (input, init) => {
    const request = new Request(input, init);
    const text = await request.text();
    const body = text === '' ? undefined : JSON.parse(text);
    sent.push({ method: request.method, url: request.url, headers: request.headers, body });
    return answer(body);
  };
  return { fetch, sent };
}

// ─── Arbitrary values ──────────────────────────────────────────────────────────────────────────────

/** Strings of every kind: plain, blank (ASCII and Unicode spaces), Unicode, lone surrogates. */
const anyString = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.constantFrom(
    '',
    ' ',
    '\t\n ',
    '\u00a0',
    '\u2003\u2003',
    '\ufeff',
    '\u3000',
    ' padded ',
    'Ñoño Ltd',
    '商户',
    '🙂🙂',
    'a\u0000b',
    '\ud800',
  ),
);

/** Numbers of every kind: NaN, ±Infinity, -0, huge, tiny, many decimals, boundaries. */
const anyNumber = fc.oneof(
  fc.double(),
  fc.integer({ min: -20, max: 20_000 }),
  fc.integer({ min: 1, max: 2_000_000 }).map((cents) => cents / 100),
  fc.constantFrom(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    0,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
    Number.MAX_SAFE_INTEGER,
    1e21,
    0.1 + 0.2,
    10 + 112 / 100,
    11.125,
    0.999_999_999_9,
    0.99,
    1,
    1.005,
    4.35,
    9_999.999,
    10_000,
    10_000.01,
    125.5,
  ),
);

/** Values that are not strings or numbers at all. */
const otherValue = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.bigInt({ min: -10n, max: 10n }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

const anyValue = fc.oneof({ weight: 3, arbitrary: anyString }, { weight: 3, arbitrary: anyNumber }, { weight: 1, arbitrary: otherValue });

/** UUIDs of any version and case, and near-misses. */
const uuidLike = fc.oneof(
  fc.uuid(),
  fc.uuid().map((id) => id.toUpperCase()),
  fc.uuid().map((id) => id.slice(1)),
  fc.uuid().map((id) => id.replaceAll('-', '')),
  fc.uuid().map((id) => ` ${id}`),
  fc.uuid().map((id) => `${id.slice(0, -1)}g`),
);

/** Extra fields a caller may add; each must be dropped. */
const extraKey = fc.oneof(
  fc.constantFrom('partnerId', 'currency', 'serviceCharge', 'mobileNumber', 'constructor', 'toString', 'status'),
  fc.string({ minLength: 1, maxLength: 6 }),
);

interface Mutation {
  readonly key: string;
  readonly value: unknown;
  readonly remove: boolean;
}

/** Up to three mutations of a valid input: a field removed, replaced by any value, or an extra field added. */
function mutations(fields: readonly string[], valueFor: (key: string) => fc.Arbitrary<unknown>): fc.Arbitrary<Mutation[]> {
  const mutation = fc
    .tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: extraKey }), fc.boolean(), fc.nat(9))
    .chain(([key, remove, pick]) =>
      (pick < 5 ? valueFor(key) : anyValue).map((value) => ({ key, value, remove: remove && pick % 3 === 0 })),
    );
  return fc.array(mutation, { maxLength: 3 });
}

function applyMutations(base: Record<string, unknown>, changes: readonly Mutation[]): Record<string, unknown> {
  const input: Record<string, unknown> = { ...base };
  for (const { key, value, remove } of changes) {
    if (key === '__proto__') continue;
    if (remove) delete input[key];
    else Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return input;
}

/** Non-object inputs: each must be refused as a whole. */
const notAnObject = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.string(),
  fc.integer(),
  fc.array(fc.anything(), { maxLength: 2 }),
);

// ─── The oracle ─────────────────────────────────────────────────────────────────────────────────────

type Expected =
  | { readonly valid: false; readonly badFields: ReadonlySet<string> }
  | { readonly valid: true; readonly body: Record<string, unknown> };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNonBlank = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';
const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** A lone surrogate (a high one not followed by a low one, or a low one without a high one before it). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The string fields no store reads back as written (NUL, a lone surrogate): refused once the shape is valid, and
 * only then (the shape's issues come first).
 */
function unreadableFields(input: Record<string, unknown>, fields: readonly string[]): Set<string> {
  return new Set(
    fields.filter((field) => {
      const value = input[field];
      return typeof value === 'string' && (value.includes('\u0000') || LONE_SURROGATE.test(value));
    }),
  );
}

/** Tap: four non-blank strings, a finite amount > 0, an optional UUID-shaped referenceId; exactly six fields sent. */
function expectedTap(input: unknown): Expected {
  if (!isObject(input)) return { valid: false, badFields: new Set(['']) };
  const bad = new Set<string>();
  for (const field of ['merchantId', 'merchantName', 'terminalId', 'tagId']) if (!isNonBlank(input[field])) bad.add(field);
  const { amount, referenceId } = input;
  if (!(typeof amount === 'number' && Number.isFinite(amount) && amount > 0)) bad.add('amount');
  if (referenceId !== undefined && !isUuid(referenceId)) bad.add('referenceId');
  if (bad.size > 0) return { valid: false, badFields: bad };
  const unreadable = unreadableFields(input, ['merchantId', 'merchantName', 'terminalId', 'tagId']);
  if (unreadable.size > 0) return { valid: false, badFields: unreadable };
  return {
    valid: true,
    body: {
      merchantId: input.merchantId,
      merchantName: input.merchantName,
      terminalId: input.terminalId,
      referenceId,
      amount,
      tagId: input.tagId,
    },
  };
}

/** A Zambian mobile number's international form: 260 + nine digits starting 7 or 9, typed with any of the usual prefixes and separators. */
function internationalForm(value: string): string | undefined {
  const compact = value.trim().replace(/[\s\-.()]/g, '');
  const match = /^(?:\+260|00260|260|0)([79]\d{8})$/.exec(compact);
  return match ? `260${match[1]}` : undefined;
}

/** Collections: UUIDs, a Zambian number, 1 ≤ amount ≤ 10 000 with ≤ 2 decimals, narration ≤ 100, currency ZMW. */
function expectedCollection(input: unknown): Expected {
  if (!isObject(input)) return { valid: false, badFields: new Set(['']) };
  const bad = new Set<string>();
  const { productId, phoneNumber, amount, narration, referenceId, currency } = input;
  if (!isUuid(productId)) bad.add('productId');
  const phone = typeof phoneNumber === 'string' ? internationalForm(phoneNumber) : undefined;
  if (phone === undefined) bad.add('phoneNumber');
  // Float noise within 1e-9 of a whole ngwee counts as that ngwee, and the ngwee is what is sent.
  const ngwee = typeof amount === 'number' ? Math.round(amount * 100) / 100 : Number.NaN;
  if (!(typeof amount === 'number' && Math.abs(amount - ngwee) <= 1e-9 && ngwee >= 1 && ngwee <= 10_000)) bad.add('amount');
  if (narration !== undefined && !(isNonBlank(narration) && narration.length <= 100)) bad.add('narration');
  if (referenceId !== undefined && !isUuid(referenceId)) bad.add('referenceId');
  if (currency !== undefined && currency !== 'ZMW') bad.add('currency');
  if (bad.size > 0) return { valid: false, badFields: bad };
  const unreadable = unreadableFields(input, ['narration']);
  if (unreadable.size > 0) return { valid: false, badFields: unreadable };
  return {
    valid: true,
    // The referenceId is sent lower-cased: one payment, whatever the case the caller typed it in.
    body: {
      productId,
      referenceId: typeof referenceId === 'string' ? referenceId.toLowerCase() : referenceId,
      phoneNumber: phone,
      currency: 'ZMW',
      amount: ngwee,
      ...(narration === undefined ? {} : { narration }),
    },
  };
}

// ─── Phone numbers, normal form known by construction ──────────────────────────────────────────────

const SEPARATORS = [' ', '-', '.', '(', ')', '\t', '\u00a0'] as const;

/** Inserts separators at random positions, and pads with whitespace. */
const sprinkle = (digits: string): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.array(fc.tuple(fc.nat(digits.length), fc.constantFrom(...SEPARATORS)), { maxLength: 4 }),
      fc.constantFrom('', ' ', '\t'),
      fc.constantFrom('', ' ', '\n'),
    )
    .map(([inserts, before, after]) => {
      let text = digits;
      for (const [at, separator] of [...inserts].sort((a, b) => b[0] - a[0])) text = text.slice(0, at) + separator + text.slice(at);
      return `${before}${text}${after}`;
    });

const subscriber = fc.tuple(fc.constantFrom('7', '9'), fc.stringMatching(/^\d{8}$/)).map(([first, rest]) => first + rest);

/** A phone number and its expected international form (`undefined`: must be refused). */
const phoneNumber: fc.Arbitrary<{ value: unknown; normal: string | undefined }> = fc.oneof(
  fc
    .tuple(fc.constantFrom('+260', '260', '0', '00260'), subscriber)
    .chain(([prefix, digits]) => sprinkle(prefix + digits).map((value) => ({ value, normal: `260${digits}` }))),
  // Near-misses: a first digit other than 7 or 9, eight or ten digits, another country, no prefix, a letter.
  fc
    .tuple(
      fc.constantFrom('+260', '260', '0', '+261', '+27', '26', ''),
      fc.oneof(
        fc.stringMatching(/^[0-68]\d{8}$/),
        fc.stringMatching(/^[79]\d{7}$/),
        fc.stringMatching(/^[79]\d{9}$/),
        subscriber.map((digits) => `${digits.slice(0, 4)}O${digits.slice(5)}`),
        subscriber,
      ),
    )
    .filter(([prefix, digits]) => !(['+260', '260', '0'].includes(prefix) && /^[79]\d{8}$/.test(digits)))
    .map(([prefix, digits]) => ({ value: prefix + digits, normal: undefined })),
  // Arbitrary strings and values, judged by the contract's rule.
  anyString.map((value) => ({ value, normal: internationalForm(value) })),
  otherValue.map((value) => ({ value, normal: undefined })),
);

// ─── Inputs ─────────────────────────────────────────────────────────────────────────────────────────

const TAP_FIELDS = ['merchantId', 'merchantName', 'terminalId', 'amount', 'tagId', 'referenceId'] as const;

const validTapInput = fc.record(
  {
    merchantId: fc.string({ minLength: 1, maxLength: 16 }).filter((text) => text.trim() !== ''),
    merchantName: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 }).filter((text) => text.trim() !== ''),
    terminalId: fc.string({ minLength: 1, maxLength: 16 }).filter((text) => text.trim() !== ''),
    amount: fc.oneof(fc.double({ min: Number.MIN_VALUE, max: 1e12, noNaN: true }), fc.integer({ min: 1, max: 1_000_000 })),
    tagId: fc.string({ minLength: 1, maxLength: 16 }).filter((text) => text.trim() !== ''),
    referenceId: fc.uuid(),
  },
  { requiredKeys: ['merchantId', 'merchantName', 'terminalId', 'amount', 'tagId'] },
);

const tapInput: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.tuple(validTapInput, mutations(TAP_FIELDS, tapValueFor)).map(([base, changes]) => applyMutations(base, changes)),
  },
  { weight: 1, arbitrary: notAnObject },
);

function tapValueFor(key: string): fc.Arbitrary<unknown> {
  if (key === 'amount') return anyNumber;
  if (key === 'referenceId') return uuidLike;
  return anyString;
}

const COLLECTION_FIELDS = ['productId', 'phoneNumber', 'amount', 'narration', 'referenceId', 'currency'] as const;

const validCollectionInput = fc
  .record(
    {
      productId: fc.uuid(),
      phone: phoneNumber.filter(({ normal }) => normal !== undefined),
      amount: fc.integer({ min: 100, max: 1_000_000 }).map((cents) => cents / 100),
      narration: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((text) => text.trim() !== '' && text.length <= 100),
      referenceId: fc.uuid(),
      currency: fc.constant('ZMW' as const),
    },
    { requiredKeys: ['productId', 'phone', 'amount'] },
  )
  .map(({ phone, ...rest }) => ({ ...rest, phoneNumber: phone.value }));

function collectionValueFor(key: string): fc.Arbitrary<unknown> {
  switch (key) {
    case 'productId':
    case 'referenceId':
      return uuidLike;
    case 'phoneNumber':
      return phoneNumber.map(({ value }) => value);
    case 'amount':
      return anyNumber;
    case 'narration':
      return fc.oneof(
        anyString,
        fc.string({ minLength: 95, maxLength: 105 }),
        fc.constant('🙂'.repeat(50)),
        fc.constant(`${'🙂'.repeat(50)}x`),
      );
    case 'currency':
      return fc.constantFrom('ZMW', 'zmw', 'USD', ' ZMW', '');
    default:
      return anyValue;
  }
}

const collectionInput: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .tuple(validCollectionInput, mutations(COLLECTION_FIELDS, collectionValueFor))
      .map(([base, changes]) => applyMutations(base, changes)),
  },
  { weight: 1, arbitrary: notAnObject },
);

// ─── Properties ─────────────────────────────────────────────────────────────────────────────────────

/** Asserts the refusal: a `RequestValidationError` whose issues name exactly the bad fields, and no request. */
function expectRefused(error: unknown, badFields: ReadonlySet<string>, sent: readonly Sent[]): void {
  expect(error).toBeInstanceOf(RequestValidationError);
  const issues = (error as RequestValidationError).issues;
  expect(new Set(issues.map((issue) => issue.path))).toEqual(badFields);
  expect(sent).toHaveLength(0);
}

/**
 * Asserts the call succeeded after sending exactly one POST to `url` whose body is `expected`, with the caller's
 * referenceId or, when it gave none, a fresh UUID v4; returns the request, its body and that referenceId.
 */
function expectSentOnce(
  error: unknown,
  sent: readonly Sent[],
  url: string,
  expected: Record<string, unknown>,
): { request: Sent; body: Record<string, unknown>; referenceId: unknown } {
  expect(error).toBeUndefined();
  expect(sent).toHaveLength(1);
  const request = sent[0] as Sent;
  expect(request.method).toBe('POST');
  expect(request.url).toBe(url);
  const body = request.body as Record<string, unknown>;
  const referenceId = expected.referenceId ?? body.referenceId;
  if (expected.referenceId === undefined) expect(body.referenceId).toMatch(UUID_V4);
  expect(body).toEqual({ ...expected, referenceId });
  return { request, body, referenceId };
}

/** What a call did: resolved with `result`, or rejected with `error`. */
async function settle(call: () => Promise<unknown>): Promise<{ result?: unknown; error?: unknown }> {
  try {
    return { result: await call() };
  } catch (error) {
    return { error };
  }
}

/**
 * Asserts `check` over `RUNS` generated values; `check` says whether the value was one the SDK must refuse, and both
 * kinds must have been generated often enough for the property to mean something.
 */
async function assertOverValidAndInvalid<T>(values: fc.Arbitrary<T>, check: (value: T) => Promise<'valid' | 'invalid'>): Promise<void> {
  const seen = { valid: 0, invalid: 0 };
  await fc.assert(
    fc.asyncProperty(values, async (value) => {
      seen[await check(value)]++;
    }),
    { numRuns: RUNS },
  );
  expect(seen.valid).toBeGreaterThanOrEqual(RUNS / 10);
  expect(seen.invalid).toBeGreaterThanOrEqual(RUNS / 10);
}

/** A `fetch` answering an initiate with 202 `pending` for the referenceId sent. */
const acceptingFetch = () =>
  recordingFetch((body) => Response.json({ success: true, data: { referenceId: body.referenceId, status: 'pending' } }, { status: 202 }));

describe('inputs: refused before any I/O, or sent once exactly as normalized', () => {
  test(`submitCustomerQuery (${RUNS} runs)`, async () => {
    await assertOverValidAndInvalid(tapInput, async (input) => {
      const { fetch, sent } = recordingFetch((body) =>
        Response.json(
          { success: true, data: customerQuery(body as unknown as CustomerQueryInput) },
          { status: 201, headers: { 'x-request-id': 'req-1' } },
        ),
      );
      const tap = new TapClient({ apiKey: API_KEY, baseUrl: TAP_BASE_URL, fetch, logLevel: 'off', maxRetries: 0 });
      const expected = expectedTap(input);
      const { result, error } = await settle(() => tap.submitCustomerQuery(input as never));
      if (!expected.valid) {
        expectRefused(error, expected.badFields, sent);
        return 'invalid';
      }
      const { request, body, referenceId } = expectSentOnce(error, sent, `${TAP_BASE_URL}/v1/tap/partners/customer-queries`, expected.body);
      expect(request.headers.get('x-api-key')).toBe(API_KEY);
      expect(request.headers.get('content-type')).toBe('application/json');
      expect(Object.keys(body).sort()).toEqual([...TAP_FIELDS].sort());
      expect((result as { transaction: { referenceId: string } }).transaction.referenceId).toBe(referenceId);
      return 'valid';
    });
  });

  test(`initiate (${RUNS} runs)`, async () => {
    await assertOverValidAndInvalid(collectionInput, async (input) => {
      const { fetch, sent } = acceptingFetch();
      const collections = new CollectionsClient({ apiKey: API_KEY, baseUrl: COLLECTIONS_BASE_URL, fetch, logLevel: 'off', maxRetries: 0 });
      const expected = expectedCollection(input);
      const { result, error } = await settle(() => collections.initiate(input as never));
      if (!expected.valid) {
        expectRefused(error, expected.badFields, sent);
        return 'invalid';
      }
      const { request, body, referenceId } = expectSentOnce(
        error,
        sent,
        `${COLLECTIONS_BASE_URL}/v1/collections/mobile-money`,
        expected.body,
      );
      expect(request.headers.get('authorization')).toBe(`Bearer ${API_KEY}`);
      expect(Object.keys(body).sort()).toEqual(Object.keys({ ...expected.body, referenceId }).sort());
      expect(result).toEqual({ referenceId, status: 'pending' });
      return 'valid';
    });
  });

  test(`initiate: a phone number typed any usual way is sent in one normal form, known by construction (${RUNS} runs)`, async () => {
    const cases = fc.tuple(phoneNumber, fc.constantFrom('international', 'local' as const));
    await assertOverValidAndInvalid(cases, async ([{ value, normal }, format]) => {
      const { fetch, sent } = acceptingFetch();
      const collections = new CollectionsClient({
        apiKey: API_KEY,
        baseUrl: COLLECTIONS_BASE_URL,
        fetch,
        logLevel: 'off',
        maxRetries: 0,
        phoneNumberFormat: format,
      });
      const { error } = await settle(() =>
        collections.initiate({ productId: '5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170', phoneNumber: value as string, amount: 10 }),
      );
      if (normal === undefined) {
        expectRefused(error, new Set(['phoneNumber']), sent);
        return 'invalid';
      }
      expect(error).toBeUndefined();
      expect(sent).toHaveLength(1);
      expect((sent[0]?.body as { phoneNumber?: unknown } | undefined)?.phoneNumber).toBe(
        format === 'local' ? `0${normal.slice(3)}` : normal,
      );
      return 'valid';
    });
  });
});
