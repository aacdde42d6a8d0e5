import { describe, expect, it } from 'vitest';
import { amountFromNgwee, CollectionInputSchema, checkCollectionAmount, MemoryJournal, RequestValidationError } from '../../src/index.js';
import { acceptCollection, collectionInput, collectionsClient, REFERENCE_ID, rejectionOf, sentBody } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server, requests } = useMswServer();

describe('checkCollectionAmount', () => {
  it.each([
    [1, 1],
    [4.35, 4.35],
    [10_000, 10_000],
    // Ordinary arithmetic leaves float noise: it counts as the ngwee it is next to.
    [10 + 112 / 100, 11.12],
    [0.1 + 0.2 + 1, 1.3],
    [3 * 1.1, 3.3],
  ])('accepts %s as %s', (amount, sent) => {
    expect(checkCollectionAmount(amount)).toEqual({ ok: true, amount: sent });
  });

  it('names the value and the remedy for a real third decimal', () => {
    const check = checkCollectionAmount(11.125);
    expect(check.ok).toBe(false);
    if (check.ok) return;
    expect(check.message).toContain('11.125 has more than two decimals');
    expect(check.message).toContain('Math.round(amount * 100) / 100');
    expect(check.message).toMatch(/amountFromNgwee\(111[23]\)/);
  });

  it.each([
    [0.99, '0.99 is outside the Collections limits: from 1 to 10000 ZMW'],
    [10_000.01, '10000.01 is outside the Collections limits'],
    [Number.NaN, 'NaN is not a finite number'],
    [Number.POSITIVE_INFINITY, 'Infinity is not a finite number'],
    ['12.50', 'a string is not a finite number'],
    [null, 'a null is not a finite number'],
  ])('refuses %s, saying why', (amount, message) => {
    const check = checkCollectionAmount(amount);
    expect(check).toMatchObject({ ok: false });
    expect(check.ok ? '' : check.message).toContain(message);
  });

  it('never repeats a string, which could be a phone number', () => {
    const check = checkCollectionAmount('0977123456');
    expect(JSON.stringify(check)).not.toContain('0977123456');
  });
});

describe('amountFromNgwee', () => {
  it.each([
    [1112, 11.12],
    [100, 1],
    [1_000_000, 10_000],
    [435, 4.35],
  ])('turns %i ngwee into %s ZMW, printed as written', (ngwee, amount) => {
    expect(amountFromNgwee(ngwee)).toBe(amount);
    expect(String(amountFromNgwee(ngwee))).toBe(String(amount));
  });

  const refusal = (ngwee: number) => {
    try {
      amountFromNgwee(ngwee);
    } catch (caught) {
      return caught;
    }
    return undefined;
  };

  it.each([11.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s, naming the field', (ngwee) => {
    const error = refusal(ngwee);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues[0]?.path).toBe('ngwee');
    expect((error as RequestValidationError).message).toContain('is not a whole number of ngwee');
  });

  it.each([2 ** 53, -(2 ** 53), 1e300])('refuses %s as too large to be exact, not as "not whole"', (ngwee) => {
    const error = refusal(ngwee);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues[0]?.path).toBe('ngwee');
    expect((error as RequestValidationError).message).toMatch(/too large to be exact.*MAX_SAFE_INTEGER/);
    expect((error as RequestValidationError).message).not.toContain('not a whole number');
  });

  it('every whole ngwee of the Collections range passes the check as itself', () => {
    const refused: number[] = [];
    for (let ngwee = 100; ngwee <= 1_000_000; ngwee++) {
      const check = checkCollectionAmount(amountFromNgwee(ngwee));
      if (!check.ok || check.amount !== ngwee / 100) refused.push(ngwee);
    }
    expect(refused).toEqual([]);
  });
});

describe('initiate: amounts', () => {
  it('sends float noise as the rounded ngwee', async () => {
    server.use(acceptCollection());
    await collectionsClient().initiate(collectionInput({ amount: 10 + 112 / 100 }));
    expect(sentBody(requests).amount).toBe(11.12);
  });

  it('journals the rounded ngwee, not the noise', async () => {
    server.use(acceptCollection());
    const journal = new MemoryJournal();
    await collectionsClient({ journal }).initiate(collectionInput({ amount: 10 + 112 / 100 }));
    expect((await journal.get(REFERENCE_ID))?.amount).toBe(11.12);
  });

  it('refuses a third decimal before any I/O, with the value and the remedy in the message', async () => {
    const error = await rejectionOf(collectionsClient().initiate(collectionInput({ amount: 11.125 })));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues).toEqual([
      { path: 'amount', message: expect.stringContaining('11.125 has more than two decimals; round it to the ngwee') },
    ]);
    expect((error as Error).message).toMatch(/^Invalid input: amount: 11\.125 has more than two decimals/);
    expect(requests).toHaveLength(0);
  });

  it('CollectionInputSchema normalizes the amount the same way', () => {
    const parsed = CollectionInputSchema.safeParse(collectionInput({ amount: 10 + 112 / 100 }));
    expect(parsed.success && parsed.data.amount).toBe(11.12);
  });
});
