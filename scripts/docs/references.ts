import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

/**
 * What a document sends its reader to: files of the repository, other documents and their
 * sections, and npm scripts. scripts/docs/docs.spec.ts holds each to the tree, so a renamed file,
 * page, heading or script cannot leave a page pointing nowhere.
 */

/** Folders never part of a reader's repository: installs, builds and what runs write. */
const NOT_IN_THE_REPOSITORY = new Set(['node_modules', 'dist', '.git', 'test-artifacts', 'data', 'coverage', '.out']);

/**
 * What a document names in backticks as a path that reads like one of the repository's: with a
 * folder (`src/plants/plants.limits.ts`, `.ci/run`, `run/servers.ts` in bench's README) when its
 * first folder is one of the repository's (from the root or from the document's folder), or a
 * file name with an extension (`ormconfig.ts`). Patterns (`src/**\/*.spec.ts`) are not names.
 */
export function namedPaths(root: string, file: string, document: string): string[] {
  const folder = dirname(file);
  const isEntry = (segment: string) => existsSync(join(root, segment)) || existsSync(join(root, folder, segment));
  return [...document.matchAll(/`([\w.-]+(?:\/[\w.-]+)*\/?)`/g)]
    .map(([, path]) => path)
    .filter((path) => {
      const segments = path.split('/').filter(Boolean);
      if (segments.some((segment) => NOT_IN_THE_REPOSITORY.has(segment))) return false;
      if (segments.length > 1) return isEntry(segments[0]) || segments[0] === '.ci';
      return /^[\w-][\w.-]*\.(ts|mjs|js|json|ya?ml|md|sh|cfg)$/.test(path) || /^\.[\w-]+(\.[\w-]+)*\/?$/.test(path);
    });
}

/**
 * Names of files in backticks that are not the repository's, each with why: a reader's own file,
 * a package's, a method, or what a build or a run writes.
 */
const NAMED_BUT_NOT_OURS: Readonly<Record<string, string>> = {
  '.env': "a deployment's own settings, written from .env.example",
  'res.json': "Express's method",
  'swagger-ui-bundle.js': 'served from the swagger-ui-dist package',
  'lossless-json.js': 'served from the lossless-json package',
  'index.mjs': "the client's build, in its dist/",
  'index.js': "the client's build, in its dist/",
  'index.d.ts': "the client's build, in its dist/",
  'results.json': 'what a bench run writes, in bench/.out/',
};

/**
 * Whether a path a document names is in the tree: from the root or the document's folder, or,
 * for a bare file name, as the name of a file anywhere in it ("`plant.entity.ts` (the table)" in a
 * paragraph about its folder).
 */
export function pathExists(root: string, file: string, path: string, fileNames: ReadonlySet<string>): boolean {
  if (path in NAMED_BUT_NOT_OURS) return true;
  if (existsSync(join(root, path)) || existsSync(join(root, dirname(file), path))) return true;
  return !path.includes('/') && fileNames.has(path);
}

/** The names of the repository's files, for bare names (pathExists). */
export function fileNamesIn(root: string): Set<string> {
  const names = new Set<string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (NOT_IN_THE_REPOSITORY.has(entry.name)) continue;
      if (entry.isDirectory()) walk(join(folder, entry.name));
      else names.add(entry.name);
    }
  };
  walk(root);
  return names;
}

/** A Markdown link of a document to a file of the repository, with the section it names, if any. */
export interface Link {
  text: string;
  /** The target's path from the root. */
  path: string;
  anchor?: string;
}

/** The document's links to the repository's files and sections (not to the web), outside code. */
export function linksOf(file: string, document: string): Link[] {
  const prose = document.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)]
    .filter(([, , target]) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map(([, text, target]) => {
      const [path, anchor] = target.split('#');
      return { text, path: path === '' ? file : normalize(join(dirname(file), path)), anchor };
    });
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown document's headings, repeated ones numbered as GitHub does. */
export function anchorsOf(document: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const prose = document.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of prose.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const anchor = anchorOf(heading);
    const count = seen.get(anchor) ?? 0;
    seen.set(anchor, count + 1);
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
  }
  return anchors;
}

/** The npm scripts a document tells its reader to run, with the workspace each is run in (`-w`). */
export function npmScriptsOf(document: string): { script: string; workspace?: string }[] {
  return [...document.matchAll(/npm run ([\w:.-]+)(?:[^\n`|]*?-w ([\w/.-]+))?/g)]
    .filter(([, script]) => !script.endsWith(':'))
    .map(([, script, workspace]) => ({ script, workspace }));
}

/** The scripts of a package.json of the repository (the root's, or a workspace's), with their commands. */
export function scriptCommands(root: string, workspace = '.'): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, workspace, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  return pkg.scripts ?? {};
}

/** The names of the scripts of a package.json of the repository. */
export function scriptsOf(root: string, workspace = '.'): Set<string> {
  return new Set(Object.keys(scriptCommands(root, workspace)));
}
