/**
 * The target of the `rel="next"` link of an RFC 8288 `Link` field, resolved against the URL of
 * the answer that carried it; undefined on the last page.
 */
export function nextLink(field: string | null, base: URL): URL | undefined {
  if (!field) return undefined;
  // Each link is `<target>` then its `;`-separated parameters, up to the next target; a target may
  // hold commas, so links are told apart by their brackets, not split on commas.
  for (const [, target, params] of field.matchAll(/<([^>]*)>([^<]*)/g)) {
    for (const param of params.split(';')) {
      const match = /^\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))\s*,?\s*$/i.exec(param);
      const rels = (match?.[1] ?? match?.[2] ?? '').toLowerCase().split(/\s+/);
      if (rels.includes('next')) return new URL(target, base);
    }
  }
  return undefined;
}
