import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json' });

/** What both runs share: TypeScript through ts-jest's ESM preset, relative imports without `.js`. */
const shared = {
  ...preset,
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^ticketd$': '<rootDir>/src/index.ts',
    '^ticketd-client$': '<rootDir>/packages/client/src/index.ts',
  },
};

/**
 * Two runs: `unit` needs no database, no Docker and no global setup (npm run test:unit);
 * `integration` starts the shared backend pair first (npm run test:integration). `npm test` runs both.
 */
/** @type {import('jest').Config} */
export default {
  projects: [
    { ...shared, displayName: 'unit', roots: ['<rootDir>/test/unit'] },
    {
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      globalSetup: '<rootDir>/test/support/global-setup.js',
      globalTeardown: '<rootDir>/test/support/global-teardown.js',
    },
  ],
  testTimeout: 60_000,
  collectCoverage: true,
  coverageProvider: 'v8',
  collectCoverageFrom: ['src/**/*.ts'],
  coverageReporters: ['text-summary', ['text', { skipFull: true }]],
  coverageThreshold: {
    // The pure uniqueness core: every line and branch of it is covered by the unit run alone.
    './src/core/': { lines: 95, branches: 95 },
    // The rest of src/, as far as the unit run alone covers it today (the integration run adds to it).
    global: { lines: 40, branches: 60 },
  },
  maxWorkers: 2,
};
