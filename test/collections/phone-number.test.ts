import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  isZambianMobileNumber,
  MemoryJournal,
  normalizeZambianMobileNumber,
  RequestValidationError,
} from '../../src/index.js';
import { acceptCollection, collectionInput, collectionsClient, issuePaths, rejectionOf, sentBody } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

const ACCEPTED: [input: string, international: string][] = [
  ['+260 97 712 3456', '260977123456'],
  ['260977123456', '260977123456'],
  ['0977123456', '260977123456'],
  ['097-712-3456', '260977123456'],
  ['+260-96-123-4567', '260961234567'],
  ['0761234567', '260761234567'],
  ['00260977123456', '260977123456'],
  ['  0955 123 456 ', '260955123456'],
  ['0977.123.456', '260977123456'],
  ['(097) 712-3456', '260977123456'],
  ['+260 (97) 712 3456', '260977123456'],
  ['0977\u00a0123\u00a0456', '260977123456'],
  ['+260\u202f97\u2009712\u20093456', '260977123456'],
  ['0977\u2013123\u2013456', '260977123456'],
  ['\u0660\u0669\u0667\u0667\u0661\u0662\u0663\u0664\u0665\u0666', '260977123456'],
  ['\uff10\uff19\uff17\uff17\uff11\uff12\uff13\uff14\uff15\uff16', '260977123456'],
];

const REFUSED = [
  '0877123456', // 8 after the 0
  '26097712345', // too short
  '2609771234567', // too long
  '977123456', // no prefix
  '+1 415 555 0100',
  '',
  '   ',
  '+260 87 712 3456',
  '0977l23456',
  '+2600977123456',
];

describe('normalizeZambianMobileNumber / isZambianMobileNumber', () => {
  it.each(ACCEPTED)('normalizes %j to %s (international by default)', (input, international) => {
    expect(isZambianMobileNumber(input)).toBe(true);
    expect(normalizeZambianMobileNumber(input)).toBe(international);
    expect(normalizeZambianMobileNumber(input, 'international')).toBe(international);
  });

  it.each(ACCEPTED)("normalizes %j to the local form with 'local'", (input, international) => {
    expect(normalizeZambianMobileNumber(input, 'local')).toBe(`0${international.slice(3)}`);
  });

  it.each(REFUSED)('refuses %j', (input) => {
    expect(isZambianMobileNumber(input)).toBe(false);
    let error: unknown;
    try {
      normalizeZambianMobileNumber(input);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(issuePaths(error)).toEqual(['phoneNumber']);
  });

  it('is false for values that are not strings', () => {
    expect(isZambianMobileNumber(260977123456)).toBe(false);
    expect(isZambianMobileNumber(undefined)).toBe(false);
    expect(isZambianMobileNumber(null)).toBe(false);
    expect(() => normalizeZambianMobileNumber(260977123456 as unknown as string)).toThrow(RequestValidationError);
  });

  it('never echoes the number in its error', () => {
    expect(() => normalizeZambianMobileNumber('0877123456')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('877') }),
    );
  });
});

describe('initiate: phone numbers', () => {
  it.each(ACCEPTED)('sends %j as %s by default', async (phoneNumber, international) => {
    server.use(acceptCollection());
    await collectionsClient().initiate(collectionInput({ phoneNumber }));
    expect(sentBody(requests, 0).phoneNumber).toBe(international);
  });

  it.each(ACCEPTED)('journals %j masked when it is written in the narration, and logs it masked', async (spelling, international) => {
    server.use(acceptCollection());
    const journal = new MemoryJournal();
    const logged: string[] = [];
    const sink = (message: string, ...details: unknown[]) => logged.push(`${message} ${JSON.stringify(details)}`);
    const client = collectionsClient({ journal, logLevel: 'debug', logger: { debug: sink, info: sink, warn: sink, error: sink } });
    const input = collectionInput({ narration: `Call ${spelling} back` });
    await client.initiate(input);
    const narration = (await journal.get(input.referenceId as string))?.narration ?? '';
    expect(narration).toMatch(/^Call\s+\(?[0-9]{3}\*+[0-9]{2}\s+back$/);
    expect(narration).not.toContain(international.slice(3, 10));
    expect(narration).not.toContain(spelling.trim());
    expect(logged.join('\n')).not.toContain(international.slice(3, 10));
  });

  it.each(REFUSED)('refuses %j before sending', async (phoneNumber) => {
    const error = await rejectionOf(collectionsClient().initiate(collectionInput({ phoneNumber })));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(issuePaths(error)).toEqual(['phoneNumber']);
    expect(requests).toHaveLength(0);
  });

  it("sends the local form 0977123456 with phoneNumberFormat: 'local'", async () => {
    server.use(acceptCollection());
    await collectionsClient({ phoneNumberFormat: 'local' }).initiate(collectionInput({ phoneNumber: '+260 97 712 3456' }));
    expect(sentBody(requests, 0).phoneNumber).toBe('0977123456');
  });

  it("sends the international form with phoneNumberFormat: 'international'", async () => {
    server.use(acceptCollection());
    await collectionsClient({ phoneNumberFormat: 'international' }).initiate(collectionInput({ phoneNumber: '0977123456' }));
    expect(sentBody(requests, 0).phoneNumber).toBe('260977123456');
  });

  it.each(['e164', '', 'LOCAL', 42])('refuses phoneNumberFormat %j with ConfigurationError', (format) => {
    expect(() => collectionsClient({ phoneNumberFormat: format as never })).toThrow(ConfigurationError);
    expect(() => collectionsClient({ phoneNumberFormat: format as never })).toThrow(/phoneNumberFormat/);
  });
});
