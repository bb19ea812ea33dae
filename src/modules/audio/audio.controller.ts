import { Body, Controller, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { RequestContext } from '../../context/request-context';
import { Ctx, Operation } from '../../context/request-context.decorator';
import { ProviderRoutingGuard } from '../routing/provider-routing.guard';
import { sendGatewayResult } from '../routing/gateway-result';
import { SpeechService } from './speech.service';
import { SpeechCreateDto } from './dto/speech-create.dto';
import { TranscriptionService } from './transcription.service';

@ApiTags('audio')
@ApiSecurity('gateway-api-key')
@Controller('v1/audio')
@UseGuards(ProviderRoutingGuard)
export class AudioController {
  constructor(
    private readonly speech: SpeechService,
    private readonly transcription: TranscriptionService,
  ) {}

  @Post('speech')
  @HttpCode(200)
  @Operation('audio.speech')
  @ApiProduces('audio/mpeg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/wav', 'audio/pcm')
  @ApiOperation({ summary: 'Synthesise speech: the audio is streamed back as the provider sends it' })
  async createSpeech(@Ctx() context: RequestContext, @Body() body: SpeechCreateDto, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.speech.create(context, body));
  }

  @Post('transcriptions')
  @HttpCode(200)
  @Operation('audio.transcriptions')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Transcribe audio (multipart: file, model, …): the file streams through to the provider' })
  async createTranscription(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.transcription.run(context, req, 'audioTranscriptions'));
  }

  @Post('translations')
  @HttpCode(200)
  @Operation('audio.translations')
  @ApiConsumes('multipart/form-data')
  @ApiOperation({ summary: 'Translate audio into English text (multipart: file, model, …)' })
  async createTranslation(@Ctx() context: RequestContext, @Req() req: Request, @Res() res: Response): Promise<void> {
    sendGatewayResult(res, context, await this.transcription.run(context, req, 'audioTranslations'));
  }
}
