// An OpenAPI document (JSON on stdin) as TypeScript types (stdout), by openapi-typescript.
// A separate Node process: openapi-typescript loads ES modules that jest's require cannot
// (src/openapi/api-types.ts runs it for `npm run api-types` and its drift test alike).
import openapiTS, { astToString } from 'openapi-typescript';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const ast = await openapiTS(JSON.parse(Buffer.concat(chunks).toString('utf8')));
process.stdout.write(astToString(ast));
