import { allocateBudget, type BudgetGrant, type BudgetRequest, type BudgetState } from '../journal/budget.js';
import { WRITES_BUMP, WRITES_COLUMN } from '../journal/record-row.js';
import type { PostgresPool } from './pool.js';

/**
 * Renews a holder's share of a key's rate budget in the budgets table `budgets`: the row read with the server's
 * clock, then a compare-and-set on its version (read again on a conflict, up to 8 times).
 */
export async function takeBudgetRow(pool: PostgresPool, budgets: string, request: BudgetRequest): Promise<BudgetGrant> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const read = await pool.query(
      `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now, b.version, b.state
         FROM (SELECT 1) AS one LEFT JOIN ${budgets} AS b ON b.key = $1`,
      [request.key],
    );
    const row = read.rows[0] as { now: number; version: string | number | null; state: BudgetState | null };
    const { state, grant } = allocateBudget(row.state ?? undefined, request, Number(row.now));
    const written =
      row.version === null
        ? await pool.query(
            `INSERT INTO ${budgets} (key, version, state, ${WRITES_COLUMN}) VALUES ($1, 1, $2::jsonb, 1) ON CONFLICT (key) DO NOTHING RETURNING version`,
            [request.key, JSON.stringify(state)],
          )
        : await pool.query(
            `UPDATE ${budgets} SET state = $2::jsonb, version = version + 1, ${WRITES_BUMP} WHERE key = $1 AND version = $3 RETURNING version`,
            [request.key, JSON.stringify(state), row.version],
          );
    if (written.rows.length === 1) return grant;
  }
  throw new Error('PostgresJournal: the rate budget row stayed contended; try again');
}
