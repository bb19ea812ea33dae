import { Module } from '@nestjs/common';
import { ModelOperationModule } from '../model-operation/model-operation.module';
import { ChatModule } from '../chat/chat.module';
import { RoutingModule } from '../routing/routing.module';
import { CountTokensService } from './count-tokens/count-tokens.service';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';

@Module({
  imports: [ModelOperationModule, RoutingModule, ChatModule],
  controllers: [MessagesController],
  providers: [MessagesService, CountTokensService],
})
export class MessagesModule {}
