import { documentedPathMatcher } from './documented-paths';

describe(documentedPathMatcher.name, () => {
  const isApiPath = documentedPathMatcher(['/plants', '/plants/{id}', '/health/live']);

  it.each(['/plants', '/plants/', '/Plants', '/plants/42', '/plants/abc', '/health/live', '/HEALTH/LIVE/'])(
    'knows %s',
    (path) => {
      expect(isApiPath(path)).toBe(true);
    },
  );

  it.each(['/', '/nowhere', '/plants/1/2', '/plants//', '/plantsx', '/health', '/health/live/x', '/docs', '/xplants'])(
    'does not know %s',
    (path) => {
      expect(isApiPath(path)).toBe(false);
    },
  );

  it('reads template literals literally', () => {
    const matcher = documentedPathMatcher(['/a.b']);
    expect(matcher('/a.b')).toBe(true);
    expect(matcher('/axb')).toBe(false);
  });

  it('knows nothing without templates', () => {
    expect(documentedPathMatcher([])('/plants')).toBe(false);
  });
});
