/**
 * (g) Bundle size against the peers: runs `scripts/size.ts` (the same check as `npm run size`) on the build just made:
 * the SDK's bundles, ky and zod/mini alone, openai-node and stripe, each bundled, minified and gzipped the same way.
 * Target: both clients at or below 0.65× openai-node.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BenchSdk } from './harness.ts';

const SIZE_SCRIPT = fileURLToPath(new URL('../scripts/size.ts', import.meta.url));

/** Runs (g): prints the size report (its exit code 1 for a missed budget is reported, not passed on). */
export async function run(_sdk: BenchSdk): Promise<void> {
  console.log('\n(g) Bundle size (npm run size), against openai-node and stripe:\n');
  const child = spawn(process.execPath, [SIZE_SCRIPT], { stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) console.log(`\n(g) the size check reported a failure (exit ${code})`);
}
