/**
 * `tap-collections-sdk worker`: a settlement worker as a deployable process, with `/healthz` and `/metrics`, stopping
 * cleanly (leases released) on SIGTERM and SIGINT.
 *
 * @module
 */
import { createServer, type Server } from 'node:http';
import { MIN_BUDGET_LEASE_MS } from '../collections/shared-budget.js';
import type { PaymentJournal, SettlementWorker } from '../index.js';
import type { Command } from './command.js';
import { WorkerMetrics } from './metrics.js';
import {
  clientFromEnvironment,
  closeJournal,
  describeError,
  describeJournal,
  Failure,
  JOURNAL_VARIABLE,
  openJournal,
  parse,
  printable,
  UsageError,
  wholeNumber,
} from './shared.js';

const USAGE = `Usage: tap-collections-sdk worker --journal <url> [options]

Runs a settlement worker: it settles every open payment of the journal (those other processes wrote too) at most
--rps status checks per second, sharing the journal with other workers through leases. Stops on SIGTERM or SIGINT,
releasing its leases.

Environment: COLLECTIONS_API_KEY, COLLECTIONS_BASE_URL, ${JOURNAL_VARIABLE} (default for --journal),
COLLECTIONS_ACCOUNT (the key's account name), COLLECTIONS_FORMER_ACCOUNTS (comma-separated identities of rotated keys).
Exit codes: 0 stopped by a signal, 1 could not start or stopped by a failure, 2 bad usage.

Options:
  --journal <url>           sqlite:<file> or postgres://user:password@host/database
  --rps <n>                 status checks per second, all payments together (default 10)
  --key-rps <n|adaptive>    the API key's budget, shared through the journal by every process that sets it on
                            this key and journal (tills and other workers too): requests per second in any 1 s
                            window, or adaptive to learn an untold limit; --rps stays this worker's cap within it
                            (default: none, only --rps holds)
  --budget-lease-ms <ms>    how long the journal counts this process's share of --key-rps without a renewal: a
                            worker that dies leaves its share to the others within it (default 10000, at least 5000)
  --port <n>                serve GET /healthz and GET /metrics on this port (0 picks one; default: no server)
  --host <host>             interface for --port (default 0.0.0.0)
  --initial-delay-ms <ms>   first check of a payment this long after its creation (default 5000)
  --interval-ms <ms>        pause after the first check, growing 1.5x per check (default 1500)
  --scan-interval-ms <ms>   how often to look for open payments nobody holds (default 1000)
  -h, --help                show this help

GET /healthz answers 200 once the journal answers a read (each probe reads it), 503 before, while it does not,
while stopping, and while the service's 404s cannot be trusted (a 404 that is not the Collections API's own
answer: COLLECTIONS_BASE_URL or a proxy is wrong; no payment is closed on a 404 then, and the worker logs it at
error), and while it meets payments pushed to another deployment (another base URL or account: they are left open
and never asked about here; logged at error naming both base URLs). GET /metrics answers the Prometheus text format (tap_collections_worker_*).
`;

const OPTIONS = {
  journal: { type: 'string' },
  rps: { type: 'string' },
  'key-rps': { type: 'string' },
  'budget-lease-ms': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'initial-delay-ms': { type: 'string' },
  'interval-ms': { type: 'string' },
  'scan-interval-ms': { type: 'string' },
} as const;

/** What a /healthz probe looks up: the nil UUID, never a payment's reference. */
const PROBE_REFERENCE = '00000000-0000-0000-0000-000000000000';

/** How long a /healthz probe waits for the journal. */
const PROBE_MS = 2000;

/** `--key-rps` and `--budget-lease-ms` as client options (checked here, so bad usage exits 2 before the journal opens). */
function keyBudgetOptions(
  keyRps: string | undefined,
  leaseMs: string | undefined,
): { requestsPerSecond?: number | 'adaptive'; budgetLeaseMs?: number } {
  if (keyRps === undefined) {
    if (leaseMs !== undefined) throw new UsageError('--budget-lease-ms needs --key-rps');
    return {};
  }
  const requestsPerSecond = keyRps === 'adaptive' ? 'adaptive' : wholeNumber(keyRps, 'key-rps', 0, 1, 100_000);
  return {
    requestsPerSecond,
    ...(leaseMs === undefined ? {} : { budgetLeaseMs: wholeNumber(leaseMs, 'budget-lease-ms', 0, MIN_BUDGET_LEASE_MS) }),
  };
}

export const workerCommand: Command = {
  summary: 'run a settlement worker, with /healthz and /metrics',
  usage: USAGE,
  async run(args) {
    const { values } = parse(args, OPTIONS, 0);
    const requestsPerSecond = wholeNumber(values.rps, 'rps', 10, 1, 10_000);
    const keyBudget = keyBudgetOptions(values['key-rps'], values['budget-lease-ms']);
    const port = values.port === undefined ? undefined : wholeNumber(values.port, 'port', 0, 0, 65_535);
    const schedule = {
      ...(values['initial-delay-ms'] === undefined
        ? {}
        : { initialDelayMs: wholeNumber(values['initial-delay-ms'], 'initial-delay-ms', 0) }),
      ...(values['interval-ms'] === undefined ? {} : { intervalMs: wholeNumber(values['interval-ms'], 'interval-ms', 0) }),
      ...(values['scan-interval-ms'] === undefined
        ? {}
        : { scanIntervalMs: wholeNumber(values['scan-interval-ms'], 'scan-interval-ms', 0, 1) }),
    };
    const url = values.journal ?? process.env[JOURNAL_VARIABLE];
    const journal = await openJournal(url);
    const metrics = new WorkerMetrics();
    let server: Server | undefined;
    try {
      const client = await clientFromEnvironment(journal, metrics.instrumentation, keyBudget);
      let stopping = false;
      let worker: SettlementWorker | undefined;
      if (port !== undefined) {
        server = serve(
          journal,
          metrics,
          () => stopping,
          () => worker?.configurationProblem,
        );
        await listen(server, port, values.host ?? '0.0.0.0');
      }
      worker = client.startSettlementWorker({ requestsPerSecond, ...schedule });
      const address = server?.address();
      const where = address && typeof address === 'object' ? `; /healthz and /metrics on port ${address.port}` : '';
      process.stdout.write(
        `Settlement worker ${printable(worker.workerId)} started: journal ${printable(describeJournal(url as string))}, ${requestsPerSecond} checks/s${keyBudget.requestsPerSecond === undefined ? '' : `, within the key's shared budget of ${keyBudget.requestsPerSecond === 'adaptive' ? 'an adaptive rate' : `${keyBudget.requestsPerSecond}/s`}`}${where}.\n`,
      );
      const running = worker;
      const stop = (signal: NodeJS.Signals) => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        stopping = true;
        process.stdout.write(`Stopping (${signal}): releasing leases…\n`);
        void running.stop();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await worker.done;
      process.stdout.write('Settlement worker stopped; its leases are released.\n');
      return 0;
    } finally {
      await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
      server?.closeAllConnections();
      await closeJournal(journal);
    }
  },
};

function serve(journal: PaymentJournal, metrics: WorkerMetrics, stopping: () => boolean, problem: () => Error | undefined): Server {
  return createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return answer(405, 'method not allowed\n');
    if (path === '/healthz') {
      if (stopping()) return answer(503, 'stopping\n');
      const misdirected = problem();
      if (misdirected !== undefined) return answer(503, `unhealthy: ${describeError(misdirected)}\n`);
      void probe(journal).then(
        () => answer(200, 'ok\n'),
        (error: unknown) => answer(503, `journal not answering: ${describeError(error)}\n`),
      );
      return;
    }
    if (path === '/metrics') {
      void metrics.render().then((text) => answer(200, text, 'text/plain; version=0.0.4; charset=utf-8'));
      return;
    }
    answer(404, 'not found (GET /healthz, GET /metrics)\n');
  });
}

/** One cheap read of the journal, bounded in time. */
async function probe(journal: PaymentJournal): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Failure(`no answer within ${PROBE_MS} ms`)), PROBE_MS);
  });
  try {
    // A read by primary key of an id no payment has: the same cost at 10 records and at a million.
    await Promise.race([journal.get(PROBE_REFERENCE), late]);
  } finally {
    clearTimeout(timer);
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(new Failure(`could not listen on ${host}:${port}: ${error.message}`)));
    server.listen(port, host, () => resolve());
  });
}
