import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'plantstore');
const PREFIX = 'e2e-build-';

/** Where the e2e run's build is, for the test files jest's workers run. */
const BUILD_ENV = 'PLANT_STORE_E2E_BUILD';

/**
 * The service compiled once for an e2e run (jest's globalSetup), as `nest build` compiles it
 * (tsconfig.build.json) but without checking types, which `npm run typecheck` does: a tree of
 * `dist/` and `package.json` inside the project, so its `require`s find the project's node_modules.
 * The service processes the e2e specs start run it, as production runs `dist/main.js`: compiling
 * the sources in every process instead (ts-node) took three times as long to start, and an e2e run
 * starts a hundred of them.
 *
 * Each run has a folder of its own (named by its process id, so two runs in one project never share
 * one); a folder left by a run that no longer exists is removed.
 */
export function buildService(): string {
  mkdirSync(CACHE, { recursive: true });
  for (const name of readdirSync(CACHE)) {
    if (name.startsWith(PREFIX) && !running(Number(name.slice(PREFIX.length)))) {
      rmSync(join(CACHE, name), { recursive: true, force: true });
    }
  }
  const tree = join(CACHE, `${PREFIX}${process.pid}`);
  rmSync(tree, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck', '--outDir', join(tree, 'dist')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  // The service reads its version from the package.json above dist/.
  copyFileSync(join(ROOT, 'package.json'), join(tree, 'package.json'));
  process.env[BUILD_ENV] = tree;
  return tree;
}

/** Removes the run's build (jest's globalTeardown). */
export function removeServiceBuild(): void {
  const tree = process.env[BUILD_ENV];
  if (tree !== undefined) rmSync(tree, { recursive: true, force: true });
}

/** The compiled file of a module of src/ (`main`, `cli`, `tracing/start`) in the e2e run's build. */
export function builtModule(module: string): string {
  const tree = process.env[BUILD_ENV];
  if (tree === undefined)
    throw new Error("No build of the service: run the spec in jest's e2e project (jest.config.ts)");
  return join(tree, 'dist', `${module}.js`);
}

function running(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
