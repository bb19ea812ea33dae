import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error';

function flatten(errors: ValidationError[], parent = ''): { path: string; message: string }[] {
  return errors.flatMap((error) => {
    const path = parent ? (/^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`) : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => {
      if (!message.startsWith(error.property)) return { path, message: `${path}: ${message}` };
      const full = path + message.slice(error.property.length);
      // A validator may name a deeper field itself, e.g. `messages[2].role must be …`.
      return { path: full.match(/^[\w.[\]]+/)?.[0] ?? path, message: full };
    });
    return own.concat(flatten(error.children ?? [], path));
  });
}

function toGatewayError(errors: ValidationError[]): GatewayError {
  const problems = flatten(errors);
  return GatewayError.invalidRequest(problems.map((p) => p.message).join('; '), problems[0]?.path ?? null);
}

const VALIDATOR_OPTIONS = { whitelist: false, forbidUnknownValues: false, validationError: { target: false, value: false } };

const validationPipe = (transform: boolean) => new ValidationPipe({ ...VALIDATOR_OPTIONS, transform, exceptionFactory: toGatewayError });

/**
 * DTO validation with 400s that name the field (`messages[0].role must be one of …`).
 * Bodies are validated but passed on as received, so unknown fields reach the provider
 * untouched; query strings are converted (limit=10 becomes a number, defaults apply).
 */
@Injectable()
export class GatewayValidationPipe implements PipeTransform {
  private readonly bodies = validationPipe(false);
  private readonly others = validationPipe(true);

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body') return this.others.transform(value, metadata);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw GatewayError.invalidRequest('The request body must be a JSON object');
    }
    // Hot-path bodies (chat) check themselves by hand, without class-transformer/validator.
    const dto = metadata.metatype as { validateBody?: (body: Record<string, unknown>) => void } | undefined;
    if (dto?.validateBody) {
      dto.validateBody(value as Record<string, unknown>);
      return Promise.resolve(value);
    }
    return this.bodies.transform(value, metadata);
  }
}
