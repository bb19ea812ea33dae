import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChatModule } from '../chat/chat.module';
import { KeysModule } from '../keys/keys.module';
import { RoutingModule } from '../routing/routing.module';
import { PromptEntity } from './entities/prompt.entity';
import { PromptVersionEntity } from './entities/prompt-version.entity';
import { PromptCompletionsService } from './prompt-completions.service';
import { PromptCompletionsController, PromptsController } from './prompts.controller';
import { PromptsService } from './prompts.service';

@Module({
  imports: [TypeOrmModule.forFeature([PromptEntity, PromptVersionEntity]), KeysModule, ChatModule, RoutingModule],
  controllers: [PromptsController, PromptCompletionsController],
  providers: [PromptsService, PromptCompletionsService],
})
export class PromptsModule {}
