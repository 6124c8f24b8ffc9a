#!/usr/bin/env bash
# The TypeScript client as it ships: `npm pack` of clients/typescript (its prepack builds it),
# unpacked where a user's install would put it, then loaded by its package name from JavaScript and
# type-checked from TypeScript, so `exports`, `types` and `files` are checked, not only the source.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

tarball=$(npm pack --silent --pack-destination "$work" -w clients/typescript | tail -1)
mkdir -p "$work/node_modules/@plant-store/client"
tar -xzf "$work/$tarball" -C "$work/node_modules/@plant-store/client" --strip-components=1
# Its one dependency, and Node's types for the type check, from this tree.
ln -s "$root/node_modules/lossless-json" "$work/node_modules/lossless-json"
mkdir -p "$work/node_modules/@types"
ln -s "$root/node_modules/@types/node" "$work/node_modules/@types/node"
ln -s "$root/node_modules/undici-types" "$work/node_modules/undici-types"

cd "$work"
node -e '
  const { createClient, PlantStoreError } = require("@plant-store/client");
  const fetch = async () => new Response("{\"id\":9223372036854775807,\"name\":\"Packed\"}", { status: 200 });
  createClient({ baseUrl: "http://127.0.0.1:1", token: "pst_x", fetch })
    .plants.create({ id: 9223372036854775807n, name: "Packed" })
    .then((plant) => {
      if (plant.id !== 9223372036854775807n || typeof PlantStoreError !== "function") process.exit(1);
      console.log("the packed client loads by its name and reads ids exactly");
    }, (error) => { console.error(error); process.exit(1); });
'
cat >consumer.ts <<'TS'
import { createClient, PlantStoreError, type Plant } from '@plant-store/client';
const client = createClient({ baseUrl: 'http://127.0.0.1:3000', token: 'pst_x' });
export async function first(): Promise<Plant | undefined> {
  try {
    for await (const plant of client.plants.list({ limit: 10 })) return plant;
  } catch (error) {
    if (error instanceof PlantStoreError && error.status === 404) return undefined;
    throw error;
  }
  return undefined;
}
export const id: bigint = 1n;
TS
"$root/node_modules/.bin/tsc" --noEmit --strict --target ES2022 --module node16 --moduleResolution node16 --types node consumer.ts
echo "the packed client's types check from TypeScript (node16 resolution)"
