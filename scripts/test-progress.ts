/**
 * Progress of `npm test`'s unit tests: a vitest reporter that says each test file done as a marker line, and the
 * display `scripts/test.ts` makes of those lines. On a terminal one line is rewritten in place; in a log (CI) a line
 * is printed only at each tenth of the files, so a run never grows past a screen however many files it has.
 */
import type { Reporter, TestSpecification } from 'vitest/node';

/** What starts a marker line in the reporter's output: `##progress <done>/<total>`. */
export const MARKER = '##progress ';

/** The reporter `scripts/test.ts` adds to vitest's own (`--reporter=./scripts/test-progress.ts`). */
export default class ProgressReporter implements Reporter {
  #total = 0;
  #done = 0;
  readonly #write: (text: string) => void;

  /** `write` for the tests; vitest constructs it with its reporter options, so anything else means stdout. */
  constructor(write?: unknown) {
    this.#write = typeof write === 'function' ? (write as (text: string) => void) : (text) => process.stdout.write(text);
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.#total = specifications.length;
    this.#done = 0;
    this.#write(`\n${MARKER}0/${this.#total}\n`);
  }

  onTestModuleEnd(): void {
    this.#done++;
    this.#write(`\n${MARKER}${this.#done}/${this.#total}\n`);
  }
}

/**
 * Turns a step's output into what the person running `npm test` sees while it runs: marker lines are taken out
 * of the output (kept for a failure's printout) and shown as progress.
 */
export class ProgressDisplay {
  readonly #name: string;
  readonly #tty: boolean;
  readonly #write: (text: string) => void;
  #pending = '';
  #shownTenth = 0;
  /** The output without the marker lines. */
  output = '';

  constructor(name: string, tty: boolean, write: (text: string) => void) {
    this.#name = name;
    this.#tty = tty;
    this.#write = write;
  }

  /** A chunk of the step's stderr: kept as it is (the markers are on stdout, which is read by lines). */
  keep(chunk: string): void {
    this.output += chunk;
  }

  /** A chunk of the step's stdout, as it arrives. */
  take(chunk: string): void {
    const lines = (this.#pending + chunk).split('\n');
    this.#pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith(MARKER)) this.#show(line.slice(MARKER.length));
      else this.output += `${line}\n`;
    }
  }

  /** The step ended: what is left of its output. */
  finish(): string {
    if (this.#pending.startsWith(MARKER)) this.#pending = '';
    this.output += this.#pending;
    this.#pending = '';
    // The step's own line again, for its "ok (N s)": rewritten in place, or below the progress lines of a log.
    if (this.#tty) this.#write(`\r\x1b[2K${this.#name} … `);
    else if (this.#shownTenth > 0) this.#write(`\n${this.#name} … `);
    return this.output;
  }

  #show(progress: string): void {
    const [done = 0, total = 0] = progress.split('/').map(Number);
    if (!(total > 0)) return;
    if (this.#tty) {
      this.#write(`\r\x1b[2K${this.#name} … ${done}/${total} test files`);
      return;
    }
    const tenth = Math.floor((done * 10) / total);
    if (tenth <= this.#shownTenth) return;
    this.#shownTenth = tenth;
    this.#write(`\n  ${done}/${total} test files (${tenth * 10}%)`);
  }
}
