import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Permission as PermissionName } from '../common/role-names';
import { contextOf } from './request-context';

/** Injects the request's RequestContext into a controller handler. */
export const Ctx = createParamDecorator((_: unknown, execution: ExecutionContext) => contextOf(execution.switchToHttp().getRequest()));

export const OPERATION = 'gateway:operation';
/** Names the logged operation (CONTRACT section 6); routes without it are not logged. */
export const Operation = (name: string) => SetMetadata(OPERATION, name);

export const PUBLIC = 'gateway:public';
/** No gateway API key needed (health, docs). */
export const Public = () => SetMetadata(PUBLIC, true);

export const PERMISSION = 'gateway:permission';
/**
 * The permission a route needs (roles.ts), checked by the key guard. Routes with an
 * `@Operation()` (the model operations) need `models.call` unless they say otherwise.
 */
export const Permission = (permission: PermissionName) => SetMetadata(PERMISSION, permission);

/** Injects the workspace scope of an admin-API call (set by the key guard). */
export const Scope = createParamDecorator((_: unknown, execution: ExecutionContext) => {
  const scope = contextOf(execution.switchToHttp().getRequest()).scope;
  if (!scope) throw new Error('No workspace scope: the route declares no permission other than models.call');
  return scope;
});
