/**
 * The README's examples, run. Its first sale runs as written (only its imports are bound to the SDK's source) and
 * prints what the README says it prints; its Tap block runs against the simulator on loopback, twice in a row, as a
 * till makes sale after sale; and the sample output of `npm start` is compared with a real run of the smoke flow.
 * A block's `console` is the test's: what a till shows is what the block logs.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as sdk from '../../src/index.js';
import * as testing from '../../src/testing/index.js';
import { type RunningSimulator, startSimulator, TAGS, TAP_API_KEYS } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(`${root}/README.md`, 'utf8');

/** The first fenced block of `language` after the heading `heading`. */
function blockAfter(heading: string, language: string): string {
  const section = readme.slice(readme.indexOf(`\n${heading}\n`));
  const match = section.match(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``));
  if (!match?.[1]) throw new Error(`README.md has no ${language} block after "${heading}"`);
  return match[1];
}

type Till = { log(text: string): void };
type Snippet = (globals: { sdk: typeof sdk; process: { env: Record<string, string> }; till: Till }) => Promise<void>;

/**
 * Compiles a README block into a function: `import { a, b } from 'tap-collections-sdk'` becomes `const { a, b } = sdk`
 * (and `…/testing`, `testing`); the block's `console` is the till given.
 */
function compile(code: string): Snippet {
  const bound = code
    .replace(/import\s*{([^}]*)}\s*from\s*'tap-collections-sdk';/g, 'const {$1} = sdk;')
    .replace(/import\s*{([^}]*)}\s*from\s*'tap-collections-sdk\/testing';/g, 'const {$1} = testing;');
  expect(bound).not.toMatch(/^import /m);
  const js = ts.transpileModule(`async function snippet(sdk, testing, process, console) {\n${bound}\n}`, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.Preserve },
  }).outputText;
  const snippet = new Function(`${js}\nreturn snippet;`)() as (...globals: unknown[]) => Promise<void>;
  return (globals) => snippet(globals.sdk, testing, globals.process, globals.till);
}

const tapBlock = blockAfter('## Tap: resolve a tapped tag', 'ts');

describe('the README', () => {
  let running: RunningSimulator;
  beforeAll(async () => {
    running = await startSimulator();
  });
  afterAll(() => running.close());

  const till = () => {
    const shown: string[] = [];
    return { shown, log: (text: string) => void shown.push(text) };
  };
  const env = () => ({ TAP_API_KEY: TAP_API_KEYS.primary, TAP_BASE_URL: running.tapBaseUrl });

  it('first sale runs as written: pushed, settled successful, printed as the README shows', async () => {
    const screen = till();
    await compile(blockAfter('## A paid sale in a minute, against the simulator', 'ts'))({ sdk, process: { env: {} }, till: screen });
    const printed = blockAfter('## A paid sale in a minute, against the simulator', 'text').split('\n');
    expect(screen.shown).toHaveLength(printed.length);
    expect(screen.shown[0]).toMatch(/^pushed [0-9a-f]{8}-[0-9a-f-]{27}: pending$/);
    expect(printed[0]).toMatch(/^pushed [0-9a-f]{8}-…: pending$/);
    expect(screen.shown.slice(1)).toEqual(printed.slice(1));
  });

  it('first sale fits on the first screen: at most 15 lines of code, within the first 50 lines of the README', () => {
    const block = blockAfter('## A paid sale in a minute, against the simulator', 'ts');
    expect(block.split('\n').filter((line) => line.trim() !== '').length).toBeLessThanOrEqual(15);
    expect(readme.split('\n').slice(0, 50).join('\n')).toContain(block);
  });

  it('every ts block defines what it calls: no till, sales or client assumed from elsewhere', () => {
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)\n```/g)].map((match) => match[1] as string);
    for (const block of blocks) {
      const code = block.replace(/\/\/.*$/gm, ''); // a comment may name what it does not call
      for (const name of ['till', 'sales', 'collections', 'tap', 'journal']) {
        if (new RegExp(`\\b${name}\\.`).test(code))
          expect(block, `a block uses ${name} without defining it`).toMatch(new RegExp(`const ${name} =`));
      }
    }
  });

  it('Tap block runs twice in a row, one customer query per sale', async () => {
    const snippet = compile(tapBlock);
    const screen = till();
    await snippet({ sdk, process: { env: env() }, till: screen });
    await snippet({ sdk, process: { env: env() }, till: screen });
    expect(screen.shown).toEqual(['Charging Mwila', 'Charging Mwila']);
    expect(running.simulator.customerQueries()).toHaveLength(2);
  });

  it('Tap block tells the customer about a card the service refuses', async () => {
    expect(tapBlock).toContain(`'${TAGS.active}'`);
    for (const tag of [TAGS.inactive, TAGS.unknown, TAGS.noNumbers]) {
      const screen = till();
      await compile(tapBlock.replace(`'${TAGS.active}'`, `'${tag}'`))({ sdk, process: { env: env() }, till: screen });
      expect(screen.shown, tag).toEqual(['This card cannot pay: use another payment method']);
    }
  });

  it('Tap block stops at start-up, not at a customer, when TAP_BASE_URL is wrong', async () => {
    const screen = till();
    const wrong = { ...env(), TAP_BASE_URL: running.collectionsBaseUrl };
    const error = await compile(tapBlock)({ sdk, process: { env: wrong }, till: screen }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(sdk.ConfigurationError);
    expect(screen.shown).toEqual([]);
  });

  it('amount block checks a sale before the Tap query, and explains a refusal', async () => {
    const block = readme.match(/```ts\n(import { amountFromNgwee, checkCollectionAmount }[\s\S]*?)\n```/)?.[1];
    if (block === undefined) throw new Error('README.md has no amount block');
    const accepted = till();
    await compile(block)({ sdk, process: { env: {} }, till: accepted });
    expect(accepted.shown).toEqual([]);
    const refused = till();
    await compile(block.replace('amountFromNgwee(1112)', '11.125'))({ sdk, process: { env: {} }, till: refused });
    expect(refused.shown).toEqual([expect.stringMatching(/^Mobile money cannot take this sale: 11\.125 has more than two decimals/)]);
  });

  it("shows npm start's output as a real run prints it, timings and ids aside", async () => {
    if (!existsSync(`${root}/dist/index.js`)) throw new Error('build first: the smoke flow imports the built package (npm run build)');
    const { stdout } = await promisify(execFile)(process.execPath, ['examples/sandbox-smoke.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '' },
      timeout: 30_000,
    });
    expect(normalize(stdout)).toEqual(normalize(blockAfter('## Developing', 'text')));
  });
});

/** Timings and generated ids vary from run to run; a `pending` status line may repeat. */
function normalize(output: string): string {
  return output
    .trim()
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/\d+(\.\d+)? (ms|s)\b/g, 'N $2')
    .replace(/ +N ms {2}/g, ' N ms  ')
    .replace(/(( {2}↻ waiting[^\n]*\n)+)/g, (lines) => `${lines.split('\n')[0]}\n`);
}
