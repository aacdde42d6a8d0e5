/**
 * `npx node bench/chaos.ts [creates] [seed]`: the chaos soak over thousands of creates (default 2 000),
 * against the fault server of the test suite (a real `node:http` server on 127.0.0.1): seeded random
 * faults on every route, reads lagging behind creates by up to 600 ms, creates processed after the client
 * gave up, a server enforcing uniqueness. Prints the table of docs/reliability.md; exits 1 unless the
 * three zeros hold (double records, resolved without a record, definite errors with a record stored).
 *
 * It runs the SDK's sources and the test suite's fault server under Node's type stripping; those import
 * each other as `.js` (the compiler's convention), so a resolve hook maps a missing `.js` to its `.ts`.
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { ChaosOptions, ChaosReport } from '../test/faults/chaos.ts';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
      const asWritten = new URL(specifier, context.parentURL);
      const source = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
      if (!existsSync(fileURLToPath(asWritten)) && existsSync(fileURLToPath(source))) return nextResolve(source.href, context);
    }
    return nextResolve(specifier, context);
  },
});

/** The defaults of the soak: 2 000 creates, the seed of the table in docs/reliability.md. */
export const CHAOS_DEFAULTS = { creates: 2_000, seed: 20_261_123, concurrency: 64, maxLagMs: 600, timeoutMs: 1_000 } as const;

/** Runs the soak and returns its report and markdown table; `ok` when the three zeros hold. */
export async function runChaosBenchmark(options: Partial<ChaosOptions> = {}): Promise<{ report: ChaosReport; table: string; ok: boolean }> {
  const { runChaos, chaosTable } = await import('../test/faults/chaos.ts');
  const settings: ChaosOptions = { ...CHAOS_DEFAULTS, ...options };
  const report = await runChaos(settings);
  const ok =
    report.doubleRecords === 0 &&
    report.resolvedWithoutRecord === 0 &&
    report.definiteErrorsWithRecord === 0 &&
    report.wrongRecord === 0 &&
    report.untypedErrors === 0;
  return { report, table: chaosTable(report, settings), ok };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [creates, seed] = process.argv.slice(2).map(Number);
  const { table, ok } = await runChaosBenchmark({
    ...(Number.isInteger(creates) ? { creates } : {}),
    ...(Number.isInteger(seed) ? { seed } : {}),
  });
  console.log(table);
  console.log(ok ? 'PASS: the three zeros hold' : 'FAIL: a create was misreported');
  process.exitCode = ok ? 0 : 1;
}
