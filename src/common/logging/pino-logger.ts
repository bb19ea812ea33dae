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
    if (context && FRAMEWORK_CONTEXTS.has(context)) this.pino.debug({ context }, String(message));
    else this.pino.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.pino.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.pino.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.pino.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.pino.trace({ context }, String(message));
  }
}
