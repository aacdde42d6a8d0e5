/**
 * The status check's 404 rule where the journal fails: `checkStatus` with a journal that answers the two reads made
 * before the 404 is judged and then cannot be read. Through the public client (msw in process).
 */
import { HttpResponse, http } from 'msw';
import { expect, it } from 'vitest';
import { type Logger, MemoryJournal, NotFoundError } from '../../src/index.js';
import { CHECK_URL, collectionsClient, HEALTH_URL, json, REFERENCE_ID, rejectionOf } from '../helpers/collections.js';
import { useMswServer } from '../helpers/msw.js';

const { server } = useMswServer();

it('a journal that fails while a 404 is judged: the 404 stands as no proof, said at warn with the reason, nothing closed', async () => {
  class FailingAfterGuard extends MemoryJournal {
    reads = 0;
    override async get(referenceId: string) {
      if (++this.reads > 2) throw new Error('database gone');
      return super.get(referenceId);
    }
  }
  const journal = new FailingAfterGuard();
  const warnings: [string, unknown][] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message, details) => warnings.push([message, details]),
    error: () => undefined,
  };
  server.use(
    http.get(CHECK_URL, () => json(404, { success: false, code: 'E_NOT_FOUND', message: 'Collection not found' })),
    http.get(HEALTH_URL, () => HttpResponse.json({ status: 'ok' })),
  );
  const error = await rejectionOf(collectionsClient({ journal, logger, logLevel: 'warn' }).checkStatus(REFERENCE_ID));
  expect(error).toBeInstanceOf(NotFoundError);
  expect((error as Error).message).toMatch(/no proof the push was never sent/);
  expect(warnings).toEqual([
    [
      `[tap-collections-sdk] payment journal: could not judge a 404 for referenceId ${REFERENCE_ID}`,
      { reason: 'Payment journal: could not record a payment the service does not hold: database gone' },
    ],
  ]);
});
