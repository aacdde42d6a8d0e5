/**
 * The shape every command of the `tap-collections-sdk` bin has. It lives apart from `main.ts` so that the commands
 * depend on it and `main.ts` depends on the commands, never the other way round (no import cycle).
 *
 * @module
 */

/** One command: its help text and what it does (resolving with the exit code, or leaving it to a signal). */
export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(args: readonly string[]): Promise<number | undefined>;
}
