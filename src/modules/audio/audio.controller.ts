import { Body, Controller, HttpCode, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RequestContext } from '../../common/context/request-context';
import { Ctx, Operation } from '../../common/context/request-context.decorator';
import { ProviderRoutingGuard } from '../../common/guards/provider-routing.guard';
import { sendGatewayResult } from '../../common/http/gateway-result';
import { SpeechService } from './speech.service';
import { SpeechCreateDto } from './dto/speech-create.dto';

@ApiTags('audio')
@ApiSecurity('gateway-api-key')
@Controller('v1/audio')
@UseGuards(ProviderRoutingGuard)
export class AudioController {
  constructor(private readonly speech: SpeechService) {}

  @Post('speech')
  @HttpCode(200)
  @Operation('audio.speech')
  @ApiProduces('audio/mpeg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm')
  @ApiOperation({ summary: 'Synthesise speech: the audio is streamed back as the provider sends it' })
  async createSpeech(@Ctx() context: RequestContext, @Body() body: SpeechCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.speech.create(context, body));
  }
}
