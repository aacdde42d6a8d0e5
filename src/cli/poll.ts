/**
 * `tap-collections-sdk poll <referenceId>`: waits for a collection to settle, with a live line on a terminal (updated
 * at every check) and one plain line per change of status otherwise (a log, a pipe): a two-minute wait is a few lines
 * in a log, not one per check, and each line still says how many checks it took.
 *
 * @module
 */
import type { Instrumentation } from '../index.js';
import type { Command } from './command.js';
import {
  clientFromEnvironment,
  clock,
  closeJournal,
  JOURNAL_VARIABLE,
  openJournal,
  parse,
  printable,
  referenceArgument,
  wholeNumber,
} from './shared.js';
import { statusLines } from './status.js';

const USAGE = `Usage: tap-collections-sdk poll <referenceId> [options]

Checks a collection until it settles (successful or failed) by the SDK's polling schedule, then prints its status.
On a terminal one line shows the latest status, the checks made and the time waited, updated at every check.
Otherwise (a log, a pipe) a line is printed each time the status changes, with the check that saw it:
  12:00:05 pending (check 1)
  12:00:14 successful (check 6)
The service's text is printed escaped (control characters, line separators and bidirectional marks as \\n, \\x1b,
\\u{202e}). <referenceId> may be in any letter case.

With --journal, every status the poll sees is recorded in the journal (the final one included), as a till's own
poll would record it.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL (and ${JOURNAL_VARIABLE}: the default for --journal).
Exit codes: 0 settled (successful or failed: the status says which), 1 not settled within --max-wait or the
check failed, 2 bad usage.

Options:
  --max-wait <ms>        give up after this long (default 120000)
  --interval <ms>        pause between checks (default: the SDK's schedule, 1500 growing to 2000)
  --initial-delay <ms>   pause before the second check (default 5000, or --interval when given)
  --journal <url>        record what the poll sees in this journal: sqlite:<file> or postgres://…
  -h, --help             show this help
`;

const OPTIONS = {
  'max-wait': { type: 'string' },
  interval: { type: 'string' },
  'initial-delay': { type: 'string' },
  journal: { type: 'string' },
} as const;

export const pollCommand: Command = {
  summary: 'wait for a collection to settle',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parse(args, OPTIONS, 1);
    const referenceId = referenceArgument(positionals);
    const maxWaitMs = wholeNumber(values['max-wait'], 'max-wait', 120_000, 1);
    const intervalMs = values.interval === undefined ? undefined : wholeNumber(values.interval, 'interval', 0, 0);
    const initialDelayMs = values['initial-delay'] === undefined ? undefined : wholeNumber(values['initial-delay'], 'initial-delay', 0, 0);
    const live = process.stdout.isTTY === true;
    const started = Date.now();
    // Every status request the poll makes (a retried one counts each attempt): the hook only counts and passes on.
    let checks = 0;
    let latest = 'waiting';
    const showLive = () => {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`\r\x1b[2K${latest}: check ${checks}, ${seconds} s of at most ${Math.round(maxWaitMs / 1000)} s`);
    };
    const counting: Instrumentation = {
      attempt: async (_info, run) => {
        checks++;
        try {
          return await run();
        } finally {
          if (live) showLive();
        }
      },
    };
    const url = values.journal ?? (process.env[JOURNAL_VARIABLE] || undefined);
    const journal = url === undefined ? undefined : await openJournal(url);
    // pollUntilSettled calls onUpdate when the status changes (and for the first answer).
    const onUpdate = (status: { statusText: string }) => {
      latest = printable(status.statusText);
      if (live) showLive();
      else process.stdout.write(`${clock()} ${latest} (check ${checks})\n`);
    };
    try {
      const client = await clientFromEnvironment(journal, counting);
      const status = await client.pollUntilSettled(referenceId, {
        maxWaitMs,
        onUpdate,
        ...(intervalMs === undefined ? {} : { intervalMs, maxIntervalMs: Math.max(intervalMs, 2000) }),
        ...(initialDelayMs === undefined ? {} : { initialDelayMs }),
      });
      if (live) process.stdout.write('\r\x1b[2K');
      process.stdout.write(statusLines(referenceId, status));
      return 0;
    } finally {
      if (live) process.stdout.write('\r\x1b[2K');
      await closeJournal(journal);
    }
  },
};
