import { ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { waitFor } from './utils/wait-for';

/**
 * The preflight of `npm start`, `npm test` and the other development commands
 * (scripts/supported-node.js): the command runs on the Node.js running it when `engines` admits that
 * one, on the newest supported line from the cache folder when not, and where no supported line can
 * be had, a message says so within seconds. An unsupported Node.js is this one told to report
 * another version; a cached line is laid out as scripts/node-line.sh lays it out, around this Node.js.
 */

const ROOT = join(__dirname, '..');
const PREFLIGHT = join(ROOT, 'scripts', 'supported-node.js');
const ENGINES = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines
  .node;
/** Each range's major: `^22.15.0 || ^24.11.0 || ^26.0.0` admits 22, 24 and 26. */
const LINES = ENGINES.split('||').map((range) => Number(/\d+/.exec(range)![0]));
const NEWEST = Math.max(...LINES);
const UNSUPPORTED = 'v20.20.2';

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>;
  stdout: () => string;
}

let work: string;
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'plant-store-preflight-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

/** The preflight running `command`, on this Node.js, or on one that reports `version` when given. */
function preflight(command: string[], env: NodeJS.ProcessEnv = {}, version?: string): Run {
  const preload: string[] = [];
  if (version) {
    const fake = join(work, 'version.js');
    writeFileSync(fake, `Object.defineProperty(process, 'version', { value: ${JSON.stringify(version)} });\n`);
    preload.push('--require', fake);
  }
  const started = Date.now();
  const child = spawn(process.execPath, [...preload, PREFLIGHT, ...command], {
    cwd: ROOT,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: work,
      NODE_LINES_CACHE: join(work, 'node-lines'),
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
  );
  return { child, done, stdout: () => stdout };
}

/** A cached line as scripts/node-line.sh leaves it: the package's bin/node and its platform package's folder. */
function cacheLine(line: number): string {
  const home = join(work, 'node-lines', String(line), 'node_modules', 'node', 'node_modules', 'node-test-platform');
  mkdirSync(join(home, 'bin'), { recursive: true });
  mkdirSync(join(home, 'include', 'node'), { recursive: true });
  writeFileSync(join(home, 'include', 'node', 'node_api.h'), '');
  symlinkSync(process.execPath, join(home, 'bin', 'node'));
  const packageBin = join(dirname(dirname(dirname(home))), 'node', 'bin');
  mkdirSync(packageBin, { recursive: true });
  symlinkSync(process.execPath, join(packageBin, 'node'));
  return home;
}

/** Prints which node runs it, the first folder of its PATH, and the headers npm would build against. */
const PRINT = [
  'node',
  '-p',
  'JSON.stringify({ node: process.execPath, first: process.env.PATH.split(":")[0], nodedir: process.env.npm_config_nodedir })',
];

describe('scripts/supported-node.js', () => {
  it('runs the command on this Node.js when engines admits it, and says nothing', async () => {
    const { code, stdout, stderr } = await preflight(PRINT).done;
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ node: process.execPath, first: dirname(process.execPath) });
    expect(stderr).toBe('');
  });

  it("exits with the command's exit code", async () => {
    await expect(preflight(['node', '-e', 'process.exit(3)']).done).resolves.toMatchObject({ code: 3 });
  });

  it('hands SIGTERM to the command and exits as it did', async () => {
    const run = preflight([
      'node',
      '-e',
      "process.on('SIGTERM', () => { console.log('stopping'); process.exit(7); }); console.log('ready'); setInterval(() => {}, 1000);",
    ]);
    await waitFor(() => run.stdout().includes('ready'), { what: 'the command started' });
    run.child.kill('SIGTERM');
    const { code, stdout } = await run.done;
    expect(stdout).toContain('stopping');
    expect(code).toBe(7);
  });

  it(`on a Node.js outside engines, runs the command on the cached newest line (${NEWEST}) with its headers, and says so`, async () => {
    const home = cacheLine(NEWEST);
    const { code, stdout, stderr } = await preflight(PRINT, {}, UNSUPPORTED).done;
    expect(stderr).toContain(`Node.js ${UNSUPPORTED} (${process.execPath}) is outside engines (${ENGINES})`);
    expect(stderr).toContain(`on Node.js ${process.version} from ${home}`);
    expect(code).toBe(0);
    // The line's node, found first on PATH, and npm told to build native modules against its headers.
    expect(JSON.parse(stdout)).toEqual({ node: process.execPath, first: join(home, 'bin'), nodedir: home });
  });

  it('where no supported Node.js can be had, says so within seconds, naming this version and the supported lines', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise((resolve) => closed.close(resolve));

    const registry = { npm_config_registry: `http://127.0.0.1:${port}/`, npm_config_cache: join(work, 'npm-cache') };
    const { code, stdout, stderr, ms } = await preflight(PRINT, registry, UNSUPPORTED).done;
    expect(code).toBe(1);
    expect(stdout).toBe('');
    const lines = [...LINES].sort((a, b) => a - b);
    const named = `${lines.slice(0, -1).join(', ')} or ${lines[lines.length - 1]}`;
    expect(stderr).toContain(`Plant Store runs on Node.js ${named} (package.json engines: ${ENGINES})`);
    expect(stderr).toContain(`this is Node.js ${UNSUPPORTED}`);
    expect(stderr).toMatch(/could be installed from the npm registry's node package: .*ECONNREFUSED/);
    expect(stderr).toContain(`Install Node.js ${named} and run the command again.`);
    expect(ms).toBeLessThan(15_000);
  });
});
