/**
 * `npm run api-types`: the OpenAPI document built without a database, written to
 * dist/openapi.json, and its types to dashboard/src/api-types.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { API_TYPES_FILE, apiTypesSource } from './api-types';
import { openApiDocumentOffline } from './openapi-document';

async function main(): Promise<void> {
  const document = await openApiDocumentOffline();
  mkdirSync(resolve('dist'), { recursive: true });
  writeFileSync(resolve('dist/openapi.json'), JSON.stringify(document, null, 2) + '\n');
  writeFileSync(API_TYPES_FILE, apiTypesSource(document));
  process.stdout.write(`dist/openapi.json and ${API_TYPES_FILE} written\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
