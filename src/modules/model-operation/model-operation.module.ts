import { Module } from '@nestjs/common';
import { McpModule } from '../mcp/mcp.module';
import { RoutingModule } from '../routing/routing.module';
import { ModelOperation } from './model-operation';

@Module({
  imports: [McpModule, RoutingModule],
  providers: [ModelOperation],
  exports: [ModelOperation],
})
export class ModelOperationModule {}
