import { Module } from '@nestjs/common';
import { ProviderRoutingGuard } from './provider-routing.guard';
import { ResponseCacheModule } from '../cache/cache.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { KeysModule } from '../keys/keys.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { JsonOperations } from './json-operation';
import { ResourceOperations } from './resource-operation';
import { UploadOperations } from './upload-operation';
import { RouteExecutor } from './route-executor';
import { RouteResolver } from './route-resolver';

/**
 * From routing headers to a plan (resolver, guard), and from a plan to an answer (executor).
 * Its imports are what it uses, global modules included (the executor's budgets and rate limits, the attempts' upstream).
 */
@Module({
  imports: [KeysModule, ResponseCacheModule, BudgetsModule, UpstreamModule],
  providers: [RouteResolver, ProviderRoutingGuard, RouteExecutor, JsonOperations, ResourceOperations, UploadOperations],
  exports: [RouteResolver, ProviderRoutingGuard, RouteExecutor, JsonOperations, ResourceOperations, UploadOperations],
})
export class RoutingModule {}
