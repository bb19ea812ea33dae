import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KeysModule } from '../keys/keys.module';
import { McpServerEntity } from './entities/mcp-server.entity';
import { McpRegistry } from './mcp-registry.service';
import { McpServersController } from './mcp-servers.controller';
import { McpServersService } from './mcp-servers.service';

/** The MCP gateway (CONTRACT section 10): the server registry and who may use which server and tool. */
@Module({
  imports: [TypeOrmModule.forFeature([McpServerEntity]), KeysModule],
  controllers: [McpServersController],
  providers: [McpRegistry, McpServersService],
  exports: [McpRegistry],
})
export class McpModule {}
