/**
 * The `tap-collections-sdk` command: one file per command under `src/cli/`, dispatched here. Exit codes: 0 done,
 * 1 the command failed, 2 bad usage. A failure is one line on stderr (never a stack trace, never the key).
 *
 * @module
 */
import type { Command } from './command.js';
import { journalCommand } from './journal.js';
import { pollCommand } from './poll.js';
import { probeCommand } from './probe.js';
import { recoverCommand } from './recover.js';
import { describeError, UsageError } from './shared.js';
import { simulateCommand } from './simulate.js';
import { statusCommand } from './status.js';
import { workerCommand } from './worker.js';

const COMMANDS: Record<string, Command> = {
  simulate: simulateCommand,
  status: statusCommand,
  poll: pollCommand,
  recover: recoverCommand,
  journal: journalCommand,
  worker: workerCommand,
  probe: probeCommand,
};

const USAGE = `Usage: tap-collections-sdk <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join('\n')}

Run 'tap-collections-sdk <command> --help' for a command's options.
Credentials come from the environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL (and COLLECTIONS_JOURNAL for --journal).
Exit codes: 0 done, 1 the command failed, 2 bad usage.
`;

/** Runs the bin with its arguments; sets `process.exitCode`. */
export async function main(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (name === undefined) throw new UsageError(`a command is required (one of ${Object.keys(COMMANDS).join(', ')})`);
    if (command === undefined) throw new UsageError(`unknown command '${name}' (one of ${Object.keys(COMMANDS).join(', ')})`);
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(command.usage);
      return;
    }
    const code = await command.run(rest);
    if (code !== undefined) process.exitCode = code;
  } catch (error) {
    const usage = error instanceof UsageError;
    const hint = usage ? ` (see 'tap-collections-sdk ${command === undefined ? '' : `${name} `}--help')` : '';
    process.stderr.write(`tap-collections-sdk: ${describeError(error)}${hint}\n`);
    process.exitCode = usage ? 2 : 1;
  }
}
