import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { CountTokensService } from './count-tokens/count-tokens.service';
import { MessageCountTokensDto } from './dto/message-count-tokens.dto';
import { MessageCreateDto } from './dto/message-create.dto';
import { MessagesService } from './messages.service';

@ApiTags('messages')
@ApiSecurity('gateway-api-key')
@Controller('v1/messages')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly tokens: CountTokensService,
  ) {}

  @Post()
  @HttpCode(200)
  @Operation('messages')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({ summary: "Create a message (Anthropic's Messages API) with any provider; stream: true relays Anthropic's events" })
  async create(@Ctx() context: RequestContext, @Body() body: MessageCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.messages.create(context, body));
  }

  @Post('count_tokens')
  @HttpCode(200)
  @Operation('messages.count_tokens')
  @UseGuards(ProviderRoutingGuard)
  @ApiOperation({
    summary: 'Count a Messages request\'s input tokens: natively where the provider can (Anthropic, Gemini), else estimated ("estimated": true)',
  })
  async countTokens(@Ctx() context: RequestContext, @Body() body: MessageCountTokensDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.tokens.count(context, body));
  }
}
