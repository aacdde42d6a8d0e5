/**
 * Starts the shared-budget sender processes (test/journal/processes/budget-sender.ts, bundled) for the tests and the
 * benchmark, and reads what they say.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** What a sender reported when it ended. */
export interface SenderReport {
  readonly sent: number;
  readonly refused: number;
  readonly statements: number;
}

/** A running sender process. */
export interface Sender {
  readonly child: ChildProcess;
  /** Resolves once it runs. */
  readonly ready: Promise<void>;
  /** Its report when it ends cleanly; `undefined` when it was killed. */
  readonly done: Promise<SenderReport | undefined>;
  /** Each create's wait for its token, in ms, as reported so far, with when it was reported (`at`, this clock). */
  readonly createWaits: { readonly at: number; readonly ms: number }[];
  /** When each statement of the shared budget was sent to PostgreSQL (its clock, epoch ms), as reported so far. */
  readonly statementTimes: number[];
  /** With `BUDGET_TRACE=1`: each grant of the journal (its clock, epoch ms, and the grant as the script printed it). */
  readonly grants: { readonly at: number; readonly grant: string }[];
}

/** Starts `node <script>` with the `BUDGET_*` settings of `env` (see the script). */
export function startSender(script: string, env: Record<string, string>): Sender {
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  const createWaits: { at: number; ms: number }[] = [];
  const statementTimes: number[] = [];
  const grants: { at: number; grant: string }[] = [];
  let report: SenderReport | undefined;
  let buffered = '';
  let onReady!: () => void;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') onReady();
      else if (line.startsWith('create-wait ')) createWaits.push({ at: Date.now(), ms: Number(line.slice('create-wait '.length)) });
      else if (line.startsWith('statement ')) statementTimes.push(Number(line.slice('statement '.length)));
      else if (line.startsWith('grant ')) {
        const [at, grant] = line.slice('grant '.length).split(/ (.*)/s);
        grants.push({ at: Number(at), grant: grant ?? '' });
      } else if (line.startsWith('done ')) report = JSON.parse(line.slice('done '.length)) as SenderReport;
    }
  });
  const done = new Promise<SenderReport | undefined>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(undefined);
      else if (code === 0) resolve(report);
      else reject(new Error(`budget sender exited with ${code ?? signal}`));
    });
  });
  return { child, ready, done, createWaits, statementTimes, grants };
}
