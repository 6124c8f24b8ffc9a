import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS } from '../../src/config/configuration';
import { QUOTED_IN_CODE, ROOT, facts } from './facts';
import { DOCS_COMMAND, documents, staleFacts, statedFacts, withFacts } from './fragments';
import { typedFacts } from './typed-numbers';
import { anchorsOf, fileNamesIn, linksOf, namedPaths, npmScriptsOf, pathExists, scriptsOf } from './references';
import { needsToken, routesOf } from './routes';
import { ENV_EXAMPLE, envExample } from './settings';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const FACTS = facts();
const DOCUMENTS = documents(ROOT);
const ROUTES = routesOf(ROOT);

/** Routes the docs name that are not the API's: the metrics listener's, on its own port. */
const NOT_IN_THE_DOCUMENT = ['GET /metrics'];

describe('facts stated in the docs', () => {
  it.each(DOCUMENTS)('%s states each fact as the code has it', (file) => {
    const document = read(file);
    expect(() => withFacts(file, document, FACTS)).not.toThrow();
    const stale = staleFacts(document, FACTS).map(({ name, stated, fact }) =>
      stated.includes('\n') ? `the fact "${name}" differs from the code` : `"${name}" says ${stated}, the code ${fact}`,
    );
    if (stale.length > 0) throw new Error(`${file}: ${stale.join('; ')}; run \`${DOCS_COMMAND}\``);
  });

  // A number the code defines, typed rather than marked, goes stale silently (scripts/docs/typed-numbers.ts).
  it.each(DOCUMENTS)('%s types no fact outside its markers in a sentence that names it', (file) => {
    const typed = typedFacts(read(file), FACTS).map(
      ({ fact, written, sentence }) => `"${written}" (${fact}) in: ${sentence}`,
    );
    if (typed.length > 0) {
      throw new Error(`${file} types what is a fact; mark it and run \`${DOCS_COMMAND}\`:\n${typed.join('\n')}`);
    }
  });

  // The check finds a typed fact only in a sentence its `about` recognizes: each fact a document
  // states, typed there instead, must be found, or the check would not see it come back.
  it.each(DOCUMENTS)('%s would be refused with any fact it states typed in its place', (file) => {
    const document = read(file);
    const unseen = statedFacts(document)
      .filter(({ name }) => FACTS[name]?.about !== undefined)
      .filter(({ name, text, index }) => {
        const marked = `<!-- fact: ${name} -->${text}<!-- /fact -->`;
        const typed = document.slice(0, index) + text + document.slice(index + marked.length);
        return !typedFacts(typed, FACTS).some(({ fact }) => fact === name);
      });
    expect(unseen.map(({ name, text }) => `${name}: ${text}`)).toEqual([]);
  });

  // A merge's conflict left in a document reads as two versions of it, both checked as prose.
  it.each(DOCUMENTS)('%s holds no conflict markers of a merge', (file) => {
    expect(read(file).match(/^(<{7}|>{7}) .*$/gm) ?? []).toEqual([]);
  });

  it(`${ENV_EXAMPLE} is what the settings declare`, () => {
    if (read(ENV_EXAMPLE) !== envExample(SETTINGS)) {
      throw new Error(`${ENV_EXAMPLE} differs from the settings' declarations; run \`${DOCS_COMMAND}\``);
    }
  });

  it.each(QUOTED_IN_CODE.map((quote) => [quote.file, quote.fact, quote]))(
    '%s quotes %s in code as the code has it',
    (file, fact, { pattern }) => {
      const quoted = [...read(file).matchAll(pattern)].map((match) => match[1]);
      expect(quoted.length).toBeGreaterThan(0);
      expect({ file, fact, quoted }).toEqual({ file, fact, quoted: quoted.map(() => FACTS[fact].text) });
    },
  );

  it('has every fact stated somewhere, so none is kept for nothing', () => {
    const stated = new Set([
      ...DOCUMENTS.flatMap((file) => statedFacts(read(file)).map(({ name }) => name)),
      ...QUOTED_IN_CODE.map(({ fact }) => fact),
    ]);
    // A setting's declared values and an alert's durations are offered whether or not a document states them.
    const offered = /^(default|min|max|alert-for|alert-threshold):/;
    const unstated = Object.keys(FACTS).filter((name) => !stated.has(name) && !offered.test(name));
    expect(unstated).toEqual([]);
  });
});

describe('routes named in the docs', () => {
  const template = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
  const documented = (method: string, path: string) =>
    ROUTES.some((route) => route.method === method && template(route.path).test(path)) ||
    NOT_IN_THE_DOCUMENT.includes(`${method} ${path}`);

  it.each(DOCUMENTS)('%s names only routes of openapi.json', (file) => {
    const named = [...read(file).matchAll(/`(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\/[^`\s?]*)/g)].map(
      ([, method, path]) => `${method} ${path}`,
    );
    expect(named.filter((call) => !documented(...(call.split(' ') as [string, string])))).toEqual([]);
  });

  it("clients/typescript/README.md maps a client call to each of the API's routes", () => {
    const readme = read('clients/typescript/README.md');
    const mapped = new Set([...readme.matchAll(/^\| `[^`]+` +\| `([A-Z]+ \/[^`]*)`/gm)].map((match) => match[1]));
    expect(
      ROUTES.filter(needsToken)
        .map(({ method, path }) => `${method} ${path}`)
        .filter((call) => !mapped.has(call)),
    ).toEqual([]);
  });
});

describe('what the docs send a reader to', () => {
  const FILE_NAMES = fileNamesIn(ROOT);

  // "Where to change what" and every other page send a reader to files: each must exist.
  it.each(DOCUMENTS)('%s names only files that exist', (file) => {
    const named = namedPaths(ROOT, file, read(file));
    expect([...new Set(named.filter((path) => !pathExists(ROOT, file, path, FILE_NAMES)))]).toEqual([]);
  });

  it.each(DOCUMENTS)('%s links only to files and sections that exist', (file) => {
    const broken = linksOf(file, read(file)).filter(({ path, anchor }) => {
      if (!existsSync(join(ROOT, path))) return true;
      return anchor !== undefined && path.endsWith('.md') && !anchorsOf(read(path)).has(anchor);
    });
    expect(broken.map(({ text, path, anchor }) => `[${text}](${path}${anchor ? `#${anchor}` : ''})`)).toEqual([]);
  });

  it.each(DOCUMENTS)('%s tells its reader to run only npm scripts that exist', (file) => {
    const missing = npmScriptsOf(read(file)).filter(({ script, workspace }) => !scriptsOf(ROOT, workspace).has(script));
    expect(missing.map(({ script, workspace }) => `npm run ${script}${workspace ? ` -w ${workspace}` : ''}`)).toEqual(
      [],
    );
  });
});
