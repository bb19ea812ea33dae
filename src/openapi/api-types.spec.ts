import { readFileSync } from 'node:fs';
import { API_TYPES_FILE, apiTypesSource } from './api-types';
import { openApiDocumentOffline } from './openapi-document';

jest.setTimeout(120_000);

describe("the dashboard's API types", () => {
  it('are those of the OpenAPI document as it is now (after a change of a DTO or controller: npm run api-types)', async () => {
    const document = await openApiDocumentOffline();
    // Built with no database: the admin routes are there all the same.
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/api-keys', '/v1/logs', '/v1/analytics/summary']));
    expect(readFileSync(API_TYPES_FILE, 'utf8') === apiTypesSource(document)).toBe(true);
  });
});
