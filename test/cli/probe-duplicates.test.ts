/**
 * `tap-collections-sdk probe duplicates`, run in process through the bin's `main` against real loopback services:
 * the simulator (which refuses a duplicate reference) and a service that stores duplicates.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { COLLECTIONS_API_KEYS, createSimulator, PHONES, PRODUCTS, type RunningSimulator, startSimulator } from '../../src/testing/index.ts';
import { type LoopbackServer, startLoopbackServer } from '../helpers/http-server.ts';

let simulator: RunningSimulator;
let storing: LoopbackServer;
beforeAll(async () => {
  simulator = await startSimulator({ simulator: createSimulator() });
  storing = await startLoopbackServer();
  // A service that stores every create, whatever its referenceId.
  storing.handle((_request, response, body) => {
    const { referenceId } = JSON.parse(body) as { referenceId: string };
    response
      .writeHead(202, { 'content-type': 'application/json' })
      .end(JSON.stringify({ success: true, data: { referenceId, status: 'pending' } }));
  });
});
afterAll(async () => {
  await simulator?.close();
  await storing?.close();
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs the bin's main with `args` against `baseUrl`: its exit code and what it wrote. */
async function probe(baseUrl: string, args: string[]) {
  vi.stubEnv('COLLECTIONS_API_KEY', COLLECTIONS_API_KEYS.primary);
  vi.stubEnv('COLLECTIONS_BASE_URL', baseUrl);
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  await main(['probe', ...args]);
  const code = process.exitCode ?? 0;
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

const ARGS = ['duplicates', '--product-id', PRODUCTS.primary, '--phone', PHONES.succeeds];

describe('probe duplicates', () => {
  it('refuses to run without --yes (exit 2), sending nothing', async () => {
    const before = simulator.simulator.collections().length;
    const run = await probe(simulator.collectionsBaseUrl, ARGS);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/confirm with --yes/);
    expect(simulator.simulator.collections()).toHaveLength(before);
  });

  it('answers --help', async () => {
    const run = await probe(simulator.collectionsBaseUrl, ['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Usage: tap-collections-sdk probe duplicates --yes --product-id <uuid> --phone <number>/);
  });

  it('against the simulator: the second create is refused, so refused is safe (one collection of 1 ZMW)', async () => {
    simulator.simulator.reset();
    const run = await probe(simulator.collectionsBaseUrl, [...ARGS, '--yes']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^first create {5}accepted \(status pending\)$/m);
    expect(run.stdout).toMatch(/^second create {4}HTTP 409 ConflictError \(code E_DUPLICATE_REFERENCE\)$/m);
    expect(run.stdout).toMatch(/^verdict {10}safe: /m);
    expect(run.stdout).toContain("duplicateReferences: 'refused'");
    const collections = simulator.simulator.collections();
    expect(collections).toHaveLength(1);
    expect(collections[0]?.amount).toBe(1);
  });

  it('against a service that stores duplicates: not safe, and it says so (the two creates are the only ones sent)', async () => {
    const run = await probe(storing.url, [...ARGS, '--yes']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^verdict {10}NOT SAFE: /m);
    expect(run.stdout).not.toContain('set ');
    const creates = storing.requests.filter((request) => request.method === 'POST');
    expect(creates).toHaveLength(2);
    expect(creates[1]?.body).toBe(creates[0]?.body);
  });
});
