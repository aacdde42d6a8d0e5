/**
 * One settlement worker in a process of its own, for the load test (test/worker/load.test.ts): settles
 * the PostgreSQL journal's open payments against the simulator and reports to its parent over IPC — each
 * request it sends (`sent`), each `onSettled` (`settled`, acknowledged by the write to the channel) — until
 * told to stop. Imports the built package, as a user's process would.
 */
import { CollectionsClient } from 'tap-collections-sdk';
import { PostgresJournal } from 'tap-collections-sdk/postgres';

const name = process.env.WORKER_NAME as string;
const options = JSON.parse(process.env.WORKER_OPTIONS as string);
const send = (message: unknown) =>
  new Promise<void>((resolve, reject) => process.send?.(message, (error: Error | null) => (error ? reject(error) : resolve())));

const journal = new PostgresJournal({
  connectionString: process.env.DATABASE_URL as string,
  tableName: process.env.JOURNAL_TABLE as string,
});
const collections = new CollectionsClient({
  apiKey: process.env.COLLECTIONS_API_KEY as string,
  baseUrl: process.env.COLLECTIONS_BASE_URL as string,
  logLevel: 'error',
  headers: { 'x-worker': name },
  fetch: (input, init) => {
    void send({ type: 'sent', at: Date.now() });
    return fetch(input, init);
  },
});
const worker = collections.startSettlementWorker({
  ...options,
  journal,
  onSettled: (record) => send({ type: 'settled', referenceId: record.referenceId, state: record.state, at: Date.now() }),
});
process.on('message', async (message: { type: string }) => {
  if (message.type !== 'stop') return;
  await worker.stop();
  await journal.close();
  await send({ type: 'stopped' });
  process.disconnect();
});
await send({ type: 'ready', workerId: worker.workerId });
