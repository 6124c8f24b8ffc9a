// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'clients/*/dist/', 'coverage/', 'node_modules/', 'data/', 'test-artifacts/'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  // Each feature's metrics in one file, so every series a dashboard or an alert reads has one place
  // to look for; specs may make metrics of their own to test the registry's listener.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.metrics.ts', 'src/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'prom-client',
              importNames: ['Counter', 'Gauge', 'Histogram', 'Summary', 'default'],
              allowTypeImports: true,
              message:
                "A metric is declared in its feature's <feature>.metrics.ts, by a provider that registers it on " +
                "MetricsService's registry; code that counts gets the metric object from that provider " +
                '(docs/architecture.md, "Where to change what").',
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  // Plain CommonJS, run by whatever Node.js is on PATH, even one outside engines (scripts/supported-node.js).
  {
    files: ['scripts/**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', process: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // The benchmarks are read in small pieces (bench/README.md, "Layout").
  { files: ['bench/**/*.ts'], rules: { 'max-lines-per-function': ['error', { max: 80 }] } },
);
