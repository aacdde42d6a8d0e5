/**
 * `tap-collections-sdk/postgres`: a payment journal in PostgreSQL, shared by every process and machine that
 * points at the same table, so several settlement workers can split the open payments between them.
 *
 * ```ts
 * import { CollectionsClient } from 'tap-collections-sdk';
 * import { PostgresJournal } from 'tap-collections-sdk/postgres';
 *
 * const journal = new PostgresJournal({ connectionString: process.env.DATABASE_URL });
 * const collections = new CollectionsClient({ journal });
 * ```
 *
 * Needs the `pg` package (an optional peer dependency: `npm install pg`) unless you pass a pool of your own.
 *
 * @packageDocumentation
 * @module tap-collections-sdk/postgres
 */

export { PostgresJournal, type PostgresJournalOptions } from './journal.js';
export type { PostgresListenClient, PostgresPool, PostgresQueryResult } from './pool.js';
