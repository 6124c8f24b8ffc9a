import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELEASED_CONTRACT, checkContract } from '../scripts/check-contract';

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
