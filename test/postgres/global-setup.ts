/**
 * One PostgreSQL server for the whole test run (vitest `globalSetup`): started before the first test file,
 * stopped after the last. Test files read its address with `inject('postgresUrl')` and keep apart by table
 * name. A server that cannot start fails the run: the PostgreSQL tests never skip.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './server.ts';

declare module 'vitest' {
  interface ProvidedContext {
    /** The connection string of the run's PostgreSQL server. */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide('postgresUrl', server.connectionString);
  return () => server.stop();
}
