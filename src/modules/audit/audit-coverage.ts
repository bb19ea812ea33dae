import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import { PERMISSION } from '../../context/request-context.decorator';
import type { Permission } from '../workspaces/roles';
import { AUDITED, type AuditTarget } from './audit-target';

/** The permissions of admin changes: every route that needs one of them is audited. */
export const CHANGE_PERMISSIONS: ReadonlySet<Permission> = new Set(['resources.write', 'organisation.manage']);
const CHANGE_METHODS = new Set<RequestMethod>([RequestMethod.POST, RequestMethod.PUT, RequestMethod.PATCH, RequestMethod.DELETE]);

/** What the audit interceptor needs of a handler: null when it is not an admin change. */
export interface AuditedRoute {
  target: AuditTarget | undefined;
  method: 'POST' | 'PUT' | 'PATCH' | 'DELETE';
}

const read = <T>(key: string, handler: Function, controller: Function): T | undefined =>
  (Reflect.getMetadata(key, handler) as T | undefined) ?? (Reflect.getMetadata(key, controller) as T | undefined);

/** Whether a handler is an admin change, and its audit target (undefined: it forgot one). */
export function auditedRoute(controller: Function, handler: Function): AuditedRoute | null {
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  if (method === undefined || !CHANGE_METHODS.has(method)) return null;
  const permission = read<Permission>(PERMISSION, handler, controller);
  if (!permission || !CHANGE_PERMISSIONS.has(permission)) return null;
  return { target: read<AuditTarget>(AUDITED, handler, controller), method: RequestMethod[method] as AuditedRoute['method'] };
}

/** `Controller.handler` of every admin change of these controllers that has no `@Audited()`. */
export function unauditedRoutes(controllers: Function[]): string[] {
  const missing: string[] = [];
  for (const controller of controllers) {
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = name === 'constructor' ? undefined : Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (typeof handler !== 'function') continue;
      const route = auditedRoute(controller, handler as Function);
      if (route && !route.target) missing.push(`${controller.name}.${name}`);
    }
  }
  return missing;
}
