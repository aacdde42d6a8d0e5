import { describe, expect, it } from 'vitest';
import { type CustomerQuery, type MobileNumber, mobileNumberFor } from '../../src/index.js';
import { customerQuery, customerQueryInput } from '../helpers/fixtures.js';

function queryWith(mobileNumbers: MobileNumber[]): CustomerQuery {
  const query = customerQuery(customerQueryInput());
  return { ...query, tag: { ...query.tag, mobileNumbers } };
}

const airtel = (mobileNumber: string, status = 'active'): MobileNumber => ({ operator: 'airtel_money', mobileNumber, status });
const mtn = (mobileNumber: string, status = 'active'): MobileNumber => ({ operator: 'mtn_money', mobileNumber, status });

describe('mobileNumberFor', () => {
  it("defaults to 'airtel_money'", () => {
    expect(mobileNumberFor(queryWith([mtn('260967000001'), airtel('260977123456')]))).toBe('260977123456');
  });

  it('returns the first active number for the operator', () => {
    expect(mobileNumberFor(queryWith([airtel('260977000001'), airtel('260977000002')]))).toBe('260977000001');
  });

  it('skips numbers that are not active', () => {
    const query = queryWith([airtel('260977000001', 'inactive'), airtel('260977000002', 'suspended'), airtel('260977000003')]);
    expect(mobileNumberFor(query)).toBe('260977000003');
  });

  it('compares the status exactly (ACTIVE is not active)', () => {
    expect(mobileNumberFor(queryWith([airtel('260977000001', 'ACTIVE')]))).toBeUndefined();
  });

  it('returns undefined when the only numbers for the operator are inactive', () => {
    expect(mobileNumberFor(queryWith([airtel('260977000001', 'inactive')]))).toBeUndefined();
  });

  it('returns undefined when the tag has no numbers', () => {
    expect(mobileNumberFor(queryWith([]))).toBeUndefined();
  });

  it('returns undefined when the tag has numbers for other operators only', () => {
    expect(mobileNumberFor(queryWith([mtn('260967000001')]))).toBeUndefined();
  });

  it('picks numbers of another operator when asked', () => {
    const query = queryWith([airtel('260977000001'), mtn('260967000001', 'inactive'), mtn('260967000002')]);
    expect(mobileNumberFor(query, 'mtn_money')).toBe('260967000002');
    expect(mobileNumberFor(query, 'zamtel_kwacha')).toBeUndefined();
  });

  it('accepts anything with a tag (e.g. a stored query)', () => {
    expect(mobileNumberFor({ tag: queryWith([airtel('260977123456')]).tag })).toBe('260977123456');
  });
});
