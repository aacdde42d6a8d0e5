/**
 * The slips the deterministic simulation must catch (docs/internals/simulation.md, "Slips it catches"), as data: each a
 * plausible one-line mistake in the SDK's production code (`src/`), made by replacing `find` (which must occur exactly
 * once in `file`) with `replace`. `npm run sim:slips` makes each slip in a copy of the project and sweeps seeds until
 * one breaks an invariant; `slips.test.ts` checks that every slip still applies to today's sources, so a refactor
 * that moves the code also moves this table.
 *
 * No vitest import (scripts/slips.ts reads it outside vitest).
 */

/** One row of the table. */
export interface Slip {
  /** A short name, for `npm run sim:slips -- --only <name>`. */
  readonly name: string;
  /** The row's words in docs/internals/simulation.md's table. */
  readonly row: string;
  /** The production file the slip is made in, from the project's root. */
  readonly file: string;
  /** The exact text the slip replaces: it must occur exactly once in `file`. */
  readonly find: string;
  /** What the slip puts there: one line changed. */
  readonly replace: string;
  /** The first failing seed docs/internals/simulation.md records for the memory store (a sweep's first pass goes past it). */
  readonly seed: number;
}

export const SLIPS: readonly Slip[] = [
  {
    name: 'reference-case',
    row: '`initiate` does not lower-case `referenceId` (`client.ts`)',
    file: 'src/collections/client.ts',
    find: 'const referenceId = (parsed.referenceId ?? newReferenceId()).toLowerCase();',
    replace: 'const referenceId = parsed.referenceId ?? newReferenceId();',
    seed: 3,
  },
  {
    name: 'fingerprint-case',
    row: 'the fingerprint does not lower-case the product id',
    file: 'src/journal/fingerprint.ts',
    find: '    payment.productId.toLowerCase(),',
    replace: '    payment.productId,',
    seed: 4,
  },
  {
    name: 'send-window-short',
    row: "the client's send window one attempt short (`sendWindowMs` less one `timeoutMs`)",
    file: 'src/collections/create-collection.ts',
    find: 'return attemptWindowMs(settings.maxRetries, settings.timeoutMs);',
    replace: 'return attemptWindowMs(settings.maxRetries, settings.timeoutMs) - settings.timeoutMs;',
    seed: 7,
  },
  {
    name: 'deadline-ignored',
    row: "the transport ignores an attempt's deadline (`limitMs = timeoutMs`)",
    file: 'src/core/transport.ts',
    find: 'const limitMs = settings.deadline === undefined ? settings.timeoutMs : Math.min(settings.timeoutMs, settings.deadline - monotonicNow());',
    replace: 'const limitMs = settings.timeoutMs;',
    seed: 7,
  },
  {
    name: 'verdict-early',
    row: 'a `not-sent` verdict 1 s early (`verdictBound`)',
    file: 'src/journal/state-machine.ts',
    find: 'const waitMs = sendWindowOf(record) + Math.max(graceMs, 0);',
    replace: 'const waitMs = sendWindowOf(record) + Math.max(graceMs, 0) - 1000;',
    seed: 133,
  },
  {
    name: 'grace-ignored',
    row: 'the grace ignored (`verdictBound` waits the window alone)',
    file: 'src/journal/state-machine.ts',
    find: 'const waitMs = sendWindowOf(record) + Math.max(graceMs, 0);',
    replace: 'const waitMs = sendWindowOf(record);',
    seed: 11,
  },
  {
    name: 'not-sent-accepted',
    row: '`initiate` answers "accepted" for a `not-sent` record',
    file: 'src/collections/journaled-initiate.ts',
    // The one line moved: `case 'not-sent':` among the states the service holds.
    find: "    case 'failed':\n      return accepted(existing);\n    case 'rejected':\n    case 'not-sent':\n",
    replace: "    case 'failed':\n    case 'not-sent':\n      return accepted(existing);\n    case 'rejected':\n",
    seed: 5,
  },
  {
    name: 'raw-error-after-unknown',
    row: "a raw error instead of `UnknownOutcomeError` after an unknown outcome (`createOnce`'s last lookup not seeing it)",
    file: 'src/core/idempotent-create.ts',
    find: "    if (seen.kind === 'excluded') throw error;\n    throw unknown(transport, create.referenceId, error, absent);\n",
    replace: "    if (seen.kind === 'excluded') throw error;\n    throw error;\n",
    seed: 113,
  },
  {
    name: 'completed-failed',
    row: '`completed` read as failed',
    file: 'src/collections/status-words.ts',
    // One word in the wrong list.
    find: "  successful: ['successful', 'success', 'completed'],\n  failed: ['failed', 'cancelled', 'canceled', 'expired', 'declined'],\n",
    replace:
      "  successful: ['successful', 'success'],\n  failed: ['failed', 'cancelled', 'canceled', 'expired', 'declined', 'completed'],\n",
    seed: 11,
  },
  {
    name: 'pending-not-rescheduled',
    row: 'a worker that never checks a payment again (a pending answer not rescheduled)',
    file: 'src/collections/worker-settling.ts',
    find: '      entry.statusText = observation.statusText;\n    }\n    this.#hooks.later(entry);\n',
    replace: '      entry.statusText = observation.statusText;\n    }\n',
    seed: 3,
  },
  {
    name: 'recheck-dropped',
    row: 'a worker that drops an open payment after a check instead of rescheduling it (its lease left to run out)',
    file: 'src/collections/settlement-worker.ts',
    find: 'if (!this.#leases.park(entry, pauseMs)) this.#schedule(entry, pauseMs);',
    replace: 'if (!this.#leases.park(entry, pauseMs)) this.#leases.forget(entry);',
    seed: 3,
  },
  {
    name: 'recheck-skipped',
    row: "a verdict without its second check (`settleNotFound`'s recheck skipped)",
    file: 'src/journal/state-machine.ts',
    find: 'const seen = await recheck();',
    replace: "const seen = 'not-found' as 'not-found' | Awaited<ReturnType<RecheckStatus>>; void recheck;",
    seed: 1591,
  },
  {
    name: 'takeover-grace-0',
    row: '`initiate` taking a record over with grace 0',
    file: 'src/collections/journaled-initiate.ts',
    find: '    referenceId,\n    NOT_FOUND_GRACE_MS,\n',
    replace: '    referenceId,\n    0,\n',
    seed: 99,
  },
  {
    name: 'not-sent-after-one-attempt',
    row: '`not-sent` after one attempt whose outcome was unknown',
    file: 'src/collections/journaled-initiate.ts',
    find: "if (error instanceof UnknownOutcomeError) return { kind: 'create-unknown', error: cause };",
    replace:
      "if (error instanceof UnknownOutcomeError) return { kind: attempts > 1 ? 'create-unknown' : 'create-not-sent', error: cause };",
    seed: 5,
  },
  {
    name: 'resend-overtaken',
    row: 'a resend after being overtaken (the failed write before a resend ignored)',
    file: 'src/collections/journaled-initiate.ts',
    find: 'if (!touched.applied || touched.record === undefined) throw new OvertakenError(referenceId, touched.record);',
    replace: 'if (touched.record === undefined) throw new OvertakenError(referenceId, touched.record);',
    seed: 31,
  },
  {
    name: 'bare-404-evidence',
    row: 'a bare 404 taken as evidence (`NotFoundEvidence.judge` accepts every 404)',
    file: 'src/collections/not-found-evidence.ts',
    find: '  async judge(error: NotFoundError): Promise<void> {\n',
    replace: '  async judge(error: NotFoundError): Promise<void> {\n    if (error.status === 404) return;\n',
    seed: 252,
  },
  {
    name: 'watch-ignored',
    row: "the monotonic watch ignored (the journal's clock alone)",
    file: 'src/journal/state-machine.ts',
    find: 'if (journalNow >= byJournal && watchedMs >= waitMs) return',
    replace: 'if (journalNow >= byJournal) return',
    seed: 9,
  },
  {
    name: 'missing-window-zero',
    row: 'a missing window read as 0 (`sendWindowOf`)',
    file: 'src/journal/journal.ts',
    find: "return typeof window === 'number' && window >= 0 ? window : UNKNOWN_SEND_WINDOW_MS;",
    replace: "return typeof window === 'number' && window >= 0 ? window : 0;",
    seed: 65,
  },
  {
    name: 'deadline-from-ack',
    row: "an attempt's deadline counted from the write's acknowledgement (the rule before issue 27's fix)",
    file: 'src/collections/journaled-initiate.ts',
    find: 'return issuedAt + call.attemptTimeoutMs;',
    replace: 'return monotonicNow() + call.attemptTimeoutMs;',
    seed: 7,
  },
  {
    name: 'contradiction-told-once',
    row: 'a contradiction told only to the reader that marked it (`throwIfContradicted` silent once the record is marked)',
    file: 'src/collections/journal-binding.ts',
    find: '  if (advanced.contradiction === undefined) return;',
    replace: '  if (advanced.contradiction === undefined || !advanced.applied) return;',
    seed: 98,
  },
  {
    name: 'contradiction-unmarked',
    row: "a contradiction never marked on the record (the state machine's mark dropped)",
    file: 'src/journal/state-machine.ts',
    find: "  return { kind: 'contradiction', change: marked ? undefined : markContradiction(record, answer, by), statusText: answer.statusText };",
    replace: "  return { kind: 'contradiction', change: undefined, statusText: answer.statusText };",
    seed: 45,
  },
  {
    name: 'window-read-short',
    row: "a record's window read 1 s short (`sendWindowOf`, the rule the oracle no longer shares)",
    file: 'src/journal/journal.ts',
    find: "return typeof window === 'number' && window >= 0 ? window : UNKNOWN_SEND_WINDOW_MS;",
    replace: "return typeof window === 'number' && window >= 0 ? window - 1_000 : UNKNOWN_SEND_WINDOW_MS;",
    seed: 133,
  },
  {
    name: 'watch-wall-clock',
    row: 'the watch on the wall clock (`RecordWatch` reads `Date.now()`)',
    file: 'src/journal/record-watch.ts',
    find: '    const now = performance.now();',
    replace: '    const now = Date.now();',
    seed: 100,
  },
  {
    name: 'watch-not-restarted',
    row: 'a watch not restarted by a newer version (`RecordWatch` keyed by reference alone)',
    file: 'src/journal/record-watch.ts',
    find: '    if (seen !== undefined && seen.version === record.version && seen.updatedAt === record.updatedAt) return Math.max(0, now - seen.at);',
    replace: '    if (seen !== undefined) return Math.max(0, now - seen.at);',
    seed: 25,
  },
  {
    name: 'journal-measure-process-clock',
    row: "the journal's measure on the deciding process's clock (`settleNotFound` reads `Date.now()`)",
    file: 'src/journal/state-machine.ts',
    find: '    const bound = verdictBound(record, watchedMs, Date.parse(await journal.now()), graceMs);',
    replace: '    const bound = verdictBound(record, watchedMs, Date.now(), graceMs);',
    seed: 7,
  },
  {
    name: 'budget-spends-to-lease-end',
    row: "a budget holder spending its share up to its lease's end instead of a window before it",
    file: 'src/collections/shared-budget.ts',
    find: '    this.#validUntil = sentAt + grantedFor - SHARED_WINDOW_MS;',
    replace: '    this.#validUntil = sentAt + grantedFor;',
    seed: 9,
  },
  {
    name: 'deployment-check-skipped',
    row: "the deployment check skipped (`ClientDeployment.mismatch` accepts every record's deployment)",
    file: 'src/collections/deployment.ts',
    find: '    if (theirs === undefined) return undefined;',
    replace: '    if (theirs === undefined || theirs !== undefined) return undefined;',
    seed: 16,
  },
  {
    name: 'resend-past-duplicate-memory',
    row: "a resend after `duplicateMemoryMs` (the record's age not compared with it)",
    file: 'src/collections/resend.ts',
    find: '  if (!Number.isFinite(ageMs) || ageMs >= rule.duplicateMemoryMs) return undefined;',
    replace: '  if (!Number.isFinite(ageMs)) return undefined;',
    seed: 393,
  },
  {
    name: 'bare-duplicate-evidence',
    row: "a duplicate answer without the service's envelope taken as evidence (`isDuplicateEvidence`)",
    file: 'src/collections/duplicate-answer.ts',
    find: '  return isDuplicateReference(error) && (error as AnswerData).serviceEnvelope === true;',
    replace: '  return isDuplicateReference(error);',
    seed: 24,
  },
];

/** Thrown when a slip's text is not in its file exactly once. */
export class SlipMovedError extends Error {
  constructor(slip: Slip, occurrences: number) {
    super(
      `the slip no longer applies: the code moved (slip "${slip.name}": its text occurs ${occurrences} times in ${slip.file}, not once)`,
    );
    this.name = 'SlipMovedError';
  }
}

/** How many times `find` occurs in `text` (non-overlapping). */
function occurrences(text: string, find: string): number {
  return find === '' ? 0 : text.split(find).length - 1;
}

/** `source` (the text of `slip.file`) with the slip made. @throws {@link SlipMovedError} unless its text occurs exactly once. */
export function applySlip(source: string, slip: Slip): string {
  const count = occurrences(source, slip.find);
  if (count !== 1) throw new SlipMovedError(slip, count);
  return source.replace(slip.find, () => slip.replace);
}
