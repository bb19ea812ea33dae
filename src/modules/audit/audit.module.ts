import { Global, Module, OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditLogController } from './audit-log.controller';
import { AuditLogEntity } from './audit-log.entity';
import { AuditLogService } from './audit-log.service';
import { unauditedRoutes } from './audit-coverage';
import { AuditInterceptor } from './audit.interceptor';

/**
 * The audit log of admin changes: the interceptor that writes it (put on each audited
 * controller by `@Audited`, so global: it resolves in the controllers' modules), and
 * `GET /v1/audit-log` that reads it.
 */
@Global()
@Module({
  imports: [DiscoveryModule, TypeOrmModule.forFeature([AuditLogEntity])],
  controllers: [AuditLogController],
  providers: [AuditLogService, AuditInterceptor],
  exports: [AuditLogService, AuditInterceptor],
})
export class AuditModule implements OnModuleInit {
  constructor(private readonly discovery: DiscoveryService) {}

  /** A change route without `@Audited()` is a bug found at start-up, not an unrecorded change found later. */
  onModuleInit(): void {
    const controllers = this.discovery.getControllers().flatMap((wrapper) => (typeof wrapper.metatype === 'function' ? [wrapper.metatype] : []));
    const missing = unauditedRoutes(controllers);
    if (missing.length) throw new Error(`Admin changes without @Audited() (src/modules/audit/audited.decorator.ts): ${missing.join(', ')}`);
  }
}
