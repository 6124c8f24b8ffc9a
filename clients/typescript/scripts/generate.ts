import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { ANSWERS_PATH, answersText } from './answers';
import { int64AsBigint } from './int64-as-bigint';

/** The service's committed OpenAPI document, the one source of the client's types and checks (scripts/answers.ts). */
const OPENAPI_PATH = join(__dirname, '..', '..', '..', 'openapi.json');
export const SCHEMA_PATH = join(__dirname, '..', 'src', 'schema.ts');

const HEADER =
  '// Generated from openapi.json by `npm run generate -w clients/typescript`: do not edit.\n' +
  '// src/schema.spec.ts fails when this file is stale.\n\n';

/** The text of src/schema.ts for the committed openapi.json. */
export async function generateSchema(): Promise<string> {
  const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenAPI3;
  return HEADER + astToString(await openapiTS(document, { transform: int64AsBigint }));
}

// `--stdout` prints the text of src/schema.ts instead of writing the files: the staleness test
// compares it with the file.
if (require.main === module) {
  generateSchema().then(
    (text) => {
      if (process.argv.includes('--stdout')) {
        process.stdout.write(text);
      } else {
        writeFileSync(SCHEMA_PATH, text);
        writeFileSync(ANSWERS_PATH, answersText());
        process.stdout.write(`Wrote ${SCHEMA_PATH} and ${ANSWERS_PATH}\n`);
      }
    },
    (error: unknown) => {
      process.stderr.write(`${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
