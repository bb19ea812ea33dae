import { ArgumentsHost, Catch, ExceptionFilter, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { GatewayError } from '../../common/errors/gateway-error';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * `/auth/login` and `/auth/callback` are opened by a browser: their failures are a page a
 * person can read (with a way back), or the gateway's JSON error shape for anything else.
 */
@Catch()
export class AuthPageFilter implements ExceptionFilter {
  private readonly logger = new Logger('AuthPageFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    let error: GatewayError;
    if (exception instanceof GatewayError) error = exception;
    else {
      this.logger.error({ msg: 'Sign-in failed unexpectedly', stack: exception instanceof Error ? exception.stack : String(exception) });
      error = new GatewayError(500, 'api_error', 'Sign-in failed unexpectedly on the gateway', 'internal_error');
    }
    if (res.headersSent) return void res.end();
    res.status(error.status).setHeader('cache-control', 'no-store');
    if ((req.headers.accept ?? '').includes('text/html')) {
      res
        .type('html')
        .send(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in failed</title></head>` +
            `<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;line-height:1.5"><h1>Sign-in failed</h1>` +
            `<p>${escapeHtml(error.message)}</p><p><small>Code: <code>${escapeHtml(error.code ?? error.type)}</code> (HTTP ${error.status})</small></p>` +
            `<p><a href="/dashboard">Back to the dashboard</a></p></body></html>`,
        );
      return;
    }
    res.json({ error: { message: error.message, type: error.type, param: error.param, code: error.code } });
  }
}
