import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { AudioController } from './audio.controller';
import { SpeechService } from './speech.service';
import { TranscriptionService } from './transcription.service';

/** Audio operations: speech synthesis streamed back, transcription and translation of uploaded audio streamed through. */
@Module({
  imports: [RoutingModule],
  controllers: [AudioController],
  providers: [SpeechService, TranscriptionService],
})
export class AudioModule {}
