/**
 * The rules of the status-word mapping (src/collections/status-words.ts) one by one: which `statusWords` options are
 * refused and which are not, what a status answer becomes for the journal's state machine, and the bound on the
 * memory of unknown words already warned about. test/collections/status-words.test.ts covers the paths that use the
 * mapping against a real server.
 */
import { describe, expect, it, vi } from 'vitest';
import { StatusWords } from '../../src/collections/status-words.js';
import { LevelLogger } from '../../src/core/logger.js';
import { ConfigurationError } from '../../src/index.js';
import { collectionsClient } from '../helpers/collections.js';

describe('the default status words (the contract: CollectionsClientOptions.statusWords)', () => {
  it.each([
    ['successful', 'successful'],
    ['success', 'successful'],
    ['completed', 'successful'],
    ['failed', 'failed'],
    ['cancelled', 'failed'],
    ['canceled', 'failed'],
    ['expired', 'failed'],
    ['declined', 'failed'],
    ['pending', 'pending'],
    ['processing', 'pending'],
  ] as const)('"%s" means %s, in any case and with spaces around it', (word, meaning) => {
    const words = new StatusWords();
    expect(words.meaningOf(word)).toBe(meaning);
    expect(words.meaningOf(` ${word.toUpperCase()} `)).toBe(meaning);
  });
});

describe('the option statusWords is checked at construction', () => {
  it.for([
    ['done', 'statusWords must be an object'],
    [5, 'statusWords must be an object'],
    [{ successful: ['done', ''] }, 'statusWords successful must be an array of non-blank strings'],
    [{ failed: ['refused', '   '] }, 'statusWords failed must be an array of non-blank strings'],
    [{ pending: [5] }, 'statusWords pending must be an array of non-blank strings'],
  ] as const)('refuses %j', ([statusWords, message]) => {
    const construct = () => collectionsClient({ statusWords: statusWords as never });
    expect(construct).toThrow(ConfigurationError);
    expect(construct).toThrow(message);
  });

  it('accepts a word given twice in one list, or a default repeated in its own list', () => {
    const words = new StatusWords({ successful: ['Completed', 'done', ' DONE '], failed: ['failed'] });
    expect(words.meaningOf('done')).toBe('successful');
    expect(words.meaningOf('completed')).toBe('successful');
    expect(words.meaningOf('FAILED')).toBe('failed');
    expect(() => collectionsClient({ statusWords: { pending: ['pending', 'on-hold', 'On-Hold'] } })).not.toThrow();
  });
});

describe('a status answer as an observation for the state machine', () => {
  const words = new StatusWords();

  it('carries the transaction code, the reason and the request id when the service gave them', () => {
    const observation = words.observation({ referenceId: 'r', statusText: 'Successful', transactionCode: 'TX-9', reason: 'paid' }, 'req-7');
    expect(observation).toEqual({
      kind: 'status',
      state: 'successful',
      statusText: 'Successful',
      transactionCode: 'TX-9',
      reason: 'paid',
      requestId: 'req-7',
    });
  });

  it('leaves out what the service answered null, and a request id it did not send', () => {
    const observation = words.observation({ referenceId: 'r', statusText: 'declined', transactionCode: null, reason: null });
    expect(observation).toEqual({ kind: 'status', state: 'failed', statusText: 'declined' });
    expect(Object.keys(observation).sort()).toEqual(['kind', 'state', 'statusText']);
  });

  it('keeps a word in none of the lists open (pending), with the service’s own word', () => {
    expect(words.observation({ referenceId: 'r', statusText: 'on-hold', transactionCode: null, reason: null })).toEqual({
      kind: 'status',
      state: 'pending',
      statusText: 'on-hold',
    });
  });
});

describe('the once-per-payment-and-word warning', () => {
  it('remembers the last 10 000 pairs: the oldest is forgotten and warned about again, the newest is not', () => {
    const sink = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const logger = new LevelLogger(sink, 'warn');
    const words = new StatusWords();
    for (let index = 0; index <= 10_000; index++) expect(words.warnIfUnknown(`payment-${index}`, 'on-hold', logger)).toBe(true);
    expect(sink.warn).toHaveBeenCalledTimes(10_001);
    // payment-0 was the oldest of 10 001: forgotten to stay within the bound, so warned about again.
    words.warnIfUnknown('payment-0', 'on-hold', logger);
    expect(sink.warn).toHaveBeenCalledTimes(10_002);
    // payment-10000 is among the remembered: not again, and the word is still unknown.
    expect(words.warnIfUnknown('payment-10000', 'ON-HOLD ', logger)).toBe(true);
    expect(sink.warn).toHaveBeenCalledTimes(10_002);
    expect(words.warnIfUnknown('payment-10000', 'pending', logger)).toBe(false);
  });
});
