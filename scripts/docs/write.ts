import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { SETTINGS } from '../../src/config/configuration';
import { ROOT, facts } from './facts';
import { documents, staleFacts, withFacts } from './fragments';
import { ENV_EXAMPLE, envExample } from './settings';

/**
 * `npm run docs`: rewrites every fact the documents state from the code (scripts/docs/facts.ts),
 * and .env.example from the settings' declarations. A document whose facts changed is formatted
 * again with Prettier, since a fact in a table changes how its columns align.
 */
async function main(): Promise<void> {
  const known = facts();
  const written: string[] = [];
  for (const file of documents(ROOT)) {
    const path = join(ROOT, file);
    const before = readFileSync(path, 'utf8');
    const after = withFacts(file, before, known);
    if (after === before) continue;
    const formatted = await format(after, { ...(await resolveConfig(path)), filepath: path });
    // A fact Prettier writes otherwise (a table cell aside, which only changes its padding) would
    // never read as the code has it: the fact is to be written as Prettier writes it.
    const reformatted = staleFacts(formatted, known).map(({ name }) => name);
    if (reformatted.length > 0) throw new Error(`${file}: Prettier rewrites the fact ${reformatted.join(', ')}`);
    writeFileSync(path, formatted);
    written.push(file);
  }
  const example = envExample(SETTINGS);
  if (readFileSync(join(ROOT, ENV_EXAMPLE), 'utf8') !== example) {
    writeFileSync(join(ROOT, ENV_EXAMPLE), example);
    written.push(ENV_EXAMPLE);
  }
  process.stdout.write(written.length > 0 ? `Wrote ${written.join(', ')}\n` : 'Every fact is up to date\n');
}

void main();
