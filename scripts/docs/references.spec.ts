import { anchorOf, anchorsOf, linksOf, namedPaths, npmScriptsOf, pathExists } from './references';
import { ROOT } from './facts';

describe('what a document sends its reader to', () => {
  it('reads root files and folders named in backticks as paths, and leaves media types and patterns alone', () => {
    const document =
      'CI runs `.ci/run`; `ormconfig.ts` builds on `src/database/data-source.ts`; answers are ' +
      '`application/json`; specs are `src/**/*.spec.ts`; `pst_...` is a token; the build is in `dist/main.js`.';
    expect(namedPaths(ROOT, 'docs/development.md', document)).toEqual([
      '.ci/run',
      'ormconfig.ts',
      'src/database/data-source.ts',
    ]);
  });

  it('finds a renamed root file or a file a page names from its own folder missing', () => {
    const names = new Set(['plant.entity.ts']);
    expect(pathExists(ROOT, 'docs/api.md', 'ormconfig.ts', names)).toBe(true);
    expect(pathExists(ROOT, 'docs/api.md', 'ormconfig.js', names)).toBe(false);
    expect(pathExists(ROOT, 'docs/api.md', '.ci/run', names)).toBe(true);
    expect(pathExists(ROOT, 'docs/api.md', '.ci/test', names)).toBe(false);
    expect(pathExists(ROOT, 'bench/README.md', 'run/servers.ts', names)).toBe(true);
    expect(pathExists(ROOT, 'docs/architecture.md', 'plant.entity.ts', names)).toBe(true);
  });

  it("reads a document's links to files and sections, not to the web nor inside code", () => {
    const document = [
      'See [Scaling](scaling.md#tests-and-ci), [the table](#where-to-change-what), [the client](../clients/typescript)',
      'and [tsup](https://tsup.egoist.dev). `[not](a-link.md)`',
      '```',
      '[nor](this.md)',
      '```',
    ].join('\n');
    expect(linksOf('docs/architecture.md', document)).toEqual([
      { text: 'Scaling', path: 'docs/scaling.md', anchor: 'tests-and-ci' },
      { text: 'the table', path: 'docs/architecture.md', anchor: 'where-to-change-what' },
      { text: 'the client', path: 'clients/typescript', anchor: undefined },
    ]);
  });

  it("makes a heading's anchor as GitHub does, numbering a repeated one", () => {
    expect(anchorOf('Node.js lines')).toBe('nodejs-lines');
    expect(anchorOf('The request line (`npm run bench:log-line`)')).toBe('the-request-line-npm-run-benchlog-line');
    expect(anchorOf('Where to change what')).toBe('where-to-change-what');
    expect([...anchorsOf('# Usage\n## Tests\n```\n# not a heading\n```\n## Tests\n')]).toEqual([
      'usage',
      'tests',
      'tests-1',
    ]);
  });

  it('reads the npm scripts a document tells its reader to run, with their workspace', () => {
    expect(
      npmScriptsOf('run `npm run docs`, then `npm run generate -w clients/typescript`; `npm run bench:*` each'),
    ).toEqual([{ script: 'docs' }, { script: 'generate', workspace: 'clients/typescript' }]);
  });
});
