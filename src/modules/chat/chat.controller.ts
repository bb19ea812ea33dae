import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { ChatService } from './chat.service';
import { ChatCompletionCreateDto } from './dto/chat-completion-create.dto';

@ApiTags('chat')
@ApiSecurity('gateway-api-key')
@Controller('v1/chat')
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post('completions')
  @HttpCode(200)
  @Operation('chat.completions')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: 'Create a chat completion (OpenAI format), streamed as SSE with stream: true' })
  async create(@Ctx() context: RequestContext, @Body() body: ChatCompletionCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.chat.create(context, body));
  }
}
