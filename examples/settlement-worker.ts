/**
 * A backend that takes orders over HTTP and settles their payments in a settlement worker: the handler
 * initiates the payment and answers at once; the worker checks every open payment within one request
 * budget and marks each order paid or not paid in `onSettled`.
 *
 * Runs against the embedded simulator. In production, give the client a `PostgresJournal`
 * (`tap-collections-sdk/postgres`) and run the same worker on every machine: they share the payments.
 *
 * Run: `node examples/settlement-worker.ts` from the repository, after `npm ci` and `npm run build` (Node.js 22.18+ or 24;
 * see the README's "Examples").
 */
import { createServer } from 'node:http';
import { CollectionsClient, MemoryJournal, type PaymentRecord } from 'tap-collections-sdk';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, startSimulator } from 'tap-collections-sdk/testing';

const simulator = await startSimulator({ simulator: createSimulator({ settlement: { pendingMs: 1_500, pendingPolls: 3 } }) });
const journal = new MemoryJournal(); // production: new PostgresJournal({ connectionString: process.env.DATABASE_URL })
const collections = new CollectionsClient({
  apiKey: COLLECTIONS_API_KEYS.primary,
  baseUrl: simulator.collectionsBaseUrl,
  journal,
  logLevel: 'warn',
});

// The shop's own orders table (a Map here).
const orders = new Map<string, { referenceId: string; state: 'awaiting-payment' | 'paid' | 'not-paid' | 'start-over' }>();

// The worker: settles every open payment of the journal, at most 5 status checks per second in all.
const worker = collections.startSettlementWorker({
  requestsPerSecond: 5,
  initialDelayMs: 500, // the simulator settles in 1.5 s; keep the defaults against the real service
  intervalMs: 300,
  maxIntervalMs: 600,
  onSettled: (record: PaymentRecord) => {
    // Idempotent by referenceId: a payment delivered twice (after a crash) changes nothing the second time.
    for (const [orderId, order] of orders) {
      if (order.referenceId !== record.referenceId || order.state !== 'awaiting-payment') continue;
      order.state = record.state === 'successful' ? 'paid' : record.state === 'not-sent' ? 'start-over' : 'not-paid';
      console.log(`order ${orderId}: ${order.state} (${record.state}${record.reason ? `, ${record.reason}` : ''})`);
    }
  },
});

// The HTTP handler: POST /orders/:id/pay {"phoneNumber":…,"amount":…} initiates and answers 202 at once.
const server = createServer(async (request, response) => {
  const orderId = /^\/orders\/([\w-]+)\/pay$/.exec(request.url ?? '')?.[1];
  if (request.method !== 'POST' || orderId === undefined) {
    response.writeHead(404).end();
    return;
  }
  let body = '';
  for await (const chunk of request) body += chunk;
  const { phoneNumber, amount } = JSON.parse(body) as { phoneNumber: string; amount: number };
  const { referenceId } = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber, amount });
  orders.set(orderId, { referenceId, state: 'awaiting-payment' });
  response.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ orderId, referenceId }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
const shop = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

// Five customers pay; two of them lack the funds.
const customers = [PHONES.succeeds, PHONES.insufficientFunds, PHONES.succeeds, PHONES.insufficientFunds, PHONES.succeeds];
for (const [index, phoneNumber] of customers.entries()) {
  const answer = await fetch(`${shop}/orders/order-${index + 1}/pay`, {
    method: 'POST',
    body: JSON.stringify({ phoneNumber, amount: 25 }),
  });
  console.log(`order-${index + 1}: ${answer.status} accepted, waiting for the customer`);
}

const deadline = Date.now() + 20_000;
while ([...orders.values()].some((order) => order.state === 'awaiting-payment') && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const states = [...orders.values()].map((order) => order.state);
console.log(
  `${states.filter((state) => state !== 'awaiting-payment').length} of ${orders.size} orders settled: ` +
    `${states.filter((state) => state === 'paid').length} paid, ${states.filter((state) => state === 'not-paid').length} not paid`,
);

// Shutdown: the worker leaves nothing in flight and no timer; then the rest.
await worker.stop();
server.close();
await simulator.close();
