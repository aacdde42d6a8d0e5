/**
 * A till process for the crash test: opens the SqliteJournal, runs recover(), then sells (initiate → poll) until it
 * is killed, printing a line at each step so the test can kill it at a chosen moment.
 *
 * Usage: till <journal file> <collections base URL> <api key> <grace ms> [pause-after-insert | recover-only]
 * Lines: `recovered <json>`, `ready`, `start <ref>`, `inserted <ref>`, `accepted <ref>`, `polled <ref>`, `settled <ref> <status>`.
 */
import { CollectionsClient, type PaymentJournal } from '../../../src/index.js';
import { SqliteJournal } from '../../../src/sqlite/index.js';

const [file, baseUrl, apiKey, grace, mode] = process.argv.slice(2) as [string, string, string, string, string | undefined];
const say = (line: string) => process.stdout.write(`${line}\n`);
// The last restart of the test reads the journal "a while later": its clock moved past every sender's window.
const sqlite = new SqliteJournal(file, { now: () => Date.now() + Number(process.env.TILL_JOURNAL_CLOCK_OFFSET_MS ?? 0) });
// The pause gives the test a window between the journal write and the request: "killed before the request leaves".
const journal: PaymentJournal =
  mode === 'pause-after-insert'
    ? {
        insert: async (record) => {
          const inserted = await sqlite.insert(record);
          say(`inserted ${record.referenceId}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
          return inserted;
        },
        transition: (referenceId, version, change) => sqlite.transition(referenceId, version, change),
        now: () => sqlite.now(),
        history: (referenceId) => sqlite.history(referenceId),
        get: (referenceId) => sqlite.get(referenceId),
        list: (filter) => sqlite.list(filter),
        lease: (request) => sqlite.lease(request),
        renew: (owner, referenceIds, leaseMs) => sqlite.renew(owner, referenceIds, leaseMs),
        release: (owner, referenceIds) => sqlite.release(owner, referenceIds),
      }
    : sqlite;
const client = new CollectionsClient({ apiKey, baseUrl, journal, logLevel: 'off', timeoutMs: 2_000, maxRetries: 2 });

let recovered = await client.recover({ notFoundGraceMs: Number(grace) });
if (mode === 'recover-only') {
  // The last restart settles everything it can: a process that starts must itself watch an open record for its
  // window and the grace before a verdict (decidableAt says until when), so it recovers again then.
  for (let round = 0; round < 5; round++) {
    const due = recovered
      .filter((record) => (record.state === 'initiating' || record.state === 'unknown') && record.decidableAt !== undefined)
      .map((record) => Date.parse(record.decidableAt as string));
    if (due.length === 0) break;
    const waitMs = Math.max(...due) - Date.parse(await journal.now());
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs) + 50));
    recovered = await client.recover({ notFoundGraceMs: Number(grace) });
  }
}
say(`recovered ${JSON.stringify(recovered.map((record) => [record.referenceId, record.state]))}`);
if (mode === 'recover-only') process.exit(0);
say('ready');
for (let sale = 0; ; sale++) {
  const referenceId = globalThis.crypto.randomUUID();
  say(`start ${referenceId}`);
  // Some customers cannot pay (the simulator settles this number as failed).
  const phoneNumber = Math.random() < 0.3 ? '0977000001' : '0977123456';
  await client.initiate({ productId: '6f1e2d3c-4b5a-4978-8a6b-5c4d3e2f1a0b', phoneNumber, amount: 10 + (sale % 7), referenceId });
  say(`accepted ${referenceId}`);
  const status = await client.pollUntilSettled(referenceId, {
    initialDelayMs: 5,
    intervalMs: 10,
    maxIntervalMs: 20,
    onUpdate: (update) => say(`polled ${referenceId} ${update.statusText}`),
  });
  say(`settled ${referenceId} ${status.statusText}`);
}
