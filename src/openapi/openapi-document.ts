/**
 * The gateway's OpenAPI document: served at /docs (app.factory.ts) and, built without a
 * database (Nest's preview mode: the modules and routes, no provider made), the source of
 * the dashboard's API types (`npm run api-types`, `dashboard/src/api-types.ts`).
 */
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AppModule } from '../app.module';
import { validateEnvironment } from '../config/environment';

/** The document of a built application's routes. */
export function openApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('AI Gateway')
      .setDescription('OpenAI- and Anthropic-compatible gateway: routing, keys, logging and cost. See README.md.')
      .setVersion('1')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'x-gateway-api-key' }, 'gateway-api-key')
      .build(),
  );
  return withUniqueOperationIds(document);
}

/**
 * One handler on two paths (`@All(['', ':slug'])`) gets one operationId twice, which OpenAPI
 * forbids (and openapi-typescript refuses): the second and later take their path's position.
 */
function withUniqueOperationIds(document: OpenAPIObject): OpenAPIObject {
  const seen = new Map<string, number>();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as { operationId?: unknown }[]) {
      if (typeof operation !== 'object' || operation === null || typeof operation.operationId !== 'string') continue;
      const count = (seen.get(operation.operationId) ?? 0) + 1;
      seen.set(operation.operationId, count);
      if (count > 1) operation.operationId = `${operation.operationId}_${count}`;
    }
  }
  return document;
}

/**
 * The document with no database, network or environment: the application's module graph in
 * preview mode (controllers and their metadata read, no provider instantiated, nothing
 * connected), under an environment of placeholders that nothing reads.
 */
export async function openApiDocumentOffline(): Promise<OpenAPIObject> {
  const env = validateEnvironment({
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
    GATEWAY_ENCRYPTION_KEY: '0'.repeat(64),
  });
  const app = await NestFactory.create(AppModule.forRoot(env), { preview: true, logger: false, abortOnError: false });
  try {
    return openApiDocument(app);
  } finally {
    await app.close();
  }
}
