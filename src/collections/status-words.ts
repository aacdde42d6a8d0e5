/**
 * The one mapping from a status word the Collections service answers to what it means for the payment:
 * `successful`, `failed`, still `pending`, or not known at all. Built once per client from its `statusWords`
 * option and used by every path that reads a status (the poll, status checks with a journal, `recover()`, the
 * settlement worker; `saleOutcome` reads the state this mapping put in the journal).
 *
 * @module
 */
import { ConfigurationError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import type { PaymentObservation } from '../journal/state-machine.js';
import { requestIdOf } from './request-id.js';
import type { CollectionStatus } from './schemas.js';

/**
 * The status words a Collections service answers, by what they mean. Each list given is added to that
 * list's defaults (a service that says `done` needs only `{ successful: ['done'] }`; `successful` keeps its meaning).
 * Words are compared without regard to case or surrounding blanks; a word may stand in one list only.
 * @group Configuration
 */
export interface StatusWordsOption {
  /** The customer paid. @defaultValue `['successful', 'success', 'completed']`, plus any given */
  successful?: readonly string[] | undefined;
  /** The payment ended without money moving. @defaultValue `['failed', 'cancelled', 'canceled', 'expired', 'declined']`, plus any given */
  failed?: readonly string[] | undefined;
  /** Not settled yet: keep checking. @defaultValue `['pending', 'processing']`, plus any given */
  pending?: readonly string[] | undefined;
}

/** What a status word means for the payment. */
export type StatusMeaning = 'successful' | 'failed' | 'pending';

/** The words every client knows, before its own `statusWords` are added. @group Configuration */
export const DEFAULT_STATUS_WORDS: { readonly [Meaning in StatusMeaning]: readonly string[] } = {
  successful: ['successful', 'success', 'completed'],
  failed: ['failed', 'cancelled', 'canceled', 'expired', 'declined'],
  pending: ['pending', 'processing'],
};

const MEANINGS: readonly StatusMeaning[] = ['successful', 'failed', 'pending'];

/** Unknown (payment, word) pairs remembered for the once-only warning; past this, the oldest are forgotten. */
const WARNED_LIMIT = 10_000;

/** A word as it is compared: trimmed, lower case. */
export function normalizeStatusWord(word: string): string {
  return word.trim().toLowerCase();
}

/** A client's status words (its option added to the defaults), and the once-per-payment-and-word warning. */
export class StatusWords {
  readonly #meaning = new Map<string, StatusMeaning>();
  /** `referenceId` + word pairs already warned about, oldest first. */
  readonly #warned = new Set<string>();

  /** @throws {@link ConfigurationError} naming `statusWords` when the option is malformed or a word is in two lists. */
  constructor(option?: unknown) {
    if (option !== undefined && (option === null || typeof option !== 'object' || Array.isArray(option))) {
      throw invalid('must be an object { successful?, failed?, pending? } of string arrays');
    }
    const given = (option ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(given)) {
      if (!(MEANINGS as readonly string[]).includes(key)) throw invalid(`has an unknown list "${key}" (successful, failed, pending)`);
    }
    for (const meaning of MEANINGS) {
      const words = given[meaning];
      if (words !== undefined && !(Array.isArray(words) && words.every((word) => typeof word === 'string' && word.trim() !== ''))) {
        throw invalid(`${meaning} must be an array of non-blank strings`);
      }
      for (const word of [...DEFAULT_STATUS_WORDS[meaning], ...((words as string[] | undefined) ?? [])]) {
        const normalized = normalizeStatusWord(word);
        const known = this.#meaning.get(normalized);
        if (known !== undefined && known !== meaning) throw invalid(`"${word}" is in both ${known} and ${meaning}`);
        this.#meaning.set(normalized, meaning);
      }
    }
  }

  /** What `word` means, or `undefined` for a word in none of the lists. */
  meaningOf(word: string): StatusMeaning | undefined {
    return this.#meaning.get(normalizeStatusWord(word));
  }

  /**
   * A status answer as an observation for the journal's state machine: the mapped state (a word in none of
   * the lists keeps the payment open, `pending`) and the service's own word in `statusText`. `requestId`
   * defaults to the request id of the response `status` was parsed from.
   */
  observation(
    status: CollectionStatus,
    requestId: string | undefined = requestIdOf(status),
  ): Extract<PaymentObservation, { kind: 'status' }> {
    return {
      kind: 'status',
      state: this.meaningOf(status.statusText) ?? 'pending',
      statusText: status.statusText,
      ...(typeof status.transactionCode === 'string' ? { transactionCode: status.transactionCode } : {}),
      ...(typeof status.reason === 'string' ? { reason: status.reason } : {}),
      ...(requestId === undefined ? {} : { requestId }),
    };
  }

  /**
   * Logs at `warn` a word in none of the lists, once per payment and word for this client (its polls, status
   * checks, `recover()` and worker together), so a service that starts answering a new word is seen in the
   * logs without a line per check. True when `word` is unknown.
   */
  warnIfUnknown(referenceId: string, word: string, logger: LevelLogger): boolean {
    if (this.meaningOf(word) !== undefined) return false;
    const key = `${referenceId}\n${normalizeStatusWord(word)}`;
    if (this.#warned.has(key)) return true;
    if (this.#warned.size >= WARNED_LIMIT) this.#warned.delete(this.#warned.values().next().value as string);
    this.#warned.add(key);
    logger.warn(
      `collection ${referenceId} answered status "${logger.redact(word)}", which statusWords does not name: the payment stays open (add the word to the client option statusWords)`,
    );
    return true;
  }
}

function invalid(problem: string): ConfigurationError {
  return new ConfigurationError(`Invalid CollectionsClient options: statusWords ${problem}`);
}
