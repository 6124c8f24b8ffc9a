import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELEASED_CONTRACT, checkContract } from '../scripts/check-contract';

const ROOT = join(__dirname, '..');
const readJson = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
/** The versions a changelog has an entry for, and each one's date (or `Unreleased`). */
function changelogEntries(path: string): Map<string, string> {
  const headings = readFileSync(join(ROOT, path), 'utf8').matchAll(/^## \[([^\]]+)\] - (.+)$/gm);
  return new Map([...headings].map(([, version, date]) => [version, date]));
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document, changed by path
type Document = Record<string, any>;

/**
 * The check CI runs (`npm run contract:check`), on changed copies of the released contract: what it
 * lets through and what it stops. Each case is one diff by Optic, a few seconds.
 */
describe('the contract check against the last release', () => {
  const released = JSON.parse(readFileSync(RELEASED_CONTRACT, 'utf8')) as Document;
  const [major, minor] = (released.info.version as string).split('.').map(Number);
  const nextMinor = `${major}.${minor + 1}.0`;
  const nextMajor = `${major + 1}.0.0`;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'contract-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The released contract at `version`, changed by `change`, checked as openapi.json would be. */
  function check(version: string, change: (document: Document) => void = () => {}) {
    const document = structuredClone(released);
    document.info.version = version;
    change(document);
    const path = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(document, null, 2));
    return checkContract(RELEASED_CONTRACT, path);
  }

  const renameProperty = (schema: Document, from: string, to: string) => {
    schema.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([name, property]) => [name === from ? to : name, property]),
    );
    schema.required = schema.required?.map((name: string) => (name === from ? to : name));
  };

  it('fails on a field of an answer renamed within the major version', () => {
    const verdict = check(nextMinor, (document) => renameProperty(document.components.schemas.Plant, 'name', 'title'));
    expect(verdict.passed).toBe(false);
    expect(verdict.report).toMatch(/cannot remove response property 'name'/);
    expect(verdict.report).toMatch(/GET \/plants/);
  });

  it('fails on a field of a request renamed within the major version', () => {
    const verdict = check(nextMinor, (document) =>
      renameProperty(document.components.schemas.NewPlant, 'name', 'title'),
    );
    expect(verdict.passed).toBe(false);
    expect(verdict.report).toMatch(/POST \/plants/);
    expect(verdict.report).toMatch(/cannot add a required request property 'title'/);
  });

  it('passes the same rename under a new major version', () => {
    const verdict = check(nextMajor, (document) => renameProperty(document.components.schemas.Plant, 'name', 'title'));
    expect(verdict).toEqual({ passed: true, report: expect.stringMatching(/no breaking change$/) });
  });

  it('passes an optional field added to a request and a field added to an answer, under a new minor version', () => {
    const verdict = check(nextMinor, (document) => {
      document.components.schemas.NewPlant.properties.color = { type: 'string', maxLength: 32 };
      document.components.schemas.Plant.properties.color = { type: 'string' };
    });
    expect(verdict).toEqual({ passed: true, report: expect.stringMatching(/no breaking change$/) });
  });

  it('fails on any change when info.version did not move, without a diff', () => {
    const verdict = check(released.info.version, (document) => {
      document.components.schemas.Plant.properties.name.description = 'What the plant is called';
    });
    expect(verdict).toEqual({ passed: false, report: expect.stringMatching(/info\.version is still/) });
  });

  it('fails when info.version goes back, and when it is not a semantic version', () => {
    expect(check('0.9.0').passed).toBe(false);
    expect(check('1.1').passed).toBe(false);
  });

  it('passes the released contract under its own version or a later one', () => {
    expect(check(released.info.version).passed).toBe(true);
    expect(check(nextMinor).passed).toBe(true);
  });
});

describe('the changelogs', () => {
  const DATE = /^\d{4}-\d{2}-\d{2}$/;
  const DATE_OR_UNRELEASED = /^(\d{4}-\d{2}-\d{2}|Unreleased)$/;

  it("have an entry for the contract's version, and a dated one for the released contract", () => {
    const entries = changelogEntries('CHANGELOG.md');
    expect(entries.get(readJson('openapi.json').info.version)).toMatch(DATE_OR_UNRELEASED);
    expect(entries.get(readJson('contract/openapi-released.json').info.version)).toMatch(DATE);
  });

  it("have an entry for the TypeScript client's version", () => {
    const entries = changelogEntries('clients/typescript/CHANGELOG.md');
    expect(entries.get(readJson('clients/typescript/package.json').version)).toMatch(DATE_OR_UNRELEASED);
  });
});
