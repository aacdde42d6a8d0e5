/**
 * Recognising a create's own customer query in the partner's list, for reconciling a
 * `submitCustomerQuery` whose outcome was unknown. The list is read row by row as it streams in: one
 * malformed row of another query must not hide this call's own, and memory stays flat in the history's size.
 *
 * @module
 */
import { ResponseValidationError } from '../core/errors.js';
import type { LookupResult } from '../core/idempotent-create.js';
import { toValidationIssues } from '../core/validation.js';
import type { ListItem } from './query-stream.js';
import { type CustomerQuery, type CustomerQueryInput, CustomerQuerySchema } from './schemas.js';

/** The service may round an amount to the cent (10.005 → 10.01): amounts this close are the same amount. */
const AMOUNT_TOLERANCE = 0.005 + 1e-9;

type Row = Record<string, unknown>;

const isObject = (value: unknown): value is Row => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (row: Row | undefined, key: string): string | undefined => (typeof row?.[key] === 'string' ? (row[key] as string) : undefined);

/**
 * Finds the query created by `request` among the list's items (unvalidated), as they stream in; stops
 * reading at the first `found` (the rest of the body is cancelled):
 * - `found` when a row has its `referenceId`, `merchantId`, `terminalId` and `tagId` and its amount (to the cent);
 * - `excluded` when another query holds its `referenceId`, `merchantId` or `terminalId`: each is unique per
 *   partner, so the service can never have created this one;
 * - `absent` otherwise (not visible yet, which proves nothing after an unknown outcome).
 * @throws {@link ResponseValidationError} when this call's own row is there but malformed, or the list
 * itself cannot be read (see {@link listItems}).
 */
export async function findOwnQuery(
  items: AsyncIterable<ListItem>,
  request: CustomerQueryInput & { referenceId: string },
  status: number,
  requestId: string | undefined,
): Promise<LookupResult<CustomerQuery>> {
  let excluded = false;
  for await (const { value: row, path } of items) {
    const transaction = isObject(row) && isObject(row.transaction) ? row.transaction : undefined;
    const referenceId = text(transaction, 'referenceId');
    if (transaction === undefined || referenceId === undefined) continue;
    const sameReference = referenceId === request.referenceId;
    const sharesKey =
      sameReference || text(transaction, 'merchantId') === request.merchantId || text(transaction, 'terminalId') === request.terminalId;
    if (!sharesKey) continue;
    if (!sameReference || differs(row as Row, transaction, request)) {
      excluded = true;
      continue;
    }
    const parsed = CustomerQuerySchema.safeParse(row, { reportInput: true });
    if (parsed.success) return { kind: 'found', result: parsed.data };
    // This call's own query exists but cannot be read: the caller must not take that for "not created".
    throw new ResponseValidationError({
      issues: toValidationIssues(parsed.error.issues, path),
      body: undefined,
      service: 'tap',
      status,
      requestId,
    });
  }
  return excluded ? { kind: 'excluded' } : { kind: 'absent' };
}

/** True when a row with this call's `referenceId` provably describes another query (a field it echoes differs). */
function differs(row: Row, transaction: Row, request: CustomerQueryInput): boolean {
  const tag = isObject(row.tag) ? row.tag : undefined;
  const mismatch = (seen: string | undefined, wanted: string) => seen !== undefined && seen !== wanted;
  const amount = transaction.amount;
  return (
    mismatch(text(transaction, 'merchantId'), request.merchantId) ||
    mismatch(text(transaction, 'terminalId'), request.terminalId) ||
    mismatch(text(tag, 'tagId'), request.tagId) ||
    (typeof amount === 'number' && Math.abs(amount - request.amount) > AMOUNT_TOLERANCE)
  );
}
