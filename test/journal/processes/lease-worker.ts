/**
 * A process that leases from a shared SqliteJournal until nothing is left, and prints what it got.
 * Usage: lease-worker <file> <owner>; prints `ready`, starts on a line on stdin (so all workers start together).
 */
import { SqliteJournal } from '../../../src/sqlite/index.js';

const [file, owner] = process.argv.slice(2) as [string, string];
const journal = new SqliteJournal(file, { busyTimeoutMs: 10_000 });
await journal.list({ limit: 1 });
console.log('ready');
await new Promise((resolve) => process.stdin.once('data', resolve));
process.stdin.pause();
const leased: string[] = [];
for (;;) {
  const got = await journal.lease({ owner, leaseMs: 600_000, limit: 3 });
  if (got.length === 0) break;
  leased.push(...got.map((record) => record.referenceId));
  // A pause as if working, so the processes interleave.
  await new Promise((resolve) => setTimeout(resolve, 1));
}
await journal.close();
console.log(JSON.stringify(leased));
