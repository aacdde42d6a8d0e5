/**
 * `tap-collections-sdk probe duplicates --yes --product-id <uuid> --phone <number>`: asks the configured Collections
 * service whether it refuses a second create for a `referenceId` it holds, the precondition of
 * `duplicateReferences: 'refused'`, by sending one collection of 1 ZMW and the very same create again.
 *
 * @module
 */
import { isDuplicateEvidence, isDuplicateReference } from '../collections/duplicate-answer.js';
import { UUID_PATTERN } from '../core/uuid.js';
import type { CollectionsClient } from '../index.js';
import type { Command } from './command.js';
import { clientFromEnvironment, Failure, parse, printable, UsageError } from './shared.js';

const USAGE = `Usage: tap-collections-sdk probe duplicates --yes --product-id <uuid> --phone <number>

Finds out whether the Collections service refuses a second create for a referenceId it already holds, which is what
the client option duplicateReferences: 'refused' relies on. Meant for the sandbox: it sends ONE real collection of
1 ZMW to <number> (the customer's phone is asked to pay it), then sends the very same create again (same referenceId,
same body), and prints what the service answered each time, whether 'refused' is safe for this service, and the
option to set. It sends no other create (it may read /health and the collection's status).

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL.
Exit codes: 0 the service answered both creates (safe or not is printed), 1 it could not be told (an answer was
lost, or did not come from the service), 2 bad usage (also without --yes).

Options:
  --yes                  confirm that one real collection of 1 ZMW may be sent
  --product-id <uuid>    the product receiving the 1 ZMW
  --phone <number>       the Zambian mobile number asked to pay it (+260…, 260… or 0…)
  -h, --help             show this help
`;

/** What one create answered, as printed: the HTTP status and the service's word or code. */
interface Answer {
  readonly line: string;
  readonly accepted: boolean;
  readonly error?: unknown;
}

async function send(client: CollectionsClient, input: Parameters<CollectionsClient['initiate']>[0]): Promise<Answer> {
  try {
    // No retry: each create is sent exactly once, so the second answer is the service's answer to a duplicate.
    const created = await client.initiate(input, { maxRetries: 0 });
    return { line: `accepted (status ${printable(created.status)})`, accepted: true };
  } catch (error) {
    const data = error as { name?: unknown; status?: unknown; code?: unknown; message?: unknown; serviceEnvelope?: unknown };
    if (typeof data.status === 'number') {
      const envelope = data.serviceEnvelope === true ? `code ${printable(data.code ?? 'none')}` : "not in the service's error envelope";
      return { line: `HTTP ${data.status} ${printable(data.name)} (${envelope})`, accepted: false, error };
    }
    return { line: `no answer: ${printable(data.name)}: ${printable(data.message)}`, accepted: false, error };
  }
}

export const probeCommand: Command = {
  summary: 'find out whether the service refuses duplicate references (sends one 1 ZMW collection)',
  usage: USAGE,
  async run(args) {
    const { positionals, values } = parse(
      args,
      { yes: { type: 'boolean' }, 'product-id': { type: 'string' }, phone: { type: 'string' } },
      1,
    );
    if (positionals[0] !== 'duplicates') throw new UsageError(`probe needs what to probe: 'duplicates'`);
    if (values.yes !== true) {
      throw new UsageError('probe duplicates sends one real collection of 1 ZMW and the same create again: confirm with --yes');
    }
    const productId = values['product-id'];
    if (productId === undefined || !UUID_PATTERN.test(productId)) throw new UsageError('--product-id must be a UUID');
    const phone = values.phone;
    if (phone === undefined || phone === '') throw new UsageError('--phone is required');
    const { normalizeZambianMobileNumber } = await import('../index.js');
    try {
      normalizeZambianMobileNumber(phone);
    } catch {
      throw new UsageError('--phone must be a Zambian mobile number (+260…, 260… or 0…, then 9 digits starting with 7 or 9)');
    }
    const client = await clientFromEnvironment();
    const referenceId = globalThis.crypto.randomUUID();
    const input = { productId, phoneNumber: phone, amount: 1, referenceId, narration: 'duplicate reference probe' };
    process.stdout.write(`referenceId      ${referenceId}\n`);
    const first = await send(client, input);
    process.stdout.write(`first create     ${first.line}\n`);
    if (!first.accepted) throw new Failure('the first create was not accepted, so the probe cannot tell; no second create was sent');
    const second = await send(client, input);
    process.stdout.write(`second create    ${second.line}\n`);
    if (second.accepted) {
      process.stdout.write(
        "verdict          NOT SAFE: the service accepted the same referenceId twice (two collections); keep duplicateReferences: 'unknown'\n",
      );
      return 0;
    }
    if (isDuplicateEvidence(second.error)) {
      process.stdout.write('verdict          safe: the service refuses a second create for a referenceId it holds\n');
      process.stdout.write("set              new CollectionsClient({ …, duplicateReferences: 'refused' })\n");
      return 0;
    }
    const why = isDuplicateReference(second.error)
      ? "the duplicate answer did not come in the service's error envelope (a proxy?)"
      : 'the second create got no duplicate answer';
    throw new Failure(`cannot tell: ${why}; keep duplicateReferences: 'unknown'`);
  },
};
