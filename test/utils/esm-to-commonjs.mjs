/**
 * Jest transformer for the packages that ship only ES modules (jest.config.ts, ESM_ONLY): compiles
 * each file to CommonJS with TypeScript, as ts-jest did for jose alone. TypeScript leaves
 * `import.meta` as it is, a syntax error in CommonJS, so it is first rewritten to what CommonJS
 * has for it: `__filename`, `__dirname`, the module's own `require`. A module-level
 * `const require = createRequire(import.meta.url)` is dropped, as CommonJS already has that
 * `require` (and may not declare it twice).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const FILE_URL = "require('node:url').pathToFileURL(__filename).href";
const REWRITES = [
  [/^const require = createRequire\(import\.meta\.url\);$/gm, ''],
  [/\bimport\.meta\.url\b/g, FILE_URL],
  [/\bimport\.meta\.filename\b/g, '__filename'],
  [/\bimport\.meta\.dirname\b/g, '__dirname'],
  [/\bimport\.meta\.resolve\(([^()]*)\)/g, "require('node:url').pathToFileURL(require.resolve($1)).href"],
];

const OWN_SOURCE = readFileSync(import.meta.filename);

/** @type {import('@jest/transform').SyncTransformer} */
export default {
  canInstrument: false,
  getCacheKey(sourceText, sourcePath) {
    return createHash('sha256')
      .update(OWN_SOURCE)
      .update(ts.version)
      .update(sourcePath)
      .update(sourceText)
      .digest('hex');
  },
  process(sourceText, sourcePath) {
    const source = REWRITES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), sourceText);
    const { outputText } = ts.transpileModule(source, {
      fileName: sourcePath,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, allowJs: true },
    });
    return { code: outputText };
  },
};
