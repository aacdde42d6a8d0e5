/**
 * `tap-collections-sdk recover --journal <url> [--wait]`: `CollectionsClient.recover()` from a shell, after a crash.
 * With `--wait` the one process keeps the watch it started at its first read and checks again until every payment
 * a verdict can be reached on has one: a new process each run would start that watch over, every run.
 *
 * @module
 */
import type { CollectionsClient, PaymentJournal, PaymentRecord } from '../index.js';
import type { Command } from './command.js';
import { clientFromEnvironment, clock, closeJournal, Failure, openJournal, parse, printable, UsageError, wholeNumber } from './shared.js';

const USAGE = `Usage: tap-collections-sdk recover --journal <url> [--wait [--max-wait <ms>]] [--not-found-grace-ms <ms>]

Checks every open payment of the journal (initiating, pending, unknown) with the service and moves it on, as
CollectionsClient.recover() does after a restart, then prints each payment it looked at and what a till shows.

A payment the service does not hold (initiating or unknown) becomes not-sent only once this process has itself
watched it, unchanged, for its sender's attempt window plus the grace (1 min 56 s with the defaults): one run
starts that watch, so a single run after a restart often leaves such payments unknown. --wait keeps this process
watching and checks again when each becomes decidable, printing a line per pass, until every such payment is
decided or has passed the time from which it could be (then it settles by the service's answer, or a person looks).
Pending payments are the service's to settle: a worker or poll follows them.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL, COLLECTIONS_JOURNAL (default for --journal),
COLLECTIONS_ACCOUNT (the key's account name), COLLECTIONS_FORMER_ACCOUNTS (comma-separated identities of rotated keys).
A 404 that is not the Collections API's own answer (a wrong COLLECTIONS_BASE_URL or proxy), or a payment pushed to
another deployment (another base URL or account), closes nothing: each such payment is named on stderr, stays as it
was, and the command exits 1 with a ConfigurationError.
Exit codes: 0 done (payments the service could not be asked about stay open), 1 failed, or --wait ended by
--max-wait or SIGINT/SIGTERM with payments still undecided, 2 bad usage.

Options:
  --journal <url>             sqlite:<file> or postgres://user:password@host/database
  --wait                      keep watching until every payment that can be decided is (see above)
  --max-wait <ms>             give up waiting after this long (default 600000; with --wait only)
  --not-found-grace-ms <ms>   the grace after the attempt window before not-sent (default 10000; never below the window)
  -h, --help                  show this help
`;

const OPTIONS = {
  journal: { type: 'string' },
  wait: { type: 'boolean' },
  'max-wait': { type: 'string' },
  'not-found-grace-ms': { type: 'string' },
} as const;

/** A pass again at least this often while waiting: a check the service did not answer is retried, not waited out. */
const RECHECK_MS = 15_000;

/** The payments a verdict may still be reached on by waiting: initiating or unknown, decidable later than `now`. */
function undecided(records: readonly PaymentRecord[], now: number): PaymentRecord[] {
  return records.filter(
    (record) =>
      (record.state === 'initiating' || record.state === 'unknown') &&
      record.decidableAt !== undefined &&
      Date.parse(record.decidableAt) > now,
  );
}

/** One line per pass: how many are open, and until when the undecided ones wait (UTC). */
function progressLine(pass: number, records: readonly PaymentRecord[], waiting: readonly PaymentRecord[]): string {
  const open = records.filter((record) => ['initiating', 'pending', 'unknown'].includes(record.state)).length;
  const last = waiting.map((record) => Date.parse(record.decidableAt as string)).reduce((a, b) => Math.max(a, b), 0);
  const until = waiting.length === 0 ? '' : `; ${waiting.length} wait(s) for a verdict, the last from ${clock(last)} UTC`;
  return `${clock()} pass ${pass}: ${records.length} payment(s) checked, ${open} still open${until}\n`;
}

/** How long to wait before the next pass: until the first payment becomes decidable, at most {@link RECHECK_MS}. */
function pauseMs(waiting: readonly PaymentRecord[], now: number): number {
  const first = Math.min(...waiting.map((record) => Date.parse(record.decidableAt as string)));
  // A little after, so the journal's clock has passed it too when the pass reads it.
  return Math.max(100, Math.min(RECHECK_MS, first - now + 250));
}

/** The pause, cut short by the signal. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Passes of `recover()` by one client (so one watch) until nothing is left to wait for, the bound, or a signal.
 * Resolves with the last pass's records and whether it ended with payments still waiting.
 */
async function recoverWaiting(
  client: CollectionsClient,
  journal: PaymentJournal,
  options: { notFoundGraceMs: number; maxWaitMs: number },
): Promise<{ records: PaymentRecord[]; stopped?: string }> {
  const abort = new AbortController();
  const deadline = performance.now() + options.maxWaitMs;
  const timer = setTimeout(() => abort.abort('--max-wait'), options.maxWaitMs);
  const onSignal = (signal: NodeJS.Signals) => abort.abort(signal);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let records: PaymentRecord[] = [];
  try {
    for (let pass = 1; ; pass++) {
      try {
        records = await client.recover({ notFoundGraceMs: options.notFoundGraceMs, signal: abort.signal });
      } catch (error) {
        if (!abort.signal.aborted) throw error;
      }
      if (abort.signal.aborted) return { records, stopped: String(abort.signal.reason) };
      const now = Date.parse(await journal.now());
      const waiting = undecided(records, now);
      process.stdout.write(progressLine(pass, records, waiting));
      if (waiting.length === 0) return { records };
      await pause(Math.min(pauseMs(waiting, now), Math.max(0, deadline - performance.now())), abort.signal);
      if (abort.signal.aborted) return { records, stopped: String(abort.signal.reason) };
    }
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

export const recoverCommand: Command = {
  summary: 'bring the open payments of a journal to their outcome',
  usage: USAGE,
  async run(args) {
    const { values } = parse(args, OPTIONS, 0);
    const wait = values.wait === true;
    if (!wait && values['max-wait'] !== undefined) throw new UsageError('--max-wait needs --wait');
    const maxWaitMs = wholeNumber(values['max-wait'], 'max-wait', 600_000, 1);
    const notFoundGraceMs = wholeNumber(values['not-found-grace-ms'], 'not-found-grace-ms', 10_000, 0);
    const journal = await openJournal(values.journal);
    try {
      const client = await clientFromEnvironment(journal);
      const { saleOutcome, isOpenPaymentState } = await import('../index.js');
      const { records, stopped } = wait
        ? await recoverWaiting(client, journal, { notFoundGraceMs, maxWaitMs })
        : { records: await client.recover({ notFoundGraceMs }), stopped: undefined };
      for (const record of records)
        process.stdout.write(
          `${printable(record.referenceId)}  ${printable(record.state).padEnd(10)}  till: ${saleOutcome(record).padEnd(8)}  ${printable(record.statusText ?? '')}\n`.replace(
            / +\n$/,
            '\n',
          ),
        );
      const open = records.filter((record) => isOpenPaymentState(record.state)).length;
      process.stdout.write(`${records.length} payment(s) checked, ${open} still open.\n`);
      if (stopped !== undefined) {
        const left = undecided(records, Number.NEGATIVE_INFINITY).length;
        throw new Failure(`stopped waiting (${stopped}) with ${left} payment(s) not yet decidable; run recover --wait again`);
      }
      return 0;
    } finally {
      await closeJournal(journal);
    }
  },
};
