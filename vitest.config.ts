import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 10_000,
    // One real PostgreSQL server per run, for the PostgreSQL journal and the settlement worker's tests.
    globalSetup: ['test/postgres/global-setup.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.test.json' },
  },
});
