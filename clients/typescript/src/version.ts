/** This package's version, sent in the `User-Agent` (src/version.spec.ts holds it to package.json). */
export const VERSION = '1.1.0';
