/**
 * A till that survives a crash: it pushes a payment with a journal, dies before learning the outcome (SIGKILL: no
 * clean-up runs), and the restarted till asks `recover()` what became of the last sale.
 *
 * Run: `node examples/till-restart.ts` (it starts the simulator, and runs the till as a child process it kills).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CollectionsClient, type SaleOutcome, saleOutcome } from 'tap-collections-sdk';
import { SqliteJournal } from 'tap-collections-sdk/sqlite';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, startSimulator } from 'tap-collections-sdk/testing';

const SAY: Record<SaleOutcome, string> = {
  paid: 'paid: hand over the goods',
  'not-paid': 'not paid: the customer declined or could not pay',
  'not-sent': 'not sent: start the sale over',
  unknown: 'still unknown: do not hand over the goods, do not charge again; check again shortly',
};

/** Whole seconds from now until `at` (ISO 8601), never negative: what a till shows as "checking, up to …". */
function secondsUntil(at: string): number {
  return Math.max(0, Math.ceil((Date.parse(at) - Date.now()) / 1000));
}

if (process.argv[2] === '--till') {
  // The till: one sale, then a crash right after the service accepted the push.
  const [, , , journalFile, baseUrl] = process.argv as string[];
  const collections = new CollectionsClient({
    apiKey: COLLECTIONS_API_KEYS.primary,
    baseUrl,
    journal: new SqliteJournal(journalFile as string),
    logLevel: 'off',
  });
  const { referenceId } = await collections.initiate({ productId: PRODUCTS.primary, phoneNumber: PHONES.succeeds, amount: 120 });
  console.log(`till: sale ${referenceId} pushed to the customer's phone; the till crashes now`);
  process.kill(process.pid, 'SIGKILL');
} else {
  const running = await startSimulator();
  const directory = mkdtempSync(join(tmpdir(), 'till-'));
  const journalFile = join(directory, 'payments.db');
  try {
    const till = spawn(process.execPath, [import.meta.filename, '--till', journalFile, running.collectionsBaseUrl], { stdio: 'inherit' });
    const signal = await new Promise((resolve) => till.once('exit', (_code, exitSignal) => resolve(exitSignal)));
    console.log(`till process ended by ${signal}`);

    // The restarted till: same journal file, recover() before the next sale.
    const journal = new SqliteJournal(journalFile);
    const collections = new CollectionsClient({
      apiKey: COLLECTIONS_API_KEYS.primary,
      baseUrl: running.collectionsBaseUrl,
      journal,
      logLevel: 'off',
    });
    // The customer approves on their phone meanwhile (the simulator settles after its first status check).
    const recovered = await collections.recover();
    for (const record of recovered) {
      console.log(
        `last sale ${record.referenceId} (${record.amount} ${record.currency}, ${record.phoneNumber}): ${SAY[saleOutcome(record)]}`,
      );
      // A push the crashed till sent may still reach the phone: no verdict before decidableAt. A restarted process
      // must itself watch such a record for the push window plus the grace (116 s with the defaults) before it may say
      // "not sent", however old the record is: show "checking" and call recover() again then.
      if (record.decidableAt !== undefined) console.log(`  checking, up to ${secondsUntil(record.decidableAt)} s`);
    }
    const last = recovered.at(-1);
    if (last && saleOutcome(last) === 'unknown') {
      // Still pending: wait for it; the journal records the outcome.
      await collections.pollUntilSettled(last.referenceId, { initialDelayMs: 100, intervalMs: 100 });
      const settled = await journal.get(last.referenceId);
      if (settled) console.log(`last sale ${settled.referenceId}, now ${settled.state}: ${SAY[saleOutcome(settled)]}`);
    }
    await journal.close();
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await running.close();
  }
}
