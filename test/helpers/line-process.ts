/**
 * A child process the crash tests drive by its output: its stdout as lines, a wait for a line, and its exit. The
 * tills print a line at each step, so a test can kill one at a chosen moment.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** How a line process ended. */
export interface LineProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** A running process, read line by line. */
export interface LineProcess {
  readonly child: ChildProcess;
  /** Every complete line written to stdout so far. */
  readonly lines: string[];
  /** Resolves once a line matches `pattern`; rejects if the process ends first. */
  waitFor(pattern: RegExp): Promise<void>;
  readonly exited: Promise<LineProcessExit>;
  /** Writes one line to its stdin (only when started with `input: true`). */
  send(line: string): void;
}

/** Starts `process.execPath` with `args`; `name` names it in the error of a `waitFor` that cannot be met. */
export function startLineProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  name: string,
  options: { readonly input?: boolean } = {},
): LineProcess {
  const child = spawn(process.execPath, args, { stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'], env });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    const complete = partial.split('\n');
    partial = complete.pop() ?? '';
    lines.push(...complete);
    for (const wake of waiters) wake();
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // 'close', not 'exit': at 'exit' the child's stdout may still hold lines not read yet (on a loaded machine, the line
  // of the sale a kill interrupted), and every line it wrote is part of what the test judges.
  const exited = new Promise<LineProcessExit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stderr })));
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (lines.some((line) => pattern.test(line))) {
          waiters.delete(check);
          resolve();
        } else if (child.exitCode !== null || child.signalCode !== null) {
          waiters.delete(check);
          reject(new Error(`${name} ended before ${pattern}:\n${lines.join('\n')}\n${stderr}`));
        }
      };
      waiters.add(check);
      child.once('exit', check);
      check();
    });
  const send = (line: string) => {
    if (child.stdin === null) throw new Error(`${name} was started without input`);
    child.stdin.write(`${line}\n`);
  };
  return { child, lines, waitFor, exited, send };
}
