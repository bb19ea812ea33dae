import { Module } from '@nestjs/common';
import { ModelOperationModule } from '../model-operation/model-operation.module';
import { ChatModule } from '../chat/chat.module';
import { RoutingModule } from '../routing/routing.module';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [ModelOperationModule, RoutingModule, ChatModule],
  controllers: [ResponsesController],
  providers: [ResponsesService],
})
export class ResponsesModule {}
