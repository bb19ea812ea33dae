import { Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module';
import { McpServerEntity } from './entities/mcp-server.entity';
import { McpCatalog } from './mcp-catalog';
import { McpClientPool } from './mcp-client-pool';
import { McpProxyController } from './mcp-proxy.controller';
import { McpProxy } from './mcp-proxy';
import { McpRegistry } from './mcp-registry';
import { McpServersController } from './mcp-servers.controller';
import { McpServersService } from './mcp-servers.service';
import { McpToolCaller } from './mcp-tool-caller';
import { McpToolLoop } from './mcp-tool-loop';

/**
 * The MCP gateway (CONTRACT section 10): the server registry and who may use which server
 * and tool, the shared connections to the servers, the proxy for MCP clients, and the tool
 * loop the model operations (chat, responses, messages) run through.
 */
@Module({
  imports: [TypeOrmModule.forFeature([McpServerEntity]), KeysModule],
  controllers: [McpServersController, McpProxyController],
  providers: [McpRegistry, McpServersService, McpClientPool, McpCatalog, McpToolCaller, McpProxy, McpToolLoop],
  exports: [McpRegistry, McpToolLoop],
})
export class McpModule implements OnModuleInit {
  constructor(
    private readonly registry: McpRegistry,
    private readonly pool: McpClientPool,
  ) {}

  /** A server changed or removed (here or on another instance): its connection and tool list go. */
  onModuleInit(): void {
    this.registry.onChange((serverId) => void this.pool.forget(serverId));
  }
}
