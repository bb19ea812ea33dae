import { Module } from '@nestjs/common';
import { ChatModule } from '../chat/chat.module';
import { ModelOperationModule } from '../model-operation/model-operation.module';
import { RoutingModule } from '../routing/routing.module';
import { GeminiController } from './gemini.controller';
import { GeminiResourcesService } from './gemini-resources.service';
import { GeminiService } from './gemini.service';

@Module({
  imports: [ModelOperationModule, RoutingModule, ChatModule],
  controllers: [GeminiController],
  providers: [GeminiService, GeminiResourcesService],
})
export class GeminiModule {}
