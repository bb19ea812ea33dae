import type { OpenAPIObject } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { RequestLogEntity } from '../modules/logging/entities/request-log.entity';
import { toLogResponse } from '../modules/logging/logs.service';
import { openApiDocumentOffline } from './openapi-document';

jest.setTimeout(60_000);

/**
 * The response schemas are classes written beside the mappers that build the answers (the
 * services return plain objects): these tests keep each schema's properties those of its
 * mapper's output, so the dashboard's generated types cannot silently fall behind.
 */
describe('the response schemas of the OpenAPI document', () => {
  let document: OpenAPIObject;
  beforeAll(async () => {
    document = await openApiDocumentOffline();
  });

  /** A schema's properties, required ones apart. */
  function propertiesOf(name: string): { all: string[]; required: string[] } {
    const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
    if (!schema?.properties) throw new Error(`no schema ${name} with properties in the document`);
    return { all: Object.keys(schema.properties).sort(), required: [...(schema.required ?? [])].sort() };
  }

  it("LogRowResponseDto: toLogResponse's keys, those always there required, the bodies, totals and snippet optional", () => {
    // A row read without its bodies (include_bodies=false) has none of the body columns.
    const row = Object.assign(new RequestLogEntity(), { createdAt: new Date() });
    const always = Object.keys(toLogResponse(row)).sort();
    const withBodies = Object.keys(
      toLogResponse(Object.assign(new RequestLogEntity(), { createdAt: new Date(), requestBody: {}, responseBody: {}, requestHeaders: {} })),
    );
    // `totals`: GET /v1/logs/{id} of a request (LogsService.get); `snippet`: a search's rows (LogsService.addSnippets).
    const every = [...withBodies, 'totals', 'snippet'].sort();

    const schema = propertiesOf('LogRowResponseDto');
    expect(schema.all).toEqual(every);
    expect(schema.required).toEqual(always);
  });

  it("the log list's page: object, data of LogRowResponseDto, next_cursor", () => {
    expect(propertiesOf('LogRowListResponseDto')).toEqual({ all: ['data', 'next_cursor', 'object'], required: ['data', 'next_cursor', 'object'] });
    const list = document.paths['/v1/logs'].get?.responses['200'] as { content: Record<string, { schema: unknown }> };
    expect(list.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LogRowListResponseDto' });
  });
});
