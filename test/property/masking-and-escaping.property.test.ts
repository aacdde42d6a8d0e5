/**
 * Property: one grammar for phone numbers, and output an operator can trust.
 *
 * Generated text mixes every spelling the normalizer accepts (any prefix, any Unicode space, dashes, dots, brackets,
 * digits of other scripts), UUIDs in either case, request ids, words, and control and bidirectional characters.
 * - every generated number is accepted by `normalizeZambianMobileNumber` (it is built to be) and is masked wherever the
 *   SDK stores or logs text: in the log rule, and through the public API in a journal record's reason and its history;
 * - no UUID or request id is ever altered by masking (a stored request id is the one the service sent);
 * - the CLI's escaping leaves no control or bidi character in what it prints, and one line per value.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { showLines } from '../../src/cli/journal.ts';
import { printable } from '../../src/cli/shared.ts';
import { redactForLog } from '../../src/core/redact.ts';
import {
  CollectionsClient,
  type FetchFunction,
  MemoryJournal,
  maskPhoneNumber,
  normalizeZambianMobileNumber,
  type PaymentEvent,
  type PaymentRecord,
} from '../../src/index.ts';

const RUNS = 300;

/** The zero of each digit script the generator writes numbers in (ASCII, Arabic-Indic, Persian, Devanagari, fullwidth, mathematical). */
const DIGIT_ZEROS = [0x30, 0x660, 0x6f0, 0x966, 0xff10, 0x1d7ce, 0x1d7ec];
/** Separators people type between digits: ASCII and Unicode spaces, hyphens and dashes, dots. */
const SEPARATORS = [' ', '  ', '\u00a0', '\u2009', '\u202f', '\u3000', '\u2007', '-', '\u2011', '\u2013', '\u2212', '.', ' - '];
const PREFIXES = ['+260', '+ 260', '00260', '260', '0'];

/** Everything a terminal acts on (controls, separators, bidi marks): never in the CLI's output but as line ends. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the assertion.
const ACTED_ON = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const ACTED_ON_CHARACTERS = [
  '\n',
  '\r',
  '\t',
  '\u0000',
  '\u0007',
  '\u001b',
  '\u001b[2K',
  '\u001b]0;PAID\u0007',
  '\u007f',
  '\u0085',
  '\u009b',
  '\u2028',
  '\u2029',
  '\u061c',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];

interface Spelling {
  readonly text: string;
  readonly international: string;
}

const subscriber = fc.tuple(fc.constantFrom('7', '9'), fc.stringMatching(/^[0-9]{8}$/)).map(([first, rest]) => `${first}${rest}`);

/** A Zambian mobile number as someone might type it; its international form known by construction. */
const spelling: fc.Arbitrary<Spelling> = fc
  .record({
    subscriber,
    prefix: fc.constantFrom(...PREFIXES),
    zero: fc.constantFrom(...DIGIT_ZEROS),
    // After which digits a separator goes (and which one), and whether the area code is in brackets.
    cuts: fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), fc.constantFrom(...SEPARATORS)), { maxLength: 4 }),
    bracketed: fc.boolean(),
    separatorAfterPrefix: fc.constantFrom('', ' ', '\u00a0', '-'),
  })
  .map(({ subscriber: digits, prefix, zero, cuts, bracketed, separatorAfterPrefix }) => {
    const script = (ascii: string) =>
      [...ascii].map((digit) => (/[0-9]/.test(digit) ? String.fromCodePoint(zero + Number(digit)) : digit)).join('');
    const after = new Map(cuts);
    let body = '';
    [...digits].forEach((digit, index) => {
      body += digit;
      const separator = after.get(index + 1);
      if (separator !== undefined) body += separator;
    });
    const written = bracketed ? `(${body.slice(0, 2)}) ${body.slice(2)}` : body;
    return { text: `${script(prefix)}${separatorAfterPrefix}${script(written)}`, international: `260${digits}` };
  });

const uuid = fc.oneof(
  fc.uuid().chain((value) => fc.constantFrom(value, value.toUpperCase())),
  // All digits: still a UUID, never a phone number.
  fc.stringMatching(/^[0-9]{8}-[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{12}$/),
);
/** Request ids as services write them: UUIDs, hex, prefixed hex, prefixed digits. */
const requestId = fc.oneof(
  uuid,
  fc.stringMatching(/^[0-9a-f]{16,32}$/),
  fc.stringMatching(/^req-[0-9a-f]{8,24}$/),
  fc.stringMatching(/^req_[0-9]{9,16}$/),
  fc.stringMatching(/^[0-9]{12}[a-f][0-9]{12}$/),
);
const word = fc.stringMatching(/^[A-Za-z]{1,10}$/);
const noise = fc.array(fc.constantFrom(...ACTED_ON_CHARACTERS, 'x', 'é'), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
/** Between two parts: something no identifier or number continues through. */
const boundary = fc.constantFrom(' ', ', ', '; ', ': ', ' / ', '\n', '\t', ' (', ') ', ' "', '" ');

type Part = { kind: 'phone'; spelling: Spelling } | { kind: 'identifier'; text: string } | { kind: 'other'; text: string };

const part: fc.Arbitrary<Part> = fc.oneof(
  spelling.map((value) => ({ kind: 'phone' as const, spelling: value })),
  fc.oneof(uuid, requestId).map((text) => ({ kind: 'identifier' as const, text })),
  fc.oneof(word, noise).map((text) => ({ kind: 'other' as const, text })),
);

const text = fc.array(fc.tuple(part, boundary), { minLength: 1, maxLength: 8 }).map((parts) => ({
  parts: parts.map(([value]) => value),
  text: parts.map(([value, between]) => `${value.kind === 'phone' ? value.spelling.text : value.text}${between}`).join(''),
}));

const textOf = (value: Part) => (value.kind === 'phone' ? value.spelling.text : value.text);

/** Asserts `masked` (from the parts' text) keeps every identifier and shows no generated number's subscriber digits. */
function expectMasked(masked: string, parts: readonly Part[]): void {
  for (const value of parts) if (value.kind === 'identifier') expect(masked).toContain(value.text);
  expectNoNumber(masked, parts);
}

/** Asserts `text` shows none of the generated numbers (outside the identifiers, which may hold any digits). */
function expectNoNumber(text: string, parts: readonly Part[]): void {
  let outsideIdentifiers = text;
  for (const value of parts) if (value.kind === 'identifier') outsideIdentifiers = outsideIdentifiers.split(value.text).join(' ');
  for (const value of parts) {
    if (value.kind !== 'phone') continue;
    // The digits a mask hides (all but the first three and the last two of the international form), in ASCII.
    expect(outsideIdentifiers).not.toContain(value.spelling.international.slice(3, 10));
    expect(outsideIdentifiers).not.toContain(value.spelling.text);
  }
}

describe('one grammar for phone numbers', () => {
  test('every generated spelling is one the normalizer accepts, and masks to the same mask as its normal form', () => {
    fc.assert(
      fc.property(spelling, (value) => {
        expect(normalizeZambianMobileNumber(value.text)).toBe(value.international);
        expect(maskPhoneNumber(value.text)).toMatch(/^[0-9]{3}\*+[0-9]{2}$/);
        expect(maskPhoneNumber(value.text).slice(-2)).toBe(value.international.slice(-2));
        expect(redactForLog(value.text)).toBe(maskPhoneNumber(value.text));
      }),
      { numRuns: RUNS },
    );
  });

  test('in free text, every accepted number is masked and every UUID and request id is left as it was', () => {
    fc.assert(
      fc.property(text, ({ parts, text: original }) => {
        const masked = redactForLog(original) as string;
        expectMasked(masked, parts);
        // Text with neither a number nor an identifier is not touched at all.
        const plain = parts
          .filter((value) => value.kind === 'other')
          .map(textOf)
          .join(' ');
        expect(redactForLog(plain)).toBe(plain);
      }),
      { numRuns: RUNS },
    );
  });

  test('through the public API: a status reason is journaled and logged masked, the reference logged as it is', async () => {
    let answer = { reason: '', referenceId: '' };
    const fetch: FetchFunction = async (input, init) => {
      const request = new Request(input, init);
      if (request.method === 'POST') {
        return Response.json({ success: true, data: { referenceId: answer.referenceId, status: 'pending' } }, { status: 202 });
      }
      return Response.json({
        success: true,
        data: { referenceId: answer.referenceId, statusText: 'failed', transactionCode: 'FAILED', reason: answer.reason },
      });
    };
    const reference = uuid.map((value) => value.toLowerCase());
    await fc.assert(
      fc.asyncProperty(text, reference, async ({ parts, text: reason }, referenceId) => {
        const journal = new MemoryJournal();
        const logged: string[] = [];
        const sink = (message: string, ...details: unknown[]) => logged.push(`${message} ${JSON.stringify(details)}`);
        const client = new CollectionsClient({
          apiKey: 'prop_mask_key_0f1e2d3c4b5a',
          baseUrl: 'https://collections.test',
          fetch,
          journal,
          logger: { debug: sink, info: sink, warn: sink, error: sink },
          logLevel: 'debug',
        });
        answer = { reason, referenceId };
        const productId = '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b';
        await client.initiate({ productId, phoneNumber: '0977123456', amount: 5, referenceId });
        const status = await client.checkStatus(referenceId);
        expect(status.reason).toBe(reason); // the caller's own data is as the service sent it
        const record = await journal.get(referenceId);
        expectMasked(record?.reason ?? '', parts);
        expectNoNumber(logged.join('\n'), parts);
        // The request lines name the payment by its reference, unaltered, even when it is all digits.
        expect(logged.join('\n')).toContain(`GET /v1/collections/check/${referenceId}`);
      }),
      { numRuns: 60 },
    );
  });
});

describe("the CLI's escaping", () => {
  const anyText = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
    fc
      .array(fc.oneof(fc.constantFrom(...ACTED_ON_CHARACTERS), fc.string({ maxLength: 4 })), { minLength: 1, maxLength: 8 })
      .map((parts) => parts.join('')),
    text.map((value) => value.text),
  );

  test('a value is printed as one line with no control or bidi character, and unescapes to itself', () => {
    fc.assert(
      fc.property(anyText, (value) => {
        const printed = printable(value);
        expect(printed).not.toMatch(ACTED_ON);
        expect(printed).not.toContain('\n');
        expect(unprinted(printed)).toBe(value);
      }),
      { numRuns: RUNS },
    );
  });

  test('journal show prints one line per value of a record and one per history event, whatever the values hold', () => {
    fc.assert(
      fc.property(
        fc.record({ narration: anyText, statusText: anyText, transactionCode: anyText, reason: anyText, by: anyText, requestId: anyText }),
        (values) => {
          const record: PaymentRecord = {
            referenceId: '3f1b7e3c-1111-4000-8000-000000000001',
            version: 3,
            state: 'failed',
            productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b',
            amount: 25,
            currency: 'ZMW',
            phoneNumber: '260*******56',
            fingerprint: 'f',
            createdAt: '2026-03-01T10:00:00.000Z',
            updatedAt: '2026-03-01T10:00:41.250Z',
            narration: `n${values.narration}`,
            statusText: `s${values.statusText}`,
            transactionCode: `t${values.transactionCode}`,
            reason: `r${values.reason}`,
          };
          const history: PaymentEvent[] = [
            { at: '2026-03-01T10:00:00.000Z', from: null, to: 'initiating', by: `b${values.by}` },
            {
              at: '2026-03-01T10:00:41.250Z',
              from: 'initiating',
              to: 'failed',
              statusText: `s${values.statusText}`,
              transactionCode: `t${values.transactionCode}`,
              requestId: `q${values.requestId}`,
              by: `b${values.by}`,
            },
          ];
          const printed = showLines(record, history);
          expect(printed.replaceAll('\n', '')).not.toMatch(ACTED_ON);
          const lines = printed.split('\n');
          // Payment, state, amount, phone, product, narration, created, last changed, last status, transaction code,
          // reason; a blank line, the heading, two events; the final line feed.
          expect(lines).toHaveLength(16);
          expect(lines).toContain(`  narration         ${printable(record.narration)}`);
          expect(lines).toContain(`  reason            ${printable(record.reason)}`);
          expect(lines.filter((line) => line.startsWith('  state '))).toEqual(['  state             failed']);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

/** The inverse of the CLI's escapes: proves the escaping loses nothing (a support agent can read the exact value). */
function unprinted(printed: string): string {
  return printed.replace(/\\(?:n|r|t|\\|x([0-9a-f]{2})|u\{([0-9a-f]+)\})/g, (sequence, hex?: string, code?: string) => {
    if (hex !== undefined) return String.fromCharCode(Number.parseInt(hex, 16));
    if (code !== undefined) return String.fromCharCode(Number.parseInt(code, 16));
    return { '\\n': '\n', '\\r': '\r', '\\t': '\t', '\\\\': '\\' }[sequence] as string;
  });
}
