/**
 * What every command of the `tap-collections-sdk` bin shares: argument parsing (Node's `util.parseArgs`), the two
 * kinds of failure and their exit codes, the client and the journal built from the environment and `--journal`.
 * The SDK, the simulator and the journal stores are imported only when a command needs them (the built bin loads
 * the package's own built entry points), so `--help` and usage errors start in milliseconds.
 *
 * @module
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { CollectionsClient, Instrumentation, PaymentJournal } from '../index.js';

/** Bad usage: exit code 2, the message and a pointer to `--help`. */
export class UsageError extends Error {}

/** The command failed: exit code 1, the message alone. */
export class Failure extends Error {}

/** The environment variable `--journal` defaults to. */
export const JOURNAL_VARIABLE = 'COLLECTIONS_JOURNAL';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parses a command's arguments strictly (`--help` never gets here: `main` answers it for every command). */
export function parse<O extends Options>(args: readonly string[], options: O, positionals: number) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs explains at length how to pass a positional that starts with '-': its first sentence is the error.
    throw new UsageError((error instanceof Error ? error.message : String(error)).split(/\.\s/)[0] ?? 'bad arguments');
  }
  if (parsed.positionals.length > positionals) throw new UsageError(`unexpected argument '${parsed.positionals[positionals]}'`);
  return parsed;
}

/** A whole number option in `[min, max]`, or `fallback` when absent. */
export function wholeNumber(value: string | undefined, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (value.trim() === '' || !Number.isInteger(number) || number < min || number > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got '${value}'`);
  return number;
}

/** The one positional a command requires. */
export function required(positionals: readonly string[], name: string): string {
  const value = positionals[0];
  if (value === undefined || value === '') throw new UsageError(`a <${name}> is required`);
  return value;
}

/** A journal URL with any password hidden, for printing. */
export function describeJournal(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

/** Opens the journal named by `--journal` (or `COLLECTIONS_JOURNAL`): `sqlite:<file>` or `postgres://…`. */
export async function openJournal(url: string | undefined): Promise<PaymentJournal> {
  const given = url ?? process.env[JOURNAL_VARIABLE];
  if (given === undefined || given === '')
    throw new UsageError(`--journal is required (sqlite:<file> or postgres://…), or set ${JOURNAL_VARIABLE}`);
  if (given.startsWith('sqlite:')) {
    const file = given.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new UsageError('--journal sqlite: needs a file name, e.g. sqlite:payments.db');
    const { SqliteJournal } = await import('../sqlite/index.js');
    return new SqliteJournal(file);
  }
  if (/^postgres(ql)?:\/\//.test(given)) {
    const { PostgresJournal } = await import('../postgres/index.js');
    return new PostgresJournal({ connectionString: given });
  }
  throw new UsageError(`--journal must be sqlite:<file> or postgres://…, got '${describeJournal(given)}'`);
}

/** A client from `COLLECTIONS_API_KEY` and `COLLECTIONS_BASE_URL`; its warnings go to stderr, one line each. */
export async function clientFromEnvironment(journal?: PaymentJournal, instrumentation?: Instrumentation): Promise<CollectionsClient> {
  const { CollectionsClient } = await import('../index.js');
  const line = (level: string) => (message: string) => process.stderr.write(`${level}: ${oneLine(message)}\n`);
  const quiet = () => undefined;
  return new CollectionsClient({
    ...(journal === undefined ? {} : { journal }),
    ...(instrumentation === undefined ? {} : { instrumentation }),
    logger: { debug: quiet, info: quiet, warn: line('warning'), error: line('error') },
  });
}

/** Closes a journal the command opened, ignoring a failure to (the command's own outcome is what counts). */
export async function closeJournal(journal: PaymentJournal | undefined): Promise<void> {
  await journal?.close?.().catch(() => undefined);
}

/** Text on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** A failure as one line for stderr: the error's class and message, never a stack, never the key. */
export function describeError(error: unknown): string {
  let text: string;
  if (error instanceof UsageError || error instanceof Failure) text = error.message;
  else if (error instanceof Error) {
    const journalCause = error.name === 'JournalError' && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    text = `${error.name}: ${error.message}${journalCause}`;
  } else text = String(error);
  // The SDK never puts the key in an error; this also covers a message from elsewhere (a driver's, the runtime's).
  const key = process.env.COLLECTIONS_API_KEY;
  if (key !== undefined && key.length >= 4) text = text.split(key).join('[redacted]');
  return oneLine(text);
}

/** `HH:MM:SS` of an ISO time, or of now. */
export function clock(at: string | number = Date.now()): string {
  return new Date(at).toISOString().slice(11, 19);
}
