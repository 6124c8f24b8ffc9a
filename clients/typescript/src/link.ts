/**
 * The target of the `rel="next"` link of an RFC 8288 `Link` field, resolved against the URL of
 * the request the answer came with (RFC 3986 §5: `plants?after=5`, `./plants?after=5` and
 * `/plants?after=5` alike); undefined on the last page.
 */
export function nextLink(field: string | null, requestUrl: URL): URL | undefined {
  if (!field) return undefined;
  // Each link is `<target>` then its `;`-separated parameters, up to the next target; a target may
  // hold commas, so links are told apart by their brackets, not split on commas.
  for (const [, target, params] of field.matchAll(/<([^>]*)>([^<]*)/g)) {
    for (const param of params.split(';')) {
      const match = /^\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))\s*,?\s*$/i.exec(param);
      const rels = (match?.[1] ?? match?.[2] ?? '').toLowerCase().split(/\s+/);
      if (rels.includes('next')) return new URL(target, requestUrl);
    }
  }
  return undefined;
}

/**
 * Whether `target` is under `base` (whose path ends with `/`): the same origin, and a path within
 * its prefix. Behind a gateway at `https://gw/plant-store/` the rest of the origin is another
 * service, and the token must not go there.
 */
export function isUnder(target: URL, base: URL): boolean {
  return (
    target.origin === base.origin &&
    target.pathname.startsWith(base.pathname) &&
    target.username === '' &&
    target.password === ''
  );
}
