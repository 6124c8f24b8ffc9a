import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SETTINGS } from '../../src/config/configuration';
import { ROOT, facts } from './facts';
import { DOCS_COMMAND, documents, staleFacts, statedFacts, withFacts } from './fragments';
import { ENV_EXAMPLE, envExample } from './settings';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const FACTS = facts();
const DOCUMENTS = documents(ROOT);

describe('facts stated in the docs', () => {
  it.each(DOCUMENTS)('%s states each fact as the code has it', (file) => {
    const document = read(file);
    expect(() => withFacts(file, document, FACTS)).not.toThrow();
    const stale = staleFacts(document, FACTS).map(({ name, stated, fact }) =>
      stated.includes('\n')
        ? `"${name}"`
        : `"${name}" (says ${JSON.stringify(stated)}, the code ${JSON.stringify(fact)})`,
    );
    if (stale.length > 0) throw new Error(`${file}: ${stale.join(', ')} differ from the code; run \`${DOCS_COMMAND}\``);
  });

  it(`${ENV_EXAMPLE} is what the settings declare`, () => {
    if (read(ENV_EXAMPLE) !== envExample(SETTINGS)) {
      throw new Error(`${ENV_EXAMPLE} differs from the settings' declarations; run \`${DOCS_COMMAND}\``);
    }
  });

  it('has every fact stated somewhere, so none is kept for nothing', () => {
    const stated = new Set(DOCUMENTS.flatMap((file) => statedFacts(read(file)).map(({ name }) => name)));
    const unstated = Object.keys(FACTS).filter((name) => !stated.has(name) && !name.startsWith('default:'));
    expect(unstated).toEqual([]);
  });
});
