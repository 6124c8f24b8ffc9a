import { markdownTable, staleFacts, statedFacts, withFacts } from './fragments';

const FACTS = {
  limit: { text: '16 KiB' },
  table: { block: true, text: '| a   |\n| --- |\n| 1   |' },
};

describe(withFacts.name, () => {
  it('rewrites an inline fact between its markers and leaves the prose around it', () => {
    const document = 'Bodies up to <!-- fact: limit -->8 KiB<!-- /fact --> are read.\n';
    expect(withFacts('a.md', document, FACTS)).toBe(
      'Bodies up to <!-- fact: limit -->16 KiB<!-- /fact --> are read.\n',
    );
  });

  it('rewrites a block fact with a blank line on each side of it', () => {
    const document = 'Before:\n\n<!-- fact: table -->\n| old |\n<!-- /fact -->\n\nAfter.\n';
    expect(withFacts('a.md', document, FACTS)).toBe(
      `Before:\n\n<!-- fact: table -->\n\n${FACTS.table.text}\n\n<!-- /fact -->\n\nAfter.\n`,
    );
  });

  it('changes nothing in a document that states every fact as the code has it', () => {
    const document = withFacts(
      'a.md',
      'A <!-- fact: limit --><!-- /fact -->\n\n<!-- fact: table --><!-- /fact -->\n',
      FACTS,
    );
    expect(withFacts('a.md', document, FACTS)).toBe(document);
    expect(staleFacts(document, FACTS)).toEqual([]);
  });

  it('refuses an unknown fact, naming the file and the fact', () => {
    expect(() => withFacts('docs/a.md', 'A <!-- fact: nothing -->1<!-- /fact -->', FACTS)).toThrow(
      'docs/a.md states an unknown fact "nothing"',
    );
  });

  it('refuses an inline fact that opens a line, and a block fact inside one', () => {
    expect(() => withFacts('a.md', 'A\n<!-- fact: limit -->1<!-- /fact --> B', FACTS)).toThrow(/must not open a line/);
    expect(() => withFacts('a.md', 'A <!-- fact: table --><!-- /fact -->', FACTS)).toThrow(/lines of their own/);
  });
});

describe(staleFacts.name, () => {
  it('names each fact a document states otherwise, with what it says and what the code says', () => {
    const document = 'A <!-- fact: limit -->8 KiB<!-- /fact -->, B <!-- fact: limit -->16 KiB<!-- /fact -->';
    expect(staleFacts(document, FACTS)).toEqual([{ name: 'limit', stated: '8 KiB', fact: '16 KiB' }]);
    expect(statedFacts(document).map(({ name }) => name)).toEqual(['limit', 'limit']);
  });
});

describe(markdownTable.name, () => {
  it('aligns the columns as Prettier does, escaping pipes', () => {
    expect(markdownTable(['a', 'long header'], [['x|y', '1']])).toBe(
      ['| a    | long header |', '| ---- | ----------- |', '| x\\|y | 1           |'].join('\n'),
    );
  });
});
