import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { contextOf } from './request-context';

/** Injects the request's RequestContext into a controller handler. */
export const Ctx = createParamDecorator((_: unknown, execution: ExecutionContext) =>
  contextOf(execution.switchToHttp().getRequest()),
);

export const OPERATION = 'gateway:operation';
/** Names the logged operation (CONTRACT section 6); routes without it are not logged. */
export const Operation = (name: string) => SetMetadata(OPERATION, name);

export const PUBLIC = 'gateway:public';
/** No gateway API key needed (health, docs). */
export const Public = () => SetMetadata(PUBLIC, true);

export const ADMIN_ONLY = 'gateway:admin-only';
/** Only API keys with role `admin`. */
export const AdminOnly = () => SetMetadata(ADMIN_ONLY, true);
