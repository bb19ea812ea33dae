import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, isDataException } from '../database/database-errors';
import type { Request, Response } from 'express';
import { maybeContextOf } from '../context/request-context';
import { ClientClosedRequestError, GatewayError, UpstreamHttpError } from '../common/errors/gateway-error';
import { routingHeaders } from '../modules/routing/gateway-result';
import { errorShapeOf } from '../modules/model-operation/dialects';

const NEST_STATUS_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
};

/** Any thrown value as a GatewayError; unknown errors become a 500 without details. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const body = error.getResponse() as { message?: string | string[] };
    const message = Array.isArray(body?.message) ? body.message.join('; ') : (body?.message ?? error.message);
    return new GatewayError(status, NEST_STATUS_TYPES[status] ?? 'api_error', message, status === 404 ? 'route_not_found' : null);
  }
  // PostgreSQL class 22 (data exception): a value from the request the database cannot
  // hold (a NUL character, a lone surrogate in JSON, a number out of range) is bad input.
  if (error instanceof QueryFailedError && isDataException(error)) {
    return GatewayError.invalidRequest(
      `A value in the request cannot be stored: ${(error.driverError as Error)?.message ?? error.message}`,
      null,
      'unstorable_value',
    );
  }
  // An admin call (or anything else that needs the database) during an outage: try again later.
  if (isDatabaseUnavailable(error)) return GatewayError.unavailable("The gateway's database is unreachable; try again shortly");
  return new GatewayError(500, 'api_error', 'Internal gateway error', 'internal_error');
}

/**
 * The one exception filter (CONTRACT section 3): OpenAI's error shape, Anthropic's on
 * `/v1/messages` and on `/v1/models` asked for in Anthropic's shape; upstream errors passed through as the provider sent them. Records
 * the error on the request context for the log.
 */
@Catch()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('GatewayExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    writeError(http.getRequest<Request>(), http.getResponse<Response>(), exception, this.logger);
  }
}

/**
 * Writes the error answer, and cannot fail: if writing it throws (a header value Node
 * refuses, a body that will not serialise), a minimal JSON error in the route's shape goes
 * instead, or, once the answer has begun, the socket is ended. Never Express's HTML page.
 */
export function writeError(req: Request, res: Response, exception: unknown, logger: Logger): void {
  try {
    answerError(req, res, exception, logger);
  } catch (failure) {
    writeMinimalError(req, res, exception);
    logger.error({ msg: 'Could not write an error answer; wrote a minimal one', error: failure instanceof Error ? failure.message : String(failure) });
  }
}

function answerError(req: Request, res: Response, exception: unknown, logger: Logger): void {
  const context = maybeContextOf(req);
  if (exception instanceof ClientClosedRequestError) {
    context?.noteFailure(exception);
    if (!res.headersSent) res.status(499);
    res.end();
    return;
  }
  // Errors say what routing did too: the provider tried, retries, target (CONTRACT section 2).
  if (context && !res.headersSent) setHeaders(res, routingHeaders(context));
  if (exception instanceof UpstreamHttpError) {
    context?.noteFailure(exception);
    if (res.headersSent) return void res.end();
    res.status(exception.status);
    setHeaders(res, { ...exception.headers, 'content-type': exception.contentType });
    res.end(exception.body);
    return;
  }

  const error = toGatewayError(exception);
  // Failures of the gateway or an upstream are what operators search for, by trace id.
  const traceId = context?.traceId;
  if (error.status >= 500 && error.code === 'internal_error')
    logger.error({ msg: 'Unexpected error', trace_id: traceId, stack: exception instanceof Error ? exception.stack : String(exception) });
  else if (error.status >= 500)
    logger.warn({
      msg: error.message,
      trace_id: traceId,
      status: error.status,
      code: error.code,
      provider: context?.lastAttempt?.provider ?? context?.provider ?? undefined,
    });
  context?.noteFailure(error);
  if (res.headersSent) return void res.end();
  res.status(error.status);
  setHeaders(res, error.headers);
  res.json(errorShapeOf(req.path, req.headers).body(error));
}

/** Sets each header Node accepts; one it refuses (a line break, a character past Latin-1) is left out rather than losing the whole answer. */
function setHeaders(res: Response, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    try {
      res.set(name, value);
    } catch {
      // Left out: the error itself matters more than this header.
    }
  }
}

/** The last resort: the error's status and type when they can be read, in the route's shape, with nothing taken from data. */
function writeMinimalError(req: Request, res: Response, exception: unknown): void {
  try {
    if (res.headersSent) return void res.destroy();
    const known = exception instanceof GatewayError && exception.status >= 400 && exception.status <= 599;
    const status = known ? exception.status : 500;
    const type = known ? exception.type : 'api_error';
    const message = known ? exception.message : 'Internal gateway error';
    const body = errorShapeOf(req.path ?? '', req.headers ?? {}).body({
      status,
      type,
      message,
      param: null,
      code: known ? exception.code : 'internal_error',
      details: {},
    });
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  } catch {
    res.destroy();
  }
}
