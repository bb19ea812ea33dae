import { Module } from '@nestjs/common';
import { ModelOperationModule } from '../model-operation/model-operation.module';
import { RoutingModule } from '../routing/routing.module';
import { UpstreamModule } from '../upstream/upstream.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';
import { ChatUpstream } from './chat-upstream';

@Module({
  imports: [ModelOperationModule, RoutingModule, UpstreamModule],
  controllers: [ChatController],
  providers: [ChatService, ChatUpstream],
  exports: [ChatService, ChatUpstream],
})
export class ChatModule {}
