/** Several processes share one SqliteJournal file: a lease is never handed to two of them. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { SqliteJournal } from '../../src/sqlite/index.js';
import { useProcessScript } from '../helpers/process-script.js';

function start(file: string, owner: string) {
  const child = spawn(process.execPath, [script.path, file, owner], { stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8');
  const ready = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('ready')) resolve();
    }),
  );
  const done = new Promise<string[]>((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(stdout.slice(stdout.indexOf('ready') + 5)) as string[]) : reject(new Error(`exit ${code}`)),
    ),
  );
  return { ready, done, go: () => child.stdin.end('go\n') };
}
const script = useProcessScript(new URL('./processes/lease-worker.ts', import.meta.url), 'lease-worker');

it('four processes leasing 300 records at once: each record goes to exactly one of them', async () => {
  const file = join(script.dir, 'shared.db');
  const journal = new SqliteJournal(file);
  for (let index = 0; index < 300; index++) {
    await journal.insert({
      referenceId: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
      state: index % 3 === 0 ? 'unknown' : 'pending',
      productId: '3f6b1f84-3d3c-4a4e-9d59-0d4b3f1c2a10',
      amount: 10,
      currency: 'ZMW',
      phoneNumber: '260*******56',
      fingerprint: 'f',
    });
  }
  await journal.close();
  const workers = ['a', 'b', 'c', 'd'].map((owner) => start(file, owner));
  await Promise.all(workers.map((item) => item.ready));
  for (const item of workers) item.go();
  const perProcess = await Promise.all(workers.map((item) => item.done));
  const all = perProcess.flat();
  expect(all).toHaveLength(300);
  expect(new Set(all).size).toBe(300);
  // More than one process took part (the test would prove nothing if one took everything before the others started).
  expect(perProcess.filter((ids) => ids.length > 0).length).toBeGreaterThan(1);
});
