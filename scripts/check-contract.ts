import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import semver from 'semver';
import { Document as OpenApiDocument, breakingChanges } from './contract/breaking-changes';

const ROOT = join(__dirname, '..');
/** The contract as the last release published it; a release copies openapi.json here (docs/development.md, "Releasing"). */
export const RELEASED_CONTRACT = join(ROOT, 'contract', 'openapi-released.json');
const CURRENT_CONTRACT = join(ROOT, 'openapi.json');
/** Optic's breaking-changes ruleset, set to let a breaking change through only with a new major version. */
const STANDARD = join(ROOT, 'contract', 'optic-standard.yml');

export interface ContractVerdict {
  passed: boolean;
  report: string;
}

interface Document extends OpenApiDocument {
  info: { version: string };
}

/**
 * openapi.json against the last released contract (docs/api.md, "Versioning"): info.version never
 * goes back, moves whenever the document changed, and its major moves for a breaking change, which
 * Optic's diff finds (request and response each in their direction), and, where Optic does not look,
 * contract/breaking-changes.ts: the webhooks' payloads and the bounds of what a request may send.
 */
export function checkContract(released = RELEASED_CONTRACT, current = CURRENT_CONTRACT): ContractVerdict {
  const before = read(released);
  const after = read(current);
  const [from, to] = [before.info.version, after.info.version];
  if (!semver.valid(from) || !semver.valid(to)) {
    return { passed: false, report: `info.version must be a semantic version: released ${from}, now ${to}` };
  }
  if (semver.lt(to, from)) {
    return { passed: false, report: `info.version went back from ${from}, the released contract's, to ${to}` };
  }
  if (isDeepStrictEqual({ ...before, info: { ...before.info, version: to } }, after)) {
    return { passed: true, report: `openapi.json (${to}) is the released contract ${from}` };
  }
  if (to === from) {
    return {
      passed: false,
      report:
        `openapi.json differs from the released contract but info.version is still ${from}: move it ` +
        '(`npm version patch|minor|major --no-git-tag-version`, then `npm run openapi`) and add its CHANGELOG.md entry',
    };
  }
  const optic = spawnSync(
    process.execPath,
    [require.resolve('@useoptic/optic'), 'diff', released, current, '--check', '--standard', STANDARD],
    {
      encoding: 'utf8',
      // Nothing leaves the machine: no usage reports, no look-up of a newer Optic. Node 26's
      // warning that Optic's dependencies touch localStorage says nothing about the contract.
      env: { ...process.env, OPTIC_TELEMETRY_LEVEL: 'off', NO_UPDATE_NOTIFIER: '1', NODE_NO_WARNINGS: '1' },
    },
  );
  const output = `${optic.stdout ?? ''}${optic.stderr ?? ''}${optic.error ? String(optic.error) : ''}`.trim();
  const own = semver.major(to) > semver.major(from) ? [] : breakingChanges(before, after);
  const report = own.length === 0 ? output : `${output}\n\nBreaking changes Optic does not see:\n${bullets(own)}`;
  if (optic.status !== 0 || own.length > 0) {
    return {
      passed: false,
      report:
        `${report}\n\n${from} -> ${to}: the changes above break. A breaking change needs a new major version; serve the new ` +
        'shape beside the old one instead (a new field, or a new operation under /v2), deprecate the old ' +
        'one, and remove it in a major release after its sunset',
    };
  }
  return { passed: true, report: `${report}\n\n${from} -> ${to}: no breaking change` };
}

const bullets = (lines: string[]) => lines.map((line) => `- ${line}`).join('\n');

function read(path: string): Document {
  return JSON.parse(readFileSync(path, 'utf8')) as Document;
}

if (require.main === module) {
  const { passed, report } = checkContract();
  process.stdout.write(`${report}\n`);
  process.exitCode = passed ? 0 : 1;
}
