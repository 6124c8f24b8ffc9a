/* global module */
// Folder rules for src/, checked by `npm run lint`. The folders of src/ are of four kinds:
// - features, the API's domains: each has its routes, its rules and the tables it owns through a
//   repository. plants, webhooks, and auth (access tokens, and the caller's identity that
//   everything per user needs).
// - cross-cutting mechanisms, which every feature may use and which know no feature: common (the
//   most basic, it imports nothing else of src/), config, secrets, idempotency, rate-limit,
//   logging, metrics, tracing, lifecycle, deprecation, and the service's own pages, docs and health.
// - database/: the data source, migrations and driver tweaks, with rules of their own; the rest of
//   src/ reaches it through its one public entry (the data-access API and its error classes).
// - the composition roots that wire them together: the files at the top of src/ and setup/.
// What ships to production imports only packages that `npm prune --omit=dev` keeps.
const SPEC = '\\.spec\\.ts$';
const FEATURES = '^src/(plants|webhooks|auth)/';
const CROSS_CUTTING =
  '^src/(common|config|secrets|idempotency|rate-limit|logging|metrics|tracing|lifecycle|docs|health|deprecation)/';
const ROOTS = '^src/([^/]+\\.ts$|setup/)';
// What a feature offers the rest of src/; everything else in its folder is its own business. Its
// modules and the providers they export, what routes are declared with (decorators, DTOs), its
// entities (for the data source), and auth's identity of the caller.
const FEATURE_PUBLIC = [
  '\\.(module|service|entity|errors|limits)\\.ts$',
  '/(decorators|dto)/',
  '^src/auth/(principal|scopes|authorization|oidc/jwt-verifier)\\.ts$',
];
/** The data-access API (Database) and the database's error classes: all that the rest of src/ may import. */
const DATABASE_ENTRY = '^src/database/index\\.ts$';
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
        'common/ is cross-cutting: it may import itself, packages and the settings declared in config/env/ ' +
        '(the defaults it documents); never a feature or another src folder, not even the database: an ' +
        'outage reaches the exception filter as the named error the data-access API throws.',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/(common|config/env)/' },
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
      name: 'every-folder-has-a-kind',
      severity: 'error',
      comment:
        'A new folder of src/ is added to FEATURES or CROSS_CUTTING above, so the rules below know what ' +
        'it may import and who may import it.',
      from: { path: '^src/[^/]+/', pathNot: [FEATURES, CROSS_CUTTING, '^src/(database|setup)/'] },
      to: {},
    },
    {
      name: 'feature-internals-stay-inside',
      severity: 'error',
      comment:
        "Outside a feature's folder only its public files (FEATURE_PUBLIC) are used: its repository, " +
        'controller, guards and helpers can change without looking beyond the folder. The composition ' +
        'roots wire everything; specs may wire a real collaborator into the module they test.',
      from: { path: '^src/([^/]+)/', pathNot: SPEC },
      to: { path: FEATURES, pathNot: ['^src/$1/', ...FEATURE_PUBLIC] },
    },
    {
      name: 'cross-cutting-knows-no-feature',
      severity: 'error',
      comment:
        'A cross-cutting mechanism serves every feature, so it knows none of them: what it needs of one ' +
        '(sealing, a setting) lives in a mechanism both use. Only the caller, from auth, may be known. ' +
        'Specs may read a feature to check what the mechanism documents of it.',
      from: { path: CROSS_CUTTING, pathNot: SPEC },
      to: { path: FEATURES, pathNot: '^src/auth/' },
    },
    {
      name: 'roots-are-not-imported',
      severity: 'error',
      comment:
        'main.ts, cli.ts, worker.ts, AppModule, WorkerModule and the set-up wire the application; what they wire never imports them ' +
        'back. Specs may borrow the shared application options and global providers.',
      from: { path: '^src/', pathNot: [ROOTS, SPEC] },
      to: { path: ROOTS },
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
      from: { path: '^src/', pathNot: '^src/(database/|(app|worker)\\.module\\.ts$|cli\\.ts$)' },
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
