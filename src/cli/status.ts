/**
 * `tap-collections-sdk status <referenceId>`: one status check of a collection.
 *
 * @module
 */
import type { CollectionStatus } from '../index.js';
import type { Command } from './command.js';
import {
  clientFromEnvironment,
  closeJournal,
  describeJournal,
  Failure,
  JOURNAL_VARIABLE,
  openJournal,
  parse,
  printable,
  referenceArgument,
} from './shared.js';

const USAGE = `Usage: tap-collections-sdk status <referenceId> [--journal <url>]

Asks the Collections Gateway API once how a collection stands (GET /v1/collections/check/<referenceId>) and prints
its status, transaction code and reason, one line each (control characters, line separators and bidirectional
marks in the service's text are printed as escapes: \\n, \\x1b, \\u{202e}). <referenceId> may be in any letter case.
With --journal, what the service answers is recorded in the journal, as a till's own check would record it.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL (and ${JOURNAL_VARIABLE}: the default for --journal).
A 404 is reported as "does not show a collection", never as proof that nothing was sent: the message names the
command that can decide (recover --journal <url> --wait); with --journal, a payment the journal records not-sent is
said to be so (it may be started over); a 404 that is not the Collections API's own answer (a
wrong COLLECTIONS_BASE_URL or proxy) is reported as a ConfigurationError.
Exit codes: 0 answered, 1 failed (not shown, wrong base URL, rejected key, service unreachable), 2 bad usage.

Options:
  --journal <url>   record the answer in this journal: sqlite:<file> or postgres://user:password@host/database
  -h, --help        show this help
`;

/** The command that can decide a payment the service does not show: the journal named when one was given. */
export function decidingCommand(journalUrl: string | undefined): string {
  return `tap-collections-sdk recover --journal ${journalUrl === undefined ? '<url>' : printable(describeJournal(journalUrl))} --wait`;
}

/** The lines a status prints as, aligned; every value escaped, so each is one line of visible text. */
export function statusLines(referenceId: string, status: CollectionStatus): string {
  const rows: [string, unknown][] = [
    ['referenceId', referenceId],
    ['status', status.statusText],
    ['transactionCode', status.transactionCode],
    ['reason', status.reason],
  ];
  return rows
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([name, value]) => `${name.padEnd(16)} ${printable(value)}\n`)
    .join('');
}

export const statusCommand: Command = {
  summary: "check a collection's status once",
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parse(args, { journal: { type: 'string' } }, 1);
    const referenceId = referenceArgument(positionals);
    const url = values.journal ?? (process.env[JOURNAL_VARIABLE] || undefined);
    const journal = url === undefined ? undefined : await openJournal(url);
    try {
      const client = await clientFromEnvironment(journal);
      const { NotFoundError, UnknownOutcomeError } = await import('../index.js');
      try {
        process.stdout.write(statusLines(referenceId, await client.checkStatus(referenceId)));
      } catch (error) {
        // The service's own 404 (any other is a ConfigurationError naming the base URL): not seen, which proves nothing.
        // A journal that records the payment not-sent (proven: decided by recover --wait, a worker or this check).
        if (error instanceof NotFoundError && (await journal?.get(referenceId))?.state === 'not-sent')
          throw new Failure(
            `the service does not hold a collection with referenceId ${referenceId} (HTTP 404), and the journal records it not-sent: the push never reached the service and cannot any more; the sale may be started over`,
          );
        if (error instanceof NotFoundError)
          throw new Failure(
            `the service does not show a collection with referenceId ${referenceId} (HTTP 404); this is no proof the push was never sent: do not start the sale over on it (${decidingCommand(url)} decides that)`,
          );
        // With a journal: a 404 the journal cannot yet turn into a verdict.
        if (error instanceof UnknownOutcomeError && error.decidableAt !== undefined)
          throw new Failure(
            `the service does not show a collection with referenceId ${referenceId} (HTTP 404) yet, and its push may still arrive: do not start the sale over; a verdict is possible from ${printable(error.decidableAt)} (${decidingCommand(url)} decides it then)`,
          );
        throw error;
      }
      return 0;
    } finally {
      await closeJournal(journal);
    }
  },
};
