import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RELEASED_CONTRACT, checkContract } from '../scripts/check-contract';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document, changed by path
type Document = Record<string, any>;

/**
 * The breaks `npm run contract:check` finds beside Optic's rules (scripts/contract/breaking-changes.ts,
 * whose spec has each case), on changed copies of the released contract: a webhook's payload and the
 * bounds of a request, which Optic's diff lets through. Each check is one diff by Optic.
 */
describe('the contract check, where Optic does not look', () => {
  const released = JSON.parse(readFileSync(RELEASED_CONTRACT, 'utf8')) as Document;
  const [major, minor] = (released.info.version as string).split('.').map(Number);
  const longestName = released.components.schemas.NewPlant.properties.name.maxLength as number;
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'contract-check-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function check(version: string, change: (document: Document) => void) {
    const document = structuredClone(released);
    document.info.version = version;
    change(document);
    const path = join(dir, `openapi-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(document, null, 2));
    return checkContract(RELEASED_CONTRACT, path);
  }

  /** A field of plant.created's data removed, and the longest plant name a client may send shortened. */
  const narrowed = (document: Document) => {
    const data = document.components.schemas.PlantCreatedEventData;
    delete data.properties.name;
    data.required = data.required.filter((name: string) => name !== 'name');
    document.components.schemas.NewPlant.properties.name.maxLength = longestName - 55;
  };

  it('fails on a webhook field removed and a request bound narrowed within the major version', () => {
    const verdict = check(`${major}.${minor + 1}.0`, narrowed);
    expect(verdict.passed).toBe(false);
    expect(verdict.report).toContain('- webhook plant.created, data: name removed');
    expect(verdict.report).toContain(
      `- POST /plants request body, name: maxLength ${longestName} became ${longestName - 55}`,
    );
  });

  it('passes them under a new major version', () => {
    expect(check(`${major + 1}.0.0`, narrowed)).toEqual({
      passed: true,
      report: expect.stringMatching(/no breaking change$/),
    });
  });

  it('passes a bound widened and an optional field added to a payload', () => {
    const verdict = check(`${major}.${minor + 1}.0`, (document) => {
      document.components.schemas.NewPlant.properties.name.maxLength = longestName + 45;
      document.components.schemas.PlantCreatedEventData.properties.color = { type: 'string' };
    });
    expect(verdict).toEqual({ passed: true, report: expect.stringMatching(/no breaking change$/) });
  });
});
