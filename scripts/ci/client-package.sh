#!/usr/bin/env bash
# The TypeScript client as it ships: built, its `npm pack` listing held to what a user needs, the
# tarball's types checked by @arethetypeswrong/cli for every resolution mode, then unpacked where
# a user's install would put it and loaded by its package name with `import` (ESM build) and
# `require` (CommonJS build) on this Node.js line, and type-checked from ESM and CommonJS
# TypeScript consumers (node16 and nodenext resolution), so `exports`, `types` and `files` are
# checked, not only the source.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

npm run build -w clients/typescript

# Exactly these files, and nothing else: no sources, specs, scripts, tsbuildinfo or source maps.
expected='CHANGELOG.md README.md dist/index.d.mts dist/index.d.ts dist/index.js dist/index.mjs package.json'
listed=$(npm pack --dry-run --json --ignore-scripts -w clients/typescript |
  node -e 'const [p] = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(p.files.map((f) => f.path).sort().join(" "))')
if [ "$listed" != "$expected" ]; then
  echo "the packed client holds: $listed" >&2
  echo "expected exactly:        $expected" >&2
  exit 1
fi
echo "the packed client holds only: $listed"

tarball=$(npm pack --silent --ignore-scripts --pack-destination "$work" -w clients/typescript | tail -1)
"$root/node_modules/.bin/attw" --format table-flipped "$work/$tarball"

mkdir -p "$work/node_modules/@plant-store/client"
tar -xzf "$work/$tarball" -C "$work/node_modules/@plant-store/client" --strip-components=1
# Its one dependency, and Node's types for the type check, from this tree.
ln -s "$root/node_modules/lossless-json" "$work/node_modules/lossless-json"
mkdir -p "$work/node_modules/@types"
ln -s "$root/node_modules/@types/node" "$work/node_modules/@types/node"
ln -s "$root/node_modules/undici-types" "$work/node_modules/undici-types"

cd "$work"
# Each build answers a call with ids exact; an error of either build is `instanceof` the class of
# the other (an application may load both).
cat >check.mjs <<'JS'
import { createRequire } from 'node:module';
import * as esm from '@plant-store/client';
const cjs = createRequire(import.meta.url)('@plant-store/client');
if (esm.createClient === cjs.createClient) throw new Error('import and require gave the same build');
const fetch = async () => new Response('{"id":9223372036854775807,"name":"Packed"}', { status: 200 });
for (const [name, build] of Object.entries({ esm, cjs })) {
  const { data, response } = await build
    .createClient({ baseUrl: 'http://127.0.0.1:1', token: 'pst_x', fetch })
    .plants.create({ id: 9223372036854775807n, name: 'Packed' })
    .withResponse();
  if (data.id !== 9223372036854775807n || response.status !== 200) throw new Error(`${name}: ${data.id}`);
}
const refused = async () => new Response('[]', { status: 200 });
const failure = await esm
  .createClient({ baseUrl: 'http://127.0.0.1:1', token: 'pst_x', fetch: refused, retries: 0 })
  .plants.create({ id: 1n, name: 'x' })
  .catch((error) => error);
if (!(failure instanceof cjs.PlantStoreError) || failure.kind !== 'invalid-response') throw failure;
console.log('the packed client loads by its name with import (ESM) and require (CommonJS), ids exact');
JS
node check.mjs

cat >consumer.mts <<'TS'
import { createClient, PlantStoreError, type ApiResponse, type Plant } from '@plant-store/client';
const client = createClient({
  baseUrl: 'http://127.0.0.1:3000',
  token: 'pst_x',
  userAgent: 'consumer/1.0',
  headers: { 'X-Team': 'a' },
  hooks: { afterResponse: ({ method, url, status, durationMs }) => console.log(method, url, status, durationMs) },
});
export async function first(): Promise<Plant | undefined> {
  try {
    for await (const plant of client.plants.list({ limit: 10, timeoutMs: 2000 })) return plant;
  } catch (error) {
    if (error instanceof PlantStoreError && error.status === 404) return undefined;
    throw error;
  }
  return undefined;
}
export async function pages(): Promise<ApiResponse[]> {
  const responses: ApiResponse[] = [];
  for await (const page of client.plants.list().pages()) responses.push(page.response);
  return responses;
}
export const some: Promise<Plant[]> = client.plants.list().toArray({ max: 5 });
export const created: Promise<{ data: Plant; response: ApiResponse }> = client.plants
  .create({ id: 1n, name: 'x' })
  .withResponse();
export const id: bigint = 1n;
TS
# The same consumer as CommonJS: its imports compile to require() of the CommonJS build.
cp consumer.mts consumer.cts
for resolution in node16 nodenext; do
  "$root/node_modules/.bin/tsc" --noEmit --strict --target ES2022 --module "$resolution" \
    --moduleResolution "$resolution" --types node consumer.mts consumer.cts
  echo "the packed client's types check from ESM and CommonJS TypeScript ($resolution resolution)"
done
