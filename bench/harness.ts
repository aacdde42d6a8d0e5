/**
 * What every benchmark shares: the built SDK, a seeded PRNG, percentiles, the table printer, and a way to run part of a
 * benchmark in a child process (its own core, or node flags such as `--expose-gc`).
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// Types come from the sources (so the benchmarks typecheck before a build); the code run is the build.
import type * as Sdk from '../src/index.js';

/** The SDK's main entry, as the benchmarks load it from `dist/`. */
export type BenchSdk = typeof Sdk;

/** The API key every benchmark's client sends (to servers and fakes that accept any). */
export const API_KEY = 'bench-key-0123456789';

/** The built main entry, `dist/index.js` (what ships). */
export async function loadSdk(): Promise<BenchSdk> {
  return (await import(new URL('../dist/index.js', import.meta.url).href)) as BenchSdk;
}

/** A small seeded PRNG, so every run simulates the same collections (one copy, shared with the tests). */
export { seededRandom } from '../test/helpers/seeded-random.ts';

/** Nearest-rank percentile (`p` in 0..1) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

/** The median of unsorted values. */
export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** Prints a titled table: the first column left-aligned text, the others right-aligned figures. */
export function printTable(title: string, headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ');
  console.log(`\n${title}\n`);
  console.log(line(headers));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
}

/** `PASS` or `FAIL`. */
/**
 * The order the variants run in during `round`: rotated each round and reversed every other one, so no variant
 * always runs first or right after the same neighbour (a GC-heavy one, say).
 */
export function roundOrder(variantCount: number, round: number): number[] {
  const order = Array.from({ length: variantCount }, (_, index) => (index + round) % variantCount);
  return round % 2 === 1 ? order.reverse() : order;
}

export const passFail = (pass: boolean) => (pass ? 'PASS' : 'FAIL');

const CHILD_ENTRY = fileURLToPath(new URL('./child.ts', import.meta.url));

/**
 * Starts `node [nodeArgs] bench/child.ts <module> <exportName>`: a child process that calls `exportName()` of the module
 * (a file URL, e.g. `new URL('./scale.ts', import.meta.url)`).
 */
export function spawnBenchChild(
  module: URL,
  exportName: string,
  options: { nodeArgs?: readonly string[]; stdio: StdioOptions },
): ChildProcess {
  return spawn(process.execPath, [...(options.nodeArgs ?? []), CHILD_ENTRY, module.href, exportName], { stdio: options.stdio });
}

/** The Tap create both per-call benchmarks send: a customer query for 25 ZMW on the seeded tag. */
export const CUSTOMER_QUERIES_PATH = '/v1/tap/partners/customer-queries';
/** The `referenceId` of the canned responses. */
export const BENCH_REFERENCE_ID = '7d3f2c1e-4b5a-4c6d-8e7f-901234567890';

/** A valid customer-query input (a `referenceId` is added per call). */
export const CUSTOMER_QUERY_INPUT = {
  merchantId: 'MERCHANT-0001',
  merchantName: 'Bench Store',
  terminalId: 'TERMINAL-0001',
  amount: 25,
  tagId: 'TAG-0001',
} as const;

/** A 201 body valid for `SubmitCustomerQueryResponseSchema` (src/tap/schemas.ts). */
export const CUSTOMER_QUERY_RESPONSE = JSON.stringify({
  success: true,
  data: {
    id: 'cq_0001',
    partner: { partnerId: 'partner-0001', partnerName: 'Bench Partner' },
    customer: { firstName: 'Chanda', lastName: 'Mwale' },
    tag: {
      tagId: 'TAG-0001',
      tagNumber: '0001-0001',
      mobileNumbers: [{ operator: 'airtel_money', mobileNumber: '260977123456', status: 'active' }],
      status: 'active',
    },
    transaction: {
      merchantId: 'MERCHANT-0001',
      merchantName: 'Bench Store',
      terminalId: 'TERMINAL-0001',
      referenceId: BENCH_REFERENCE_ID,
      currency: 'ZMW',
      amount: 25,
      serviceCharge: 0.5,
      status: 'pending',
    },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  },
});
