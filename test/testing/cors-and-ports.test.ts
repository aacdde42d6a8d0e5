/**
 * The loopback server's CORS answers (off unless asked, for a browser page on another origin) and the bin's
 * refusal of ports that fetch will not connect to. The bin is bundled from the sources with esbuild.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COLLECTIONS_API_KEYS, type RunningSimulator, startSimulator } from '../../src/testing/index.js';
import { useProcessScript } from '../helpers/process-script.js';

const run = promisify(execFile);
const ORIGIN = 'http://127.0.0.1:5173';
const cli = useProcessScript(new URL('../../src/cli/bin.ts', import.meta.url), 'cli', ['msw']);

const preflight = (running: RunningSimulator) =>
  fetch(`${running.collectionsBaseUrl}/health`, {
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  });
const health = (running: RunningSimulator) =>
  fetch(`${running.collectionsBaseUrl}/health`, { headers: { origin: ORIGIN, authorization: `Bearer ${COLLECTIONS_API_KEYS.primary}` } });

describe('CORS on the loopback server', () => {
  it('is off by default: no preflight answer, no allow-origin header', async () => {
    const running = await startSimulator();
    try {
      const answer = await preflight(running);
      expect(answer.status).not.toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      expect((await health(running)).headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await running.close();
    }
  });

  it('when asked, answers preflights and lets the origin read answers and their request id', async () => {
    const running = await startSimulator({ cors: true });
    try {
      const answer = await preflight(running);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(answer.headers.get('access-control-allow-headers')).toBe('authorization');
      expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
      const ok = await health(running);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(ok.headers.get('access-control-expose-headers')).toContain('x-request-id');
    } finally {
      await running.close();
    }
  });
});

describe('the bin', () => {
  it.each(['6000', '1', '6666'])("refuses --port %s (on fetch's blocked-port list) with exit code 2", async (port) => {
    const failure = (await run(process.execPath, [cli.path, 'simulate', '--port', port, '--quiet']).catch((error: unknown) => error)) as {
      code: number;
      stderr: string;
    };
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain(`--port ${port} is on fetch's blocked-port list`);
  });

  it('documents --cors', async () => {
    const { stdout } = await run(process.execPath, [cli.path, 'simulate', '--help']);
    expect(stdout).toMatch(/--cors\s+answer cross-origin requests/);
  });
});
