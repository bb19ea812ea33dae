import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** Start-up chatter from Nest itself: useful when debugging, noise otherwise. */
const FRAMEWORK_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory']);

/** Nest's logger interface on pino: JSON lines, cheap enough for the hot path. */
export class PinoLogger implements LoggerService {
  private readonly pino: Logger;

  constructor(level: string) {
    this.pino = pino({ level, base: undefined });
  }

  log(message: unknown, context?: string) {
    if (context && FRAMEWORK_CONTEXTS.has(context)) this.pino.debug(fields(message, context), text(message));
    else this.pino.info(fields(message, context), text(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.pino.error({ ...fields(message, context), ...(trace ? { trace } : {}) }, text(message));
  }
  warn(message: unknown, context?: string) {
    this.pino.warn(fields(message, context), text(message));
  }
  debug(message: unknown, context?: string) {
    this.pino.debug(fields(message, context), text(message));
  }
  verbose(message: unknown, context?: string) {
    this.pino.trace(fields(message, context), text(message));
  }
}

/**
 * A message may be an object `{ msg, ...fields }` (e.g. `{ msg, trace_id, status }`):
 * its fields become JSON fields of the line, so logs can be searched by trace id.
 */
function fields(message: unknown, context?: string): Record<string, unknown> {
  if (message === null || typeof message !== 'object' || message instanceof Error) return { context };
  const { msg: _msg, ...rest } = message as Record<string, unknown>;
  return { context, ...rest };
}

function text(message: unknown): string {
  if (message instanceof Error) return message.message;
  if (message !== null && typeof message === 'object') return String((message as { msg?: unknown }).msg ?? '');
  return String(message);
}
