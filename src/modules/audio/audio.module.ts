import { Module } from '@nestjs/common';
import { RoutingModule } from '../routing/routing.module';
import { AudioController } from './audio.controller';
import { SpeechService } from './speech.service';

/** Audio operations: speech synthesis, streamed back as the provider sends it. */
@Module({
  imports: [RoutingModule],
  controllers: [AudioController],
  providers: [SpeechService],
})
export class AudioModule {}
