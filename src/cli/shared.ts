/**
 * What every command of the `tap-collections-sdk` bin shares: argument parsing (Node's `util.parseArgs`), the two
 * kinds of failure and their exit codes, the client and the journal built from the environment and `--journal`.
 * The SDK, the simulator and the journal stores are imported only when a command needs them (the built bin loads
 * the package's own built entry points), so `--help` and usage errors start in milliseconds.
 *
 * @module
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UUID_PATTERN } from '../core/uuid.js';
import type { CollectionsClient, CollectionsClientOptions, Instrumentation, PaymentJournal } from '../index.js';

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

/**
 * The `<referenceId>` a command requires: a UUID in any letter case, answered in the one form the SDK and every
 * journal keep (lower case), so `journal show` finds a reference copied in capitals.
 */
export function referenceArgument(positionals: readonly string[]): string {
  const value = required(positionals, 'referenceId');
  if (!UUID_PATTERN.test(value)) throw new UsageError(`<referenceId> must be a UUID, got '${value}'`);
  return value.toLowerCase();
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

/** The password a journal URL carries, as written and decoded (what a driver's message could echo). */
function passwordsOf(url: string): string[] {
  const written = /^postgres(?:ql)?:\/\/[^:/@]*:([^@]*)@/.exec(url)?.[1];
  if (written === undefined || written === '') return [];
  let decoded = written;
  try {
    decoded = decodeURIComponent(written);
  } catch {
    // Not percent-encoded: as written is all there is.
  }
  return [...new Set([written, decoded])].filter((password) => password.length > 0);
}

/**
 * A failure of the journal itself (the store cannot be reached or read), as one line that names the journal without
 * its password: `journal postgres://app:***@db/payments: connect ECONNREFUSED 127.0.0.1:5432`.
 */
export function journalFailure(url: string, error: unknown): Failure {
  if (error instanceof Failure || error instanceof UsageError) return error;
  const name = error instanceof Error ? error.name : undefined;
  let text = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.message === '' && error.cause instanceof Error) text = error.cause.message;
  for (const password of passwordsOf(url)) text = text.split(password).join('***');
  const kind = name === undefined || name === 'Error' ? '' : `${name}: `;
  return new Failure(`journal ${describeJournal(url)} failed: ${kind}${text}`);
}

/**
 * The journal with every failure of its own methods turned into {@link journalFailure}: a driver's error reaches the
 * operator as one line naming the journal, never the raw driver text with the connection string in it.
 */
function reportingFailures(journal: PaymentJournal, url: string): PaymentJournal {
  return new Proxy(journal, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        let result: unknown;
        try {
          result = value.apply(target, args);
        } catch (error) {
          throw journalFailure(url, error);
        }
        return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(journalFailure(url, error))) : result;
      };
    },
  });
}

/**
 * What a store says (a row that cannot be read, skipped) as one `warning:` line like the client's. A pooled
 * connection that broke is not a line of its own: every call it fails is reported by the command that made it (the
 * worker says once that the journal is not answering, with the cause, and once that it is back).
 */
const STORE_LOGGER = {
  warn(message: string, ...details: unknown[]) {
    if (/connection broke/.test(message)) return;
    process.stderr.write(`warning: ${printable(oneLine(`${message}${causeOf(details)}`))}\n`);
  },
};

/** Opens the journal named by `--journal` (or `COLLECTIONS_JOURNAL`): `sqlite:<file>` or `postgres://…`. */
export async function openJournal(url: string | undefined): Promise<PaymentJournal> {
  const given = url ?? process.env[JOURNAL_VARIABLE];
  if (given === undefined || given === '')
    throw new UsageError(`--journal is required (sqlite:<file> or postgres://…), or set ${JOURNAL_VARIABLE}`);
  if (given.startsWith('sqlite:')) {
    const file = given.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new UsageError('--journal sqlite: needs a file name, e.g. sqlite:payments.db');
    try {
      const { SqliteJournal } = await import('../sqlite/index.js');
      return reportingFailures(new SqliteJournal(file, { logger: STORE_LOGGER }), given);
    } catch (error) {
      throw journalFailure(given, error);
    }
  }
  if (/^postgres(ql)?:\/\//.test(given)) {
    try {
      const { PostgresJournal } = await import('../postgres/index.js');
      return reportingFailures(new PostgresJournal({ connectionString: given, logger: STORE_LOGGER }), given);
    } catch (error) {
      throw journalFailure(given, error);
    }
  }
  throw new UsageError(`--journal must be sqlite:<file> or postgres://…, got '${describeJournal(given)}'`);
}

/** The environment variable naming the API key's account (the client option `account`). */
export const ACCOUNT_VARIABLE = 'COLLECTIONS_ACCOUNT';
/** The environment variable listing former account identities, comma-separated (the client option `formerAccounts`). */
export const FORMER_ACCOUNTS_VARIABLE = 'COLLECTIONS_FORMER_ACCOUNTS';

/**
 * A client from `COLLECTIONS_API_KEY` and `COLLECTIONS_BASE_URL` (and `COLLECTIONS_ACCOUNT`,
 * `COLLECTIONS_FORMER_ACCOUNTS` when set), with the key's shared budget when given (default: none); its warnings go to
 * stderr, one line each.
 */

export async function clientFromEnvironment(
  journal?: PaymentJournal,
  instrumentation?: Instrumentation,
  keyBudget: Pick<CollectionsClientOptions, 'requestsPerSecond' | 'budgetLeaseMs'> = {},
): Promise<CollectionsClient> {
  const { CollectionsClient } = await import('../index.js');
  const line =
    (level: string) =>
    (message: string, ...details: unknown[]) =>
      process.stderr.write(`${level}: ${printable(oneLine(`${message}${causeOf(details)}`))}\n`);
  const quiet = () => undefined;
  // The account a journal's records are tied to (see CollectionsClientOptions.account / formerAccounts).
  const account = process.env[ACCOUNT_VARIABLE];
  const former = process.env[FORMER_ACCOUNTS_VARIABLE];
  return new CollectionsClient({
    ...(journal === undefined ? {} : { journal }),
    ...(instrumentation === undefined ? {} : { instrumentation }),
    ...keyBudget,
    ...(account === undefined || account === '' ? {} : { account }),
    ...(former === undefined || former.trim() === ''
      ? {}
      : {
          formerAccounts: former
            .split(',')
            .map((entry) => entry.trim())
            .filter((entry) => entry !== ''),
        }),
    logger: { debug: quiet, info: quiet, warn: line('warning'), error: line('error') },
  });
}

/**
 * The payment and the cause the SDK gives a line in its details (`{ referenceId, reason }`, already redacted by the SDK's
 * logger), as the line's end: without it "could not lease open payments" would not say why.
 */
function causeOf(details: readonly unknown[]): string {
  const { reason, referenceId } = (details[0] ?? {}) as { reason?: unknown; referenceId?: unknown };
  // A skipped row is found again by its reference: an operator needs it to look at that row.
  const which = typeof referenceId === 'string' && referenceId !== '' ? ` (referenceId ${referenceId})` : '';
  return `${which}${typeof reason === 'string' && reason !== '' ? `: ${reason}` : ''}`;
}

/** Closes a journal the command opened, ignoring a failure to (the command's own outcome is what counts). */
export async function closeJournal(journal: PaymentJournal | undefined): Promise<void> {
  await journal?.close?.().catch(() => undefined);
}

/** Text on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * What a terminal would act on rather than show: C0 and C1 controls and DEL (line breaks, escape sequences that move
 * the cursor, erase lines or retitle the window), the line and paragraph separators, and the bidirectional marks,
 * embeddings, overrides and isolates that reorder what follows; and the backslash, so an escape stays unambiguous.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\\]/g;
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };

/**
 * The one escaping every command applies to every value it prints from a record, a history, the service or the
 * command line: each character of {@link UNPRINTABLE} written as an escape (`\n`, `\r`, `\t`, `\\`, `\x1b`,
 * `\u{202e}`), so a value is always exactly one line of visible text and cannot forge, erase or reorder another.
 */
export function printable(value: unknown): string {
  return String(value).replace(
    UNPRINTABLE,
    (character) =>
      NAMED_ESCAPES[character] ??
      (character.charCodeAt(0) < 0x100
        ? `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`
        : `\\u{${character.charCodeAt(0).toString(16)}}`),
  );
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
  return printable(oneLine(text));
}

/** `HH:MM:SS` of an ISO time, or of now. */
export function clock(at: string | number = Date.now()): string {
  return new Date(at).toISOString().slice(11, 19);
}
