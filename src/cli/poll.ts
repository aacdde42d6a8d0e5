/**
 * `tap-collections-sdk poll <referenceId>`: waits for a collection to settle, with a live line on a terminal and
 * one plain line per check otherwise (a log, a pipe).
 *
 * @module
 */
import type { Command } from './command.js';
import { clientFromEnvironment, clock, parse, required, wholeNumber } from './shared.js';
import { statusLines } from './status.js';

const USAGE = `Usage: tap-collections-sdk poll <referenceId> [options]

Checks a collection until it settles (successful or failed) by the SDK's polling schedule, then prints its status.
On a terminal one line shows the latest status while it waits; otherwise each check prints a line.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL.
Exit codes: 0 settled (successful or failed: the status says which), 1 not settled within --max-wait or the
check failed, 2 bad usage.

Options:
  --max-wait <ms>        give up after this long (default 120000)
  --interval <ms>        pause between checks (default: the SDK's schedule, 1500 growing to 2000)
  --initial-delay <ms>   pause before the second check (default 5000, or --interval when given)
  -h, --help             show this help
`;

const OPTIONS = {
  'max-wait': { type: 'string' },
  interval: { type: 'string' },
  'initial-delay': { type: 'string' },
} as const;

export const pollCommand: Command = {
  summary: 'wait for a collection to settle',
  usage: USAGE,
  async run(args) {
    const { values, positionals } = parse(args, OPTIONS, 1);
    const referenceId = required(positionals, 'referenceId');
    const maxWaitMs = wholeNumber(values['max-wait'], 'max-wait', 120_000, 1);
    const intervalMs = values.interval === undefined ? undefined : wholeNumber(values.interval, 'interval', 0, 0);
    const initialDelayMs = values['initial-delay'] === undefined ? undefined : wholeNumber(values['initial-delay'], 'initial-delay', 0, 0);
    const client = await clientFromEnvironment();
    const live = process.stdout.isTTY === true;
    const started = Date.now();
    let checks = 0;
    const onUpdate = (status: { statusText: string }) => {
      checks++;
      if (live) {
        const seconds = Math.round((Date.now() - started) / 1000);
        process.stdout.write(`\r\x1b[2K${status.statusText}: check ${checks}, ${seconds} s of at most ${Math.round(maxWaitMs / 1000)} s`);
      } else process.stdout.write(`${clock()} ${status.statusText} (check ${checks})\n`);
    };
    try {
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
    }
  },
};
