/**
 * `npm test`'s progress through the unit tests: the reporter's marker per test file, and what a terminal and a
 * log (CI) show of it. A log gets at most a line per tenth of the files, whatever their number.
 */
import { describe, expect, it } from 'vitest';
import type { TestSpecification } from 'vitest/node';
import ProgressReporter, { ProgressDisplay } from '../../scripts/test-progress.ts';

/** What a run of `files` test files writes through the reporter. */
function reported(files: number): string {
  let text = '';
  const reporter = new ProgressReporter((chunk: string) => {
    text += chunk;
  });
  reporter.onTestRunStart(Array.from({ length: files }) as unknown as TestSpecification[]);
  for (let file = 0; file < files; file++) reporter.onTestModuleEnd();
  return text;
}

/** The display fed `text` in chunks of 7 characters (a marker split across chunks), with what vitest printed around it. */
function shown(text: string, tty: boolean) {
  let screen = '';
  const display = new ProgressDisplay('unit tests', tty, (chunk) => {
    screen += chunk;
  });
  const full = `....\n${text}.. x\n`;
  for (let at = 0; at < full.length; at += 7) display.take(full.slice(at, at + 7));
  display.keep('a warning on stderr\n');
  const output = display.finish();
  return { screen, output };
}

describe('npm test progress', () => {
  it('the reporter marks each test file done out of all', () => {
    expect(reported(3).trim().split('\n').filter(Boolean)).toEqual([
      '##progress 0/3',
      '##progress 1/3',
      '##progress 2/3',
      '##progress 3/3',
    ]);
  });

  it('in a log: at most ten progress lines for 400 files, then the step line again; the markers never reach the output', () => {
    const { screen, output } = shown(reported(400), false);
    const lines = screen.split('\n').filter(Boolean);
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('  40/400 test files (10%)');
    expect(lines[9]).toBe('  400/400 test files (100%)');
    expect(lines[10]).toBe('unit tests … ');
    expect(output).not.toContain('##progress');
    expect(output).toContain('....');
    expect(output).toContain('a warning on stderr');
  });

  it('on a terminal: one line rewritten in place with the files done', () => {
    const { screen } = shown(reported(5), true);
    expect(screen).not.toContain('\n');
    expect(screen).toContain('\r\x1b[2Kunit tests … 3/5 test files');
    expect(screen.endsWith('\r\x1b[2Kunit tests … ')).toBe(true);
  });
});
