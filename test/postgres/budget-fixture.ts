/**
 * What every PostgreSQL shared-budget test file needs: the budget-sender script (real processes), one limited
 * service counting arrivals, and `settings()`, the senders' environment on a fresh journal table at each call.
 */
import { afterAll, beforeAll, inject } from 'vitest';
import { type LimitedService, startLimitedService } from '../helpers/limited-service.ts';
import { useProcessScript } from '../helpers/process-script.ts';

export interface PostgresBudgetFixture {
  /** The budget-sender script, built for child processes. */
  readonly script: { readonly path: string };
  /** The service the senders call (started before the file's first test). */
  readonly service: LimitedService;
  /** The senders' environment: the run's PostgreSQL server, a new table, the service. */
  settings(): Record<string, string>;
}

/** Call once at the top of a test file: starts the service before its tests and closes it after. */
export function usePostgresBudgetFixture(): PostgresBudgetFixture {
  const script = useProcessScript(new URL('../journal/processes/budget-sender.ts', import.meta.url), 'budget-sender', ['pg-native'], {
    requireShim: true,
  });
  let service: LimitedService | undefined;
  let tables = 0;
  beforeAll(async () => {
    service = await startLimitedService();
  });
  afterAll(() => service?.close());
  const started = (): LimitedService => {
    if (service === undefined) throw new Error('the limited service starts in beforeAll');
    return service;
  };
  return {
    script,
    get service() {
      return started();
    },
    settings: () => ({
      BUDGET_JOURNAL: 'postgres',
      DATABASE_URL: inject('postgresUrl'),
      JOURNAL_TABLE: `budget_${process.pid}_${++tables}`,
      BUDGET_BASE_URL: started().baseUrl,
    }),
  };
}
