/* global module */
// Folder rules for src/, checked by `npm run lint`. Features (plants, auth) own their tables through
// a repository, which reaches the database through database/'s one public entry; common/ is shared by
// everyone and so depends on no feature; what ships to production imports only packages that
// `npm prune --omit=dev` keeps.
const SPEC = '\\.spec\\.ts$';
/** The data-access API (Database) and the database's error classes: all that the rest of src/ may import. */
const DATABASE_ENTRY = '^src/database/index\\.ts$';
const FEATURES = '^src/(plants|auth)/';
const ORM = '^node_modules/(typeorm|@nestjs/typeorm|mysql2|better-sqlite3)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules that import each other, directly or around a loop, cannot be understood or moved one at a time.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'common-knows-no-feature',
      severity: 'error',
      comment:
        'common/ is cross-cutting: it may import itself, packages and, to tell a database outage from a bug, ' +
        "the database's public entry; never a feature or another src folder.",
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: `^src/common/|${DATABASE_ENTRY}` },
    },
    {
      name: 'common-knows-no-orm',
      severity: 'error',
      comment: 'common/ works the same whatever the storage: no TypeORM and no database driver.',
      // Specs may build the real ORM errors they show are classified.
      from: { path: '^src/common/', pathNot: SPEC },
      to: { path: ORM },
    },
    {
      name: 'features-use-their-repository',
      severity: 'error',
      comment:
        'In a feature, only the entity touches TypeORM: the repository sends its statements through the ' +
        'Database API (so none escapes its transaction, retry or error mapping), and services, controllers ' +
        'and modules see the repository methods. Specs may build the real ORM objects they check.',
      from: { path: FEATURES, pathNot: `\\.entity\\.ts$|${SPEC}` },
      to: { path: ORM },
    },
    {
      name: 'database-internals-stay-inside',
      severity: 'error',
      comment:
        'Outside database/, only its public entry (index.ts: the Database API and the error classes) is imported; ' +
        'its internals (data source options, migrations, retry, driver tweaks) are wired in by the composition ' +
        'roots only, so every repository reaches its tables the same way.',
      from: { path: '^src/', pathNot: '^src/(database/|app\\.module\\.ts$|cli\\.ts$)' },
      to: { path: '^src/database/', pathNot: DATABASE_ENTRY },
    },
    {
      name: 'database-knows-only-entities',
      severity: 'error',
      comment: 'database/ lists the entities for the data source; nothing else of a feature.',
      from: { path: '^src/database/' },
      to: { path: FEATURES, pathNot: '\\.entity\\.ts$' },
    },
    {
      name: 'migrations-import-no-live-code',
      severity: 'error',
      comment:
        'A migration is frozen when it ships: it spells out its schema instead of reading live entities or ' +
        'helpers that change later.',
      from: { path: '^src/database/migrations/' },
      to: { path: '^src/', pathNot: '^src/database/migrations/' },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment:
        'The production image installs `dependencies` only (npm prune --omit=dev): shipped code may import a ' +
        'devDependency for its types only.',
      from: {
        path: '^src/',
        pathNot: SPEC,
      },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only', 'pre-compilation-only'] },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment:
        'A package that is not in package.json is there only by accident (hoisted from another one) and may be ' +
        'gone after the next install.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing fails at run time.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // See imports that TypeScript erases (types only), so the dev-dependency rule can let them pass.
    tsPreCompilationDeps: 'specify',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    exclude: { path: '^(dist|coverage)/' },
  },
};
