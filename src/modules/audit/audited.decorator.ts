import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { AUDIT_ACTION, AUDITED, type AuditTarget } from './audit-target';
import { AuditInterceptor } from './audit.interceptor';

/**
 * On an admin controller (or one handler): every POST/PUT/PATCH/DELETE of it that needs
 * `resources.write` or `organisation.manage` is written to the audit log by the global
 * AuditInterceptor, with the before and after views, masked. Such a route without it stops
 * the gateway at start-up (audit-coverage.ts), so a new one cannot be forgotten.
 */
export function Audited<C>(target: AuditTarget<C>) {
  // The interceptor sits on the audited controllers only: the model operations carry none.
  return applyDecorators(SetMetadata(AUDITED, target), UseInterceptors(AuditInterceptor));
}

/** The action recorded for a handler, where the HTTP method does not say it (`revoke` for DELETE of an API key). */
export const AuditAction = (action: string) => SetMetadata(AUDIT_ACTION, action);
