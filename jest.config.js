import { createDefaultEsmPreset } from 'ts-jest';

const preset = createDefaultEsmPreset({ tsconfig: 'tsconfig.json' });

/** @type {import('jest').Config} */
export default {
  ...preset,
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^ticketd$': '<rootDir>/src/index.ts',
    '^ticketd-client$': '<rootDir>/packages/client/src/index.ts',
  },
  testTimeout: 60_000,
  // The pure uniqueness core (src/core) is reported on every run: every branch of it should be covered.
  collectCoverage: true,
  coverageProvider: 'v8',
  collectCoverageFrom: ['src/core/**/*.ts'],
  coverageReporters: ['text'],
  maxWorkers: 2,
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
};
