/**
 * `tap-collections-sdk simulate`: the loopback simulator of both services, in a process of its own. Its code (the
 * `tap-collections-sdk/testing` entry) is loaded only by this command.
 *
 * @module
 */
import { isBlockedPort } from '../core/connection-failure.js';
import type { ReceivedRequest, RunningSimulator } from '../testing/index.js';
import type { Command } from './command.js';
import { Failure, parse, UsageError } from './shared.js';

const USAGE = `Usage: tap-collections-sdk simulate [options]

Runs an in-memory simulator of the Tap Partner API and the Collections Gateway API on loopback.

Options:
  --port <n>            port to listen on (default 4010; 0 picks a free one)
  --host <host>         interface to listen on (default 127.0.0.1)
  --pending-polls <n>   status checks answered 'pending' before a collection settles (default 1; Infinity: never)
  --pending-ms <ms>     milliseconds after which a collection settles anyway (default 3000; Infinity: never)
  --cors                answer cross-origin requests (for a browser page on another origin; default off)
  --quiet               do not log requests
  -h, --help            show this help
`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'pending-polls': { type: 'string' },
  'pending-ms': { type: 'string' },
  cors: { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

function count(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  return value === 'Infinity' ? Number.POSITIVE_INFINITY : value.trim() === '' ? Number.NaN : Number(value);
}

function settings(args: readonly string[]) {
  const { values } = parse(args, OPTIONS, 0);
  const port = count(values.port, 4010);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`--port must be a port number, got '${values.port}'`);
  // A client could never reach it: fetch refuses these ports before connecting.
  if (isBlockedPort(port))
    throw new UsageError(`--port ${values.port} is on fetch's blocked-port list (clients cannot connect to it); choose another`);
  const pendingPolls = count(values['pending-polls'], 1);
  if (!(pendingPolls === Number.POSITIVE_INFINITY || (Number.isInteger(pendingPolls) && pendingPolls >= 0)))
    throw new UsageError('--pending-polls must be a whole number ≥ 0');
  const pendingMs = count(values['pending-ms'], 3000);
  if (!(pendingMs >= 0)) throw new UsageError('--pending-ms must be a number ≥ 0');
  return { port, host: values.host ?? '127.0.0.1', pendingPolls, pendingMs, cors: values.cors === true, quiet: values.quiet === true };
}

export const simulateCommand: Command = {
  summary: 'run the simulator of both services on loopback',
  usage: USAGE,
  async run(args) {
    const options = settings(args);
    const testing = await import('../testing/index.js');
    const simulator = testing.createSimulator({
      settlement: { pendingPolls: options.pendingPolls, pendingMs: options.pendingMs },
      onRequest: options.quiet ? undefined : (request) => process.stdout.write(logLine(request)),
    });
    let running: RunningSimulator;
    try {
      running = await testing.startSimulator({ port: options.port, host: options.host, simulator, cors: options.cors });
    } catch (error) {
      throw new Failure(`could not start: ${error instanceof Error ? error.message : String(error)}`);
    }
    process.stdout.write(banner(testing, running, options));
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void running.close().then(() => {
        process.stdout.write(`Simulator stopped (${signal}).\n`);
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    return undefined;
  },
};

function banner(
  fixtures: Pick<typeof import('../testing/index.js'), 'TAP_API_KEYS' | 'COLLECTIONS_API_KEYS' | 'TAGS' | 'PRODUCTS' | 'PHONES'>,
  running: RunningSimulator,
  options: { pendingPolls: number; pendingMs: number },
): string {
  const rows = (group: string, values: Record<string, string>) =>
    Object.entries(values).map(([name, value]) => `  ${`${group}.${name}`.padEnd(34)} ${value}`);
  return [
    `Tap Collections simulator listening on ${running.url}`,
    `  Tap base URL:          ${running.tapBaseUrl}`,
    `  Collections base URL:  ${running.collectionsBaseUrl}`,
    '',
    'Fixtures (exported by tap-collections-sdk/testing):',
    ...rows('TAP_API_KEYS', fixtures.TAP_API_KEYS),
    ...rows('COLLECTIONS_API_KEYS', fixtures.COLLECTIONS_API_KEYS),
    ...rows('TAGS', fixtures.TAGS),
    ...rows('PRODUCTS', fixtures.PRODUCTS),
    ...rows('PHONES', fixtures.PHONES),
    '',
    `Collections settle after ${options.pendingPolls} pending status check(s) or ${options.pendingMs} ms, whichever comes first.`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

function logLine(request: ReceivedRequest): string {
  const prefix = request.service === 'tap' ? '/tap' : '/collections';
  return `${request.receivedAt} ${request.method} ${prefix}${request.path}${request.query} → ${request.outcome}${request.faulted ? ' (fault)' : ''}\n`;
}
