import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A fact a document states, written between markers from the code that defines it, so the prose
 * around it stays the writer's and the value stays the code's:
 *
 *     at most <!-- fact: body-limit -->16 KiB<!-- /fact --> on the wire
 *
 * A block fact (a table) has its markers on lines of their own, with a blank line on each side of
 * what they hold. `npm run docs` rewrites every fact of every document (scripts/docs/write.ts);
 * scripts/docs/docs.spec.ts fails while one differs from the code.
 */
export interface Fact {
  text: string;
  block?: boolean;
  /**
   * What names the fact in a sentence (a setting's name, the option it is the default of): the
   * docs check refuses its value typed outside the markers in a sentence so named
   * (scripts/docs/typed-numbers.ts).
   */
  about?: RegExp;
}

export type Facts = Readonly<Record<string, Fact>>;

export const DOCS_COMMAND = 'npm run docs';

/** The hand-written Markdown of the repository: every document a fact may be stated in. */
export function documents(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', ...docs, 'clients/typescript/README.md', 'bench/README.md'];
}

const MARKED = /<!-- fact: ([^\s>]+) -->([\s\S]*?)<!-- \/fact -->/g;

export interface Stated {
  name: string;
  /** What the document holds between the markers, as the writer would write it for a block. */
  text: string;
  /** Where the opening marker is. */
  index: number;
}

/** Every fact a document states, in order. */
export function statedFacts(document: string): Stated[] {
  return [...document.matchAll(MARKED)].map((match) => ({
    name: match[1],
    text: match[2].startsWith('\n') ? match[2].trim() : match[2],
    index: match.index,
  }));
}

/** What a fact reads as between its markers. */
function between(fact: Fact): string {
  return fact.block ? `\n\n${fact.text}\n\n` : fact.text;
}

/**
 * The document with every fact rewritten from `facts`. A fact it names but `facts` lacks, an
 * inline fact at the start of a line (Markdown would read the line as HTML) and a block fact
 * inside a line are refused, naming the file.
 */
export function withFacts(file: string, document: string, facts: Facts): string {
  return document.replace(MARKED, (marked: string, name: string, _text: string, index: number) => {
    const fact = facts[name];
    if (fact === undefined)
      throw new Error(`${file} states an unknown fact "${name}" (scripts/docs/facts.ts lists them)`);
    const atLineStart = index === 0 || document[index - 1] === '\n';
    const lineEnds = document[index + marked.length] === undefined || document[index + marked.length] === '\n';
    if (fact.block && !(atLineStart && lineEnds)) {
      throw new Error(`${file}: the block fact "${name}" must have its markers on lines of their own`);
    }
    if (!fact.block && atLineStart) {
      throw new Error(`${file}: the fact "${name}" must not open a line, where Markdown reads it as HTML`);
    }
    return `<!-- fact: ${name} -->${between(fact)}<!-- /fact -->`;
  });
}

/** The facts a document states otherwise than the code does, each with what it says and what the code says. */
export function staleFacts(document: string, facts: Facts): { name: string; stated: string; fact: string }[] {
  return statedFacts(document)
    .filter(({ name, text }) => facts[name] !== undefined && facts[name].text !== text)
    .map(({ name, text }) => ({ name, stated: text, fact: facts[name].text }));
}

/** A Markdown table with its columns aligned the way Prettier aligns them. */
export function markdownTable(header: string[], rows: string[][]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replace(/\|/g, '\\|')));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}
