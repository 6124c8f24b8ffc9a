import type { Config } from 'jest';

/**
 * jose is ESM-only. Node (20.19+, 22.12+) loads it from the compiled CommonJS service with
 * require(esm); Jest's module loader cannot, so for tests only its files are compiled to CommonJS.
 */
const transform: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  '/node_modules/jose/.+\\.js$': [
    'ts-jest',
    { tsconfig: { allowJs: true, module: 'commonjs' }, isolatedModules: true },
  ],
};
const transformIgnorePatterns = ['/node_modules/(?!jose/)'];

/**
 * `npm test` runs all three projects: unit specs beside the code (DI mocks, no database), the
 * TypeScript client's specs (clients/typescript, compiled with its own tsconfig), and e2e specs in
 * test/ against the real AppModule on SQLite and, when TEST_DATABASE_URL is set, on MySQL.
 */
const config: Config = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      transform,
      transformIgnorePatterns,
    },
    {
      displayName: 'client',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/clients/typescript/src/**/*.spec.ts'],
      transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'clients/typescript/tsconfig.json' }] },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // Every response an e2e test app sends is checked against openapi.json after each test.
      setupFilesAfterEnv: ['<rootDir>/test/utils/contract-setup.ts'],
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
