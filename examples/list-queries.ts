/**
 * Lists this partner's customer queries: what reconciliation after a restart starts from.
 * Customer names stay out of the output and numbers are masked, as they should in any log.
 *
 * Runs against the embedded simulator unless the sandbox variables are set (see connect.ts).
 *
 * Run: `node examples/list-queries.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import { maskPhoneNumber, mobileNumberFor } from 'tap-collections-sdk';
import { connect } from './connect.ts';

const connection = await connect();
try {
  if (connection.target === 'simulator') {
    // A fresh simulator holds no queries: submit two so there is something to list.
    for (const terminal of ['T1', 'T2']) {
      await connection.tap.submitCustomerQuery({
        merchantId: `list-demo-${terminal}`,
        merchantName: 'Kabwe Groceries',
        terminalId: `list-demo-${terminal}`,
        amount: 10,
        tagId: connection.tagId,
      });
    }
  }
  const queries = await connection.tap.listCustomerQueries();
  console.log(`${queries.length} customer queries on the ${connection.target}`);
  for (const query of queries.slice(-10)) {
    const number = mobileNumberFor(query);
    console.log(
      `  ${query.createdAt}  ref ${query.transaction.referenceId}  ${query.transaction.amount} ${query.transaction.currency}  ` +
        `tag ${query.tag.tagId}  ${number ? maskPhoneNumber(number) : 'no active airtel_money number'}`,
    );
  }
} finally {
  await connection.close();
}
