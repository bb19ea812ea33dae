import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { GatewayError } from '../errors/gateway-error';

function flatten(errors: ValidationError[], parent = ''): { path: string; message: string }[] {
  return errors.flatMap((error) => {
    const path = parent ? (/^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`) : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      path,
      message: message.startsWith(error.property) ? path + message.slice(error.property.length) : `${path}: ${message}`,
    }));
    return own.concat(flatten(error.children ?? [], path));
  });
}

const validationPipe = (transform: boolean) =>
  new ValidationPipe({
    transform,
    whitelist: false,
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const problems = flatten(errors);
      return GatewayError.invalidRequest(problems.map((p) => p.message).join('; '), problems[0]?.path ?? null);
    },
  });

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
    return this.bodies.transform(value, metadata);
  }
}
