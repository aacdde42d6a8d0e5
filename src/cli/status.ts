/**
 * `tap-collections-sdk status <referenceId>`: one status check of a collection.
 *
 * @module
 */
import type { CollectionStatus } from '../index.js';
import type { Command } from './command.js';
import { clientFromEnvironment, Failure, parse, required } from './shared.js';

const USAGE = `Usage: tap-collections-sdk status <referenceId>

Asks the Collections Gateway API once how a collection stands (GET /v1/collections/check/<referenceId>) and prints
its status, transaction code and reason.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL.
A 404 is reported as "does not show a collection", never as proof that nothing was sent; a 404 that is not the
Collections API's own answer (a wrong COLLECTIONS_BASE_URL or proxy) is reported as a ConfigurationError.
Exit codes: 0 answered, 1 failed (not shown, wrong base URL, rejected key, service unreachable), 2 bad usage.

Options:
  -h, --help   show this help
`;

/** The lines a status prints as, aligned. */
export function statusLines(referenceId: string, status: CollectionStatus): string {
  const rows: [string, unknown][] = [
    ['referenceId', referenceId],
    ['status', status.statusText],
    ['transactionCode', status.transactionCode],
    ['reason', status.reason],
  ];
  return rows
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([name, value]) => `${name.padEnd(16)} ${String(value)}\n`)
    .join('');
}

export const statusCommand: Command = {
  summary: "check a collection's status once",
  usage: USAGE,
  async run(args) {
    const { positionals } = parse(args, {}, 1);
    const referenceId = required(positionals, 'referenceId');
    const client = await clientFromEnvironment();
    const { NotFoundError } = await import('../index.js');
    try {
      process.stdout.write(statusLines(referenceId, await client.checkStatus(referenceId)));
    } catch (error) {
      // The service's own 404 (any other is a ConfigurationError naming the base URL): not seen, which proves nothing.
      if (error instanceof NotFoundError)
        throw new Failure(
          `the service does not show a collection with referenceId ${referenceId} (HTTP 404); this is no proof the push was never sent: do not start the sale over on it (recover --journal decides that)`,
        );
      throw error;
    }
    return 0;
  },
};
