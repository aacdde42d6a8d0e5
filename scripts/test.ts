/**
 * `npm test`: typecheck, lint, build, unit tests, package checks, API site, in that order, stopping at the first
 * failure. A passing run prints one line per step and ends with vitest's summary; a failing step prints its whole
 * output. The unit tests show the test files done out of all: on a terminal in place, in a log a line per tenth.
 * `npm test -- --verbose` prints every step's output as it runs.
 */
import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { ProgressDisplay } from './test-progress.ts';

const verbose = process.argv.includes('--verbose');

const steps: ReadonlyArray<{ name: string; script: string; args?: readonly string[] }> = [
  { name: 'typecheck', script: 'typecheck' },
  { name: 'lint', script: 'lint' },
  { name: 'build', script: 'build' },
  // The dot reporter: one character per test; failures are printed in full, and the summary closes the run.
  // With the progress reporter: a marker line per test file done (scripts/test-progress.ts), shown as progress.
  { name: 'unit tests', script: 'test:unit', args: ['--reporter=dot', '--reporter=./scripts/test-progress.ts'] },
  { name: 'package checks', script: 'check:package' },
  { name: 'API site', script: 'docs' },
];

/** Runs `npm run <script>`; resolves with its exit code and its output (stdout and stderr, interleaved, progress taken out). */
function runScript(script: string, args: readonly string[], display: ProgressDisplay): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', script, ...(args.length > 0 ? ['--', ...args] : [])], {
      stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => display.take(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => display.keep(chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output: display.finish() }));
  });
}

let summary = '';
for (const step of steps) {
  const started = performance.now();
  if (!verbose) process.stdout.write(`${step.name} … `);
  const display = new ProgressDisplay(step.name, process.stdout.isTTY === true, (text) => process.stdout.write(text));
  const { code, output } = await runScript(step.script, step.args ?? [], display);
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  if (code !== 0) {
    if (!verbose) process.stdout.write(`failed (${seconds} s)\n\n${output}\n`);
    process.stdout.write(`npm test: ${step.name} failed (npm run ${step.script}, exit ${code})\n`);
    process.exit(code);
  }
  if (!verbose) process.stdout.write(`ok (${seconds} s)\n`);
  if (step.script === 'test:unit') {
    // vitest's closing block (Test Files, Tests, Type Errors, Duration): the run's summary, printed last.
    summary = stripVTControlCharacters(output)
      .split('\n')
      .filter((line) => /^\s*(Test Files|Tests|Type Errors|Duration)\s/.test(line))
      .join('\n');
  }
}
if (summary) process.stdout.write(`\n${summary}\n`);
