/**
 * A test for "is this path one of the API's routes", built from the OpenAPI document's path
 * templates (`/plants/{id}`): a `{param}` is one path segment. Paths match as Express routes them:
 * case-insensitive, with an optional trailing slash.
 */
export function documentedPathMatcher(templates: Iterable<string>): (path: string) => boolean {
  const alternatives = [...templates].map((template) =>
    template
      .split(/\{[^}/]+\}/)
      .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+'),
  );
  if (alternatives.length === 0) return () => false;
  const pattern = new RegExp(`^(?:${alternatives.join('|')})/?$`, 'i');
  return (path) => pattern.test(path);
}
