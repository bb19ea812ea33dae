import cluster from 'node:cluster';
import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { WsAdapter } from '@nestjs/platform-ws';
import { SwaggerModule } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { answerParserErrors } from './common/http/client-error.handler';
import { setClientStreamLimits } from './common/http/client-stream';
import { applyServerTimeouts } from './common/http/server-timeouts';
import { jsonBody } from './common/http/json-body.middleware';
import { AppModule } from './app.module';
import { RequestContextMiddleware } from './gateway/request-context.middleware';
import { RequestLogger } from './modules/logging/request-logger';
import { RequestTracer } from './modules/telemetry/request-tracer';
import { writeError } from './gateway/gateway-exception.filter';
import type { Environment } from './config/environment';
import { PinoLogger } from './common/logging/pino-logger';
import { openApiDocument } from './openapi/openapi-document';

/** Builds the gateway application (used by `main.ts`, the tests and the benchmark). */
export async function createGatewayApp(env: Environment): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(env), {
    bodyParser: false,
    logger: new PinoLogger(env.LOG_LEVEL),
  });
  app.set('x-powered-by', false);
  app.set('etag', false);
  app.set('trust proxy', false);
  answerParserErrors(app.getHttpServer());
  // Hostile or broken clients (CONTRACT section 15): sockets that send nothing or trickle, streams no one reads.
  applyServerTimeouts(app.getHttpServer(), env);
  setClientStreamLimits(app, { bufferBytes: env.STREAM_CLIENT_BUFFER_BYTES, idleMs: env.STREAM_CLIENT_IDLE_MS });
  if (cluster.isWorker) {
    // WORKERS > 1: which worker answered, for operators (and the tests) telling them apart.
    const pid = String(process.pid);
    app.use((_req: Request, res: Response, next: NextFunction) => (res.setHeader('x-gateway-worker', pid), next()));
  }
  // The realtime API's WebSocket (RealtimeGateway) and the Responses API's (ResponsesSocketGateway) on the same server, with the `ws` package.
  app.useWebSocketAdapter(new WsAdapter(app));

  // JSON bodies up to the limit; a parse error or an oversized body gets the gateway's error shape.
  app.use(jsonBody(env.BODY_LIMIT_BYTES));
  const logger = new Logger('RequestBody');
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => (error ? writeError(req, res, error, logger) : next()));
  // Every request's context, as a plain Express middleware: through Nest's MiddlewareConsumer
  // each request also paid a path match, a wrapper and a WeakSet entry.
  const requestContext = new RequestContextMiddleware(app.get(RequestLogger), app.get(RequestTracer));
  app.use((req: Request, res: Response, next: NextFunction) => requestContext.use(req, res, next));

  if (env.DOCS_ENABLED) {
    const document = openApiDocument(app);
    SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json' });
  }

  // Last in the chain, after the routes and Nest's own error handling (hence the init here):
  // an error that still reaches Express is answered in JSON, never by its HTML page and stack.
  await app.init();
  const lastResort = new Logger('UnhandledError');
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => writeError(req, res, error, lastResort));

  // Signals are handled by main.ts (grace period, then app.close(), which runs the shutdown hooks).
  return app;
}
