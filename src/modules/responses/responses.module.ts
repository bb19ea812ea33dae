import { Module } from '@nestjs/common';
import { McpModule } from '../mcp/mcp.module';
import { ChatModule } from '../chat/chat.module';
import { RoutingModule } from '../routing/routing.module';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [McpModule, RoutingModule, ChatModule],
  controllers: [ResponsesController],
  providers: [ResponsesService],
})
export class ResponsesModule {}
