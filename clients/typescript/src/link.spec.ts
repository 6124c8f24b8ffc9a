import { isUnder, nextLink } from './link';

describe('nextLink', () => {
  const base = new URL('http://127.0.0.1:3000/plants?limit=2');

  it('resolves the rel="next" target against the page it came with', () => {
    expect(nextLink('</plants?limit=2&after=41>; rel="next"', base)?.href).toBe(
      'http://127.0.0.1:3000/plants?limit=2&after=41',
    );
  });

  // RFC 3986 §5.2 against the request's URL: a relative reference keeps a gateway's path prefix,
  // a root-relative one (as an older service sends) does not.
  it.each([
    ['plants?limit=20&after=5', 'http://gw.test/plant-store/plants?limit=20&after=5'],
    ['./plants?limit=20&after=5', 'http://gw.test/plant-store/plants?limit=20&after=5'],
    ['?limit=20&after=5', 'http://gw.test/plant-store/plants?limit=20&after=5'],
    ['/plants?limit=20&after=5', 'http://gw.test/plants?limit=20&after=5'],
    ['../plants?after=5', 'http://gw.test/plants?after=5'],
    ['//other.test/plant-store/plants', 'http://other.test/plant-store/plants'],
  ])('resolves <%s> from a page behind a path-prefix gateway to %s', (target, resolved) => {
    const page = new URL('http://gw.test/plant-store/plants?limit=20');
    expect(nextLink(`<${target}>; rel="next"`, page)?.href).toBe(resolved);
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

describe('isUnder', () => {
  const prefixed = new URL('http://gw.test/plant-store/');
  const root = new URL('http://plants.test/');

  it.each([
    [prefixed, 'http://gw.test/plant-store/plants?after=5'],
    [prefixed, 'http://gw.test:80/plant-store/plants'],
    [root, 'http://plants.test/plants?after=5'],
  ])('takes %s as the base of %s', (base, target) => {
    expect(isUnder(new URL(target), base)).toBe(true);
  });

  it.each([
    [prefixed, 'http://gw.test/plants?after=5'], // root-relative from behind the gateway
    [prefixed, 'http://gw.test/plant-store-admin/plants'],
    [prefixed, 'http://gw.test/plant-store/%2e%2e/admin/plants'],
    [prefixed, 'https://gw.test/plant-store/plants'],
    [prefixed, 'http://gw.test:8080/plant-store/plants'],
    [prefixed, 'http://user:pw@gw.test/plant-store/plants'],
    [root, 'http://elsewhere.test/plants'],
  ])('refuses, under %s, %s', (base, target) => {
    expect(isUnder(new URL(target), base)).toBe(false);
  });
});
