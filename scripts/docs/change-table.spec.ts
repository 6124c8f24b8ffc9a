import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const PAGE = 'docs/architecture.md';
/** The most hand-written files a common change may need (generated ones apart). */
const MOST_FILES = 4;
/** The feature folders `<feature>` stands for: a path with it is in the tree when one of them has it. */
const FEATURES = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** A file name as the table names one: with the extension of a source, a document or a setting. */
const FILE = /\.(ts|js|json|md|ya?ml|sh)$/;

interface Row {
  change: string;
  edit: string[];
}

/** The rows of the page's "Where to change what" table, each with the files its column "edit" names. */
function changeTable(): Row[] {
  const page = readFileSync(join(ROOT, PAGE), 'utf8');
  const section = page.slice(page.indexOf('## Where to change what'));
  const lines = section.split('\n').filter((line) => line.startsWith('|'));
  const header = lines[0].split('|').map((cell) => cell.trim());
  expect(header.slice(1, 3)).toEqual(['change', 'edit']);
  return lines.slice(2).map((line) => {
    const [change, edit] = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const paths = [...edit.matchAll(/`([^`\s]+)`/g)]
      .map(([, name]) => name)
      .filter((name) => /^[\w.<>-]+(\/[\w.<>-]+)*\/?$/.test(name) && (name.includes('/') || FILE.test(name)));
    return { change, edit: [...new Set(paths)] };
  });
}

describe(`${PAGE}, "Where to change what"`, () => {
  const rows = changeTable();

  it('has a row for each of the common changes', () => {
    expect(rows.map(({ change }) => change)).toEqual(
      expect.arrayContaining([
        'add a field to plants, end to end',
        'add a route',
        'add a setting',
        'add a webhook event type',
        'add a metric',
        'add a table',
      ]),
    );
  });

  it.each(rows.map((row) => [row.change, row] as const))(
    `"%s" names at most ${MOST_FILES} files to edit, each of them in the tree`,
    (_, { edit }) => {
      expect(edit.length).toBeGreaterThan(0);
      expect(edit.length).toBeLessThanOrEqual(MOST_FILES);
      const missing = edit.filter(
        (path) => !FEATURES.some((feature) => existsSync(join(ROOT, path.replaceAll('<feature>', feature)))),
      );
      expect(missing).toEqual([]);
    },
  );
});
