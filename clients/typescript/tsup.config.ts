import { defineConfig } from 'tsup';

/**
 * The package as it ships: one ES module (`dist/index.mjs`, types `index.d.mts`) for `import` and
 * one CommonJS module (`dist/index.js`, types `index.d.ts`) for `require`, each bundled from
 * src/index.ts with its declarations. No source maps: the sources are not in the package.
 */
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  outDir: 'dist',
  platform: 'node',
  target: 'node22',
  sourcemap: false,
  // Node's built-ins by their `node:` names, as in the source.
  removeNodeProtocol: false,
  tsconfig: 'tsconfig.build.json',
});
