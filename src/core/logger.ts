/**
 * Leveled logging. Every line passes through {@link redactForLog}; the API key is never handed to the
 * logger in the first place (headers are not logged).
 *
 * @module
 */
import { redactForLog, type SecretRedactor } from './redact.js';

/** Where log lines go: `console` fits, as does pino, winston or any object with these four methods. @group Configuration */
export interface Logger {
  /** Every request and response line (method, path, status, duration; bodies redacted). */
  debug(message: string, ...details: unknown[]): void;
  /** Notable events. */
  info(message: string, ...details: unknown[]): void;
  /** Retries and other recoveries. */
  warn(message: string, ...details: unknown[]): void;
  /** Failures the caller must act on, e.g. an outcome that could not be established. */
  error(message: string, ...details: unknown[]): void;
}

/** How much to log: `'off'` nothing, `'error'` only failures, up to `'debug'` every attempt. @group Configuration */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** The log levels, quietest first. */
export const LOG_LEVELS: readonly LogLevel[] = ['off', 'error', 'warn', 'info', 'debug'];

const DEBUG_RANK = LOG_LEVELS.indexOf('debug');

/** The SDK's internal logger: drops lines below the level, redacts what it writes. */
export class LevelLogger {
  readonly #sink: Logger;
  readonly #rank: number;
  readonly #secrets: SecretRedactor | undefined;

  /** `secrets` scrubs the API key from every line, in case a response carried it into a message. */
  constructor(sink: Logger, level: LogLevel, secrets?: SecretRedactor) {
    this.#sink = sink;
    this.#rank = LOG_LEVELS.indexOf(level);
    this.#secrets = secrets;
  }

  #write(level: Exclude<LogLevel, 'off'>, message: string, details?: Record<string, unknown>): void {
    if (LOG_LEVELS.indexOf(level) > this.#rank) return;
    const line = `[tap-collections-sdk] ${this.#secrets ? this.#secrets.scrub(message) : message}`;
    if (details === undefined) this.#sink[level](line);
    else {
      // The key first, for the reason given in redact().
      this.#sink[level](line, redactForLog(this.#secrets ? this.#secrets.scrubValue(details) : details));
    }
  }

  /**
   * `text` as a log line would carry it: phone-shaped digit runs masked and the API key removed. The journal
   * stores text through it too, so a stored record never holds what a log line may not.
   */
  redact(text: string): string {
    // The key first: masking digit runs first would cut a key that holds one, and the key would no longer match.
    return redactForLog(this.#secrets ? this.#secrets.scrub(text) : text) as string;
  }

  /** Whether debug lines are written: callers skip building a line that would be dropped. */
  get debugEnabled(): boolean {
    return this.#rank >= DEBUG_RANK;
  }

  debug(message: string, details?: Record<string, unknown>): void {
    this.#write('debug', message, details);
  }
  info(message: string, details?: Record<string, unknown>): void {
    this.#write('info', message, details);
  }
  warn(message: string, details?: Record<string, unknown>): void {
    this.#write('warn', message, details);
  }
  error(message: string, details?: Record<string, unknown>): void {
    this.#write('error', message, details);
  }
}
