import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { traceIdFrom } from '../common/ids';
import { RequestLogger } from '../modules/logging/request-logger';
import { RequestTracer } from '../modules/telemetry/request-tracer';
import { attachContext, RequestContext } from '../context/request-context';
import { googleKeyFromQuery } from '../modules/gemini/gemini-routing.guard';

/**
 * First step of the request path: one RequestContext per request, the trace and
 * request ids on the response, and the log record written when the response closes
 * (however it ends: success, error, or the client going away mid-stream). With
 * OpenTelemetry on, the request's root span starts here (continuing a `traceparent`),
 * its trace id is the request's unless `x-gateway-trace-id` names one, and the
 * response carries a `traceparent` naming it.
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  constructor(
    private readonly requestLogger: RequestLogger,
    private readonly tracer: RequestTracer,
  ) {}

  use(req: Request, res: Response, next: NextFunction): void {
    googleKeyFromQuery(req);
    const span = this.tracer.enabled ? this.tracer.begin(req.headers) : null;
    const traceId = traceIdFrom(req.headers['x-gateway-trace-id'], span?.spanContext().traceId);
    const context = new RequestContext(traceId, req.headers, span);
    attachContext(req, context);
    res.setHeader('x-gateway-trace-id', traceId);
    res.setHeader('x-gateway-request-id', context.requestId);
    if (span) res.setHeader('traceparent', this.tracer.traceparentOf(span));
    this.requestLogger.opened();
    res.once('close', () => {
      if (!res.writableFinished) context.abort.abort();
      this.requestLogger.closed(context, req, res);
    });
    next();
  }
}
