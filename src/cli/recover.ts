/**
 * `tap-collections-sdk recover --journal <url>`: `CollectionsClient.recover()` from a shell, after a crash.
 *
 * @module
 */
import type { PaymentRecord } from '../index.js';
import type { Command } from './command.js';
import { clientFromEnvironment, closeJournal, openJournal, parse, printable } from './shared.js';

const USAGE = `Usage: tap-collections-sdk recover --journal <url>

Checks every open payment of the journal (initiating, pending, unknown) with the service and moves it on, as
CollectionsClient.recover() does after a restart, then prints each payment it looked at and what a till shows.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL, COLLECTIONS_JOURNAL (default for --journal),
COLLECTIONS_ACCOUNT (the key's account name), COLLECTIONS_FORMER_ACCOUNTS (comma-separated identities of rotated keys).
A 404 that is not the Collections API's own answer (a wrong COLLECTIONS_BASE_URL or proxy), or a payment pushed to
another deployment (another base URL or account), closes nothing: each such payment is named on stderr, stays as it
was, and the command exits 1 with a ConfigurationError.
Exit codes: 0 done (payments the service could not be asked about stay open), 1 failed, 2 bad usage.

Options:
  --journal <url>   sqlite:<file> or postgres://user:password@host/database
  -h, --help        show this help
`;

export const recoverCommand: Command = {
  summary: 'bring the open payments of a journal to their outcome',
  usage: USAGE,
  async run(args) {
    const { values } = parse(args, { journal: { type: 'string' } }, 0);
    const journal = await openJournal(values.journal);
    try {
      const client = await clientFromEnvironment(journal);
      const { saleOutcome } = await import('../index.js');
      const records: PaymentRecord[] = await client.recover();
      for (const record of records)
        process.stdout.write(
          `${printable(record.referenceId)}  ${printable(record.state).padEnd(10)}  till: ${saleOutcome(record).padEnd(8)}  ${printable(record.statusText ?? '')}\n`.replace(
            / +\n$/,
            '\n',
          ),
        );
      const open = records.filter((record) => ['initiating', 'pending', 'unknown'].includes(record.state)).length;
      process.stdout.write(`${records.length} payment(s) checked, ${open} still open.\n`);
      return 0;
    } finally {
      await closeJournal(journal);
    }
  },
};
