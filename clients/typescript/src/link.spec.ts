import { nextLink } from './link';

describe('nextLink', () => {
  const base = new URL('http://127.0.0.1:3000/plants?limit=2');

  it('resolves the rel="next" target against the page it came with', () => {
    expect(nextLink('</plants?limit=2&after=41>; rel="next"', base)?.href).toBe(
      'http://127.0.0.1:3000/plants?limit=2&after=41',
    );
  });

  it('finds next among several links, rel values and parameters, in any case', () => {
    const field = '</plants?after=1>; rel="prev", </plants?a=1,2&after=9>; title="x"; REL="Next last"';
    expect(nextLink(field, base)?.search).toBe('?a=1,2&after=9');
    expect(nextLink('<https://other.example/p>;rel=next', base)?.href).toBe('https://other.example/p');
  });

  it.each([null, '', '</plants?after=1>; rel="prev"', '</plants?after=1>; rel="nextpage"'])(
    'is undefined for %j (the last page)',
    (field) => {
      expect(nextLink(field, base)).toBeUndefined();
    },
  );
});
