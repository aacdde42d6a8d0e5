#!/usr/bin/env node
/**
 * The `tap-collections-sdk` command (built to `dist/testing/cli.js`):
 *
 * ```
 * tap-collections-sdk simulate [--port 4010] [--host 127.0.0.1] [--pending-polls 1] [--pending-ms 3000] [--cors] [--quiet]
 * ```
 *
 * Starts the loopback simulator, prints the two base URLs and the fixture keys, logs each request (unless `--quiet`),
 * and stops cleanly on SIGINT or SIGTERM. Exit codes: 0 stopped by a signal or `--help`, 1 could not start, 2 bad usage.
 *
 * @module
 */
import { isBlockedPort } from '../core/connection-failure.js';
import { COLLECTIONS_API_KEYS, PHONES, PRODUCTS, TAGS, TAP_API_KEYS } from './fixtures.js';
import { type RunningSimulator, startSimulator } from './server.js';
import { createSimulator, type ReceivedRequest } from './simulator.js';

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

interface Arguments {
  port: number;
  host: string;
  pendingPolls: number;
  pendingMs: number;
  quiet: boolean;
  cors: boolean;
}

function parseArguments(argv: readonly string[]): Arguments | 'help' | string {
  const [command, ...rest] = argv;
  if (command === '-h' || command === '--help' || command === 'help') return 'help';
  if (command !== 'simulate') return command === undefined ? 'a command is required' : `unknown command '${command}'`;
  const parsed: Arguments = { port: 4010, host: '127.0.0.1', pendingPolls: 1, pendingMs: 3000, quiet: false, cors: false };
  for (let index = 0; index < rest.length; index++) {
    const argument = rest[index] as string;
    if (argument === '-h' || argument === '--help') return 'help';
    if (argument === '--quiet' || argument === '--cors') {
      parsed[argument === '--quiet' ? 'quiet' : 'cors'] = true;
      continue;
    }
    const [name, inline] = argument.split('=', 2) as [string, string | undefined];
    const value = inline ?? rest[++index];
    if (value === undefined) return `${name} needs a value`;
    const count = value === 'Infinity' ? Number.POSITIVE_INFINITY : Number(value);
    switch (name) {
      case '--port':
        if (!Number.isInteger(count) || count < 0 || count > 65_535) return `--port must be a port number, got '${value}'`;
        // A client could never reach it: fetch refuses these ports before connecting.
        if (isBlockedPort(count)) return `--port ${value} is on fetch's blocked-port list (clients cannot connect to it); choose another`;
        parsed.port = count;
        break;
      case '--host':
        parsed.host = value;
        break;
      case '--pending-polls':
        if (!(count === Number.POSITIVE_INFINITY || (Number.isInteger(count) && count >= 0)))
          return `--pending-polls must be a whole number ≥ 0`;
        parsed.pendingPolls = count;
        break;
      case '--pending-ms':
        if (!(count >= 0)) return `--pending-ms must be a number ≥ 0`;
        parsed.pendingMs = count;
        break;
      default:
        return `unknown option '${name}'`;
    }
  }
  return parsed;
}

function banner(running: RunningSimulator, args: Arguments): string {
  const rows = (group: string, values: Record<string, string>) =>
    Object.entries(values).map(([name, value]) => `  ${`${group}.${name}`.padEnd(34)} ${value}`);
  return [
    `Tap Collections simulator listening on ${running.url}`,
    `  Tap base URL:          ${running.tapBaseUrl}`,
    `  Collections base URL:  ${running.collectionsBaseUrl}`,
    '',
    'Fixtures (exported by tap-collections-sdk/testing):',
    ...rows('TAP_API_KEYS', TAP_API_KEYS),
    ...rows('COLLECTIONS_API_KEYS', COLLECTIONS_API_KEYS),
    ...rows('TAGS', TAGS),
    ...rows('PRODUCTS', PRODUCTS),
    ...rows('PHONES', PHONES),
    '',
    `Collections settle after ${args.pendingPolls} pending status check(s) or ${args.pendingMs} ms, whichever comes first.`,
    'Press Ctrl+C to stop.',
    '',
  ].join('\n');
}

function logLine(request: ReceivedRequest): string {
  const prefix = request.service === 'tap' ? '/tap' : '/collections';
  return `${request.receivedAt} ${request.method} ${prefix}${request.path}${request.query} → ${request.outcome}${request.faulted ? ' (fault)' : ''}\n`;
}

async function main(argv: readonly string[]): Promise<void> {
  const args = parseArguments(argv);
  if (args === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (typeof args === 'string') {
    process.stderr.write(`tap-collections-sdk: ${args}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const simulator = createSimulator({
    settlement: { pendingPolls: args.pendingPolls, pendingMs: args.pendingMs },
    onRequest: args.quiet ? undefined : (request) => process.stdout.write(logLine(request)),
  });
  let running: RunningSimulator;
  try {
    running = await startSimulator({ port: args.port, host: args.host, simulator, cors: args.cors });
  } catch (error) {
    process.stderr.write(`tap-collections-sdk: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(banner(running, args));
  const stop = (signal: NodeJS.Signals) => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    void running.close().then(() => {
      process.stdout.write(`Simulator stopped (${signal}).\n`);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main(process.argv.slice(2));
