import type { Config } from 'jest';

/**
 * Packages that ship only ES modules: jose, NestJS 12 (every @nestjs package here),
 * raw-body 4, type-is 3 and its content-type 3. Node (22.12+) loads them from the compiled
 * CommonJS service with require(esm); Jest's module loader cannot (Jest 30 only on Node 24.9+
 * with --experimental-vm-modules), so for tests only their files are compiled to CommonJS
 * (test/utils/esm-to-commonjs.mjs).
 */
const ESM_ONLY = ['jose', '@nestjs/[^/]+', 'raw-body', 'type-is', 'content-type'].join('|');
const transform: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  [`/node_modules/(${ESM_ONLY})/.+\\.js$`]: '<rootDir>/test/utils/esm-to-commonjs.mjs',
};
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_ONLY})/)`];

/**
 * `npm test` runs all four projects: unit specs beside the code (DI mocks, no database), repository
 * specs beside each repository (its real statements on a migrated SQLite database and, when
 * TEST_DATABASE_URL is set, on MySQL/MariaDB), the TypeScript client's specs (clients/typescript,
 * compiled with its own tsconfig), and e2e specs in test/ against the real AppModule on the same
 * databases.
 */
const REPOSITORY_SPECS = '<rootDir>/src/**/*.repository.spec.ts';
const config: Config = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      // With the docs' generator and its checks (scripts/docs), which read the code as the unit specs do.
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '\\.repository\\.spec\\.ts$'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'repository',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: [REPOSITORY_SPECS],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'client',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/clients/typescript/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'clients/typescript/tsconfig.json' }] },
      // Coverage of the service's files not loaded by any test is the other projects' to compute:
      // compiled with this project's tsconfig (rootDir clients/typescript) they fail to build.
      coveragePathIgnorePatterns: ['/node_modules/', '<rootDir>/src/'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // Every response an e2e test app sends is checked against openapi.json after each test.
      setupFilesAfterEnv: ['<rootDir>/test/utils/contract-setup.ts'],
      // The service compiled once for the processes the specs start (test/utils/service-build.ts).
      globalSetup: '<rootDir>/test/global-setup.ts',
      globalTeardown: '<rootDir>/test/global-teardown.ts',
      transform,
      transformIgnorePatterns,
    },
  ],
  // Coverage and its threshold apply to `npm test` (jest --coverage), as CI runs it; a single spec
  // file run with `npx jest path` passes when its tests do.
  collectCoverageFrom: [
    'src/**/*.ts',
    'clients/typescript/src/**/*.ts',
    '!**/*.spec.ts',
    '!src/main.ts',
    // Types only, generated.
    '!clients/typescript/src/{schema,types}.ts',
  ],
  coverageReporters: ['text-summary', 'lcov'],
  coverageThreshold: { global: { lines: 90 } },
  testTimeout: 30000,
};

export default config;
