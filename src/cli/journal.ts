/**
 * `tap-collections-sdk journal list|show`: what a support agent reads: the payments of a journal, and one payment's
 * record with its history as a timeline.
 *
 * @module
 */
import { maskNumbersInText } from '../core/mobile-number-grammar.js';
import type { PaymentEvent, PaymentRecord, PaymentState } from '../index.js';
import type { Command } from './command.js';
import { closeJournal, Failure, openJournal, parse, printable, referenceArgument, UsageError, wholeNumber } from './shared.js';

const USAGE = `Usage: tap-collections-sdk journal list [--state <state>]... [--contradictions] [--limit <n>] [--journal <url>]
       tap-collections-sdk journal show <referenceId> [--journal <url>]

list   the payments of the journal, oldest first: created, reference, state, amount, phone (masked), last status
show   one payment: its record, then every change of its state as a timeline

States: initiating, pending, unknown (open); rejected, not-sent, successful, failed (final).
Environment: COLLECTIONS_JOURNAL (default for --journal). No API key is needed: only the journal is read.
Every value is printed as one line of visible text: control characters, line separators and bidirectional marks
are written as escapes (\\n, \\x1b, \\u{202e}); a backslash as \\\\. A <referenceId> is accepted in any letter case.
Exit codes: 0 done, 1 failed (no such payment, journal unreadable), 2 bad usage.

Options:
  --journal <url>   sqlite:<file> or postgres://user:password@host/database
  --state <state>   only payments in this state (repeatable)
  --contradictions  only closed payments the service contradicted (kept in their state, marked: a person must look)
  --limit <n>       at most this many payments
  -h, --help        show this help
`;

const STATES: readonly PaymentState[] = ['initiating', 'pending', 'unknown', 'rejected', 'not-sent', 'successful', 'failed'];

/** `2026-01-31 12:00:05.123Z`: a time a person reads, still UTC and exact. */
function time(iso: string): string {
  return iso.replace('T', ' ');
}

/** A phone number as stored is masked already; a store that kept a full number (in any spelling) is masked here. */
function phone(value: string): string {
  return maskNumbersInText(value);
}

/** A value as printed: escaped by the one rule every command uses. */
function cell(value: string | number | undefined): string {
  return value === undefined ? '' : printable(value);
}

/** A value printed inside quotes: escaped, and a quote in it escaped too, so it cannot close the quotes early. */
function quoted(value: string): string {
  return `"${printable(value).replaceAll('"', '\\"')}"`;
}

function amount(record: PaymentRecord): string {
  return printable(`${typeof record.amount === 'number' ? record.amount.toFixed(2) : record.amount} ${record.currency}`);
}

function listLines(records: readonly PaymentRecord[], contradictions = false): string {
  if (records.length === 0) return contradictions ? 'No contradicted payments.\n' : 'No payments.\n';
  const rows = records.map((record) => [
    cell(time(record.createdAt).slice(0, 19)),
    cell(record.referenceId),
    cell(record.state),
    amount(record),
    cell(phone(record.phoneNumber)),
    cell(record.statusText),
    ...(contradictions ? [cell(record.contradiction?.statusText)] : []),
  ]);
  const header = ['CREATED (UTC)', 'REFERENCE', 'STATE', 'AMOUNT', 'PHONE', 'LAST STATUS', ...(contradictions ? ['SERVICE SAYS'] : [])];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  const format = (row: readonly string[]) =>
    `${row
      .map((cell, column) => cell.padEnd(widths[column] as number))
      .join('  ')
      .trimEnd()}\n`;
  return `${format(header)}${rows.map(format).join('')}${records.length} payment(s).\n`;
}

/** The record and its timeline, as a support agent reads them. */
export function showLines(record: PaymentRecord, history: readonly PaymentEvent[] | undefined): string {
  const field = (name: string, value: string | undefined) =>
    value === undefined || value === '' ? '' : `  ${name.padEnd(17)} ${printable(value)}\n`;
  let text = `Payment ${printable(record.referenceId)}\n`;
  text += field('state', record.state);
  text += `  ${'amount'.padEnd(17)} ${amount(record)}\n`;
  text += field('phone', phone(record.phoneNumber));
  text += field('product', record.productId);
  text += field('narration', record.narration);
  text += field('created', time(record.createdAt));
  text += field('last changed', time(record.updatedAt));
  text += field('last status', record.statusText);
  text += field('transaction code', record.transactionCode);
  text += field('reason', record.reason);
  // Where the push went: the base URL and account identity a client must have to settle it (or declare, formerAccounts).
  text += field('pushed to', record.deployment?.baseUrl);
  text += field(
    'account',
    record.deployment?.account === '' ? 'not read (the key could not be read; nothing was sent under it)' : record.deployment?.account,
  );
  if (record.error !== undefined)
    text += field('error', [record.error.name, record.error.status, record.error.code].filter((part) => part !== undefined).join(' '));
  const { contradiction } = record;
  if (contradiction !== undefined) {
    const request = contradiction.requestId === undefined ? '' : `, request ${printable(contradiction.requestId)}`;
    const answered = `the service answered ${quoted(contradiction.statusText)} at ${printable(time(contradiction.at))}`;
    text += `  ${'CONTRADICTED'.padEnd(17)} ${answered}${request}, by ${printable(contradiction.by)}\n`;
  }
  if (history === undefined) return `${text}\nHistory: this journal keeps no history (only the current state is shown).\n`;
  if (history.length === 0) return `${text}\nHistory: no changes recorded.\n`;
  text += '\nHistory (oldest first, UTC):\n';
  const changes = history.map((event) => `${event.from === null ? '(new)' : printable(event.from)} → ${printable(event.to)}`);
  const width = Math.max(...changes.map((change) => change.length));
  history.forEach((event, index) => {
    const details = [
      event.statusText === undefined ? undefined : `status ${quoted(event.statusText)}`,
      event.transactionCode === undefined ? undefined : `transaction ${printable(event.transactionCode)}`,
      event.requestId === undefined ? undefined : `request ${printable(event.requestId)}`,
      `by ${printable(event.by)}`,
    ].filter((part) => part !== undefined);
    text += `  ${printable(time(event.at))}  ${(changes[index] as string).padEnd(width)}  ${details.join(', ')}\n`;
  });
  return text;
}

async function list(args: readonly string[]) {
  const { values } = parse(
    args,
    {
      journal: { type: 'string' },
      state: { type: 'string', multiple: true },
      limit: { type: 'string' },
      contradictions: { type: 'boolean' },
    },
    0,
  );
  const contradictions = values.contradictions === true;
  const states = values.state ?? [];
  for (const state of states)
    if (!STATES.includes(state as PaymentState)) throw new UsageError(`--state must be one of ${STATES.join(', ')}, got '${state}'`);
  const limit = values.limit === undefined ? undefined : wholeNumber(values.limit, 'limit', 0, 1);
  const opened = await openJournal(values.journal);
  // Loaded as every command loads the SDK: the bin imports nothing of it before a command needs it.
  const { isOpenPaymentState } = await import('../index.js');
  try {
    // Only a final record carries a contradiction; the limit counts the records shown.
    const wanted = states.length === 0 ? undefined : (states as PaymentState[]);
    // The store filters (an index of the marked records): memory follows the contradictions, not the journal's size.
    // The filter below only guards against a store of a user's own that ignores the option.
    const records = contradictions
      ? (
          await opened.list({
            states: (wanted ?? STATES).filter((state) => !isOpenPaymentState(state)),
            contradictions: true,
            ...(limit === undefined ? {} : { limit }),
          })
        ).filter((record) => record.contradiction !== undefined)
      : await opened.list({ ...(wanted === undefined ? {} : { states: wanted }), ...(limit === undefined ? {} : { limit }) });
    process.stdout.write(listLines(records, contradictions));
  } finally {
    await closeJournal(opened);
  }
}

async function show(args: readonly string[]) {
  const { values, positionals } = parse(args, { journal: { type: 'string' } }, 1);
  const referenceId = referenceArgument(positionals);
  const journal = await openJournal(values.journal);
  try {
    const record = await journal.get(referenceId);
    if (record === undefined) throw new Failure(`no payment with referenceId ${referenceId} in the journal`);
    const history = await journal.history(referenceId);
    process.stdout.write(showLines(record, history));
  } finally {
    await closeJournal(journal);
  }
}

export const journalCommand: Command = {
  summary: "list a journal's payments, or show one payment's history",
  usage: USAGE,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub === 'list') await list(rest);
    else if (sub === 'show') await show(rest);
    else throw new UsageError(sub === undefined ? 'journal needs list or show' : `unknown journal command '${sub}' (list or show)`);
    return 0;
  },
};
