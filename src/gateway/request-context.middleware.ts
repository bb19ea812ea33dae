import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { traceIdFrom } from '../common/ids';
import { RequestLogger } from '../modules/logging/request-logger.service';
import { attachContext, RequestContext } from './request-context';


/**
 * First step of the request path: one RequestContext per request, the trace and
 * request ids on the response, and the log record written when the response closes
 * (however it ends: success, error, or the client going away mid-stream).
 */
@Injectable()
export class RequestContextMiddleware implements NestMiddleware {
  constructor(private readonly requestLogger: RequestLogger) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const traceId = traceIdFrom(req.headers['x-gateway-trace-id']);
    const context = new RequestContext(traceId, req.headers);
    attachContext(req, context);
    res.setHeader('x-gateway-trace-id', traceId);
    res.setHeader('x-gateway-request-id', context.requestId);
    this.requestLogger.opened();
    res.once('close', () => {
      if (!res.writableFinished) context.abort.abort();
      this.requestLogger.closed(context, req, res);
    });
    next();
  }
}
