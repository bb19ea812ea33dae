import { Module } from '@nestjs/common';
import { ModelOperationModule } from '../model-operation/model-operation.module';
import { ChatModule } from '../chat/chat.module';
import { RoutingModule } from '../routing/routing.module';
import { BudgetsModule } from '../budgets/budgets.module';
import { KeysModule } from '../keys/keys.module';
import { ResponsesSocketGateway } from './websocket/responses-socket.gateway';
import { ResponsesSocketHandshake } from './websocket/responses-socket-handshake';
import { ResponsesController } from './responses.controller';
import { ResponsesService } from './responses.service';

@Module({
  imports: [ModelOperationModule, RoutingModule, ChatModule, KeysModule, BudgetsModule],
  controllers: [ResponsesController],
  providers: [ResponsesService, ResponsesSocketHandshake, ResponsesSocketGateway],
})
export class ResponsesModule {}
