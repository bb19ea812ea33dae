import { Injectable } from '@nestjs/common';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from '../routing/gateway-result';
import { emptyUsage } from '../../providers/usage';
import { RouteExecutor } from '../routing/route-executor';
import { binaryResult, UpstreamAttempt } from '../upstream/upstream-attempt';
import type { SpeechCreateDto } from './dto/speech-create.dto';

/**
 * `audio.speech`: text in, audio out. The provider's audio is streamed to the client as
 * it arrives (never held whole); the log keeps its content type and size, not the
 * bytes. Speech is priced per character of input (`per_character`), so the characters
 * are recorded as `characters` (and as prompt tokens, the log's count).
 */
@Injectable()
export class SpeechService {
  constructor(
    private readonly executor: RouteExecutor,
    private readonly attempts: UpstreamAttempt,
  ) {}

  create(context: RequestContext, body: SpeechCreateDto): Promise<GatewayResult> {
    return this.executor.execute(
      context.begin({ body }),
      body,
      async (target, upstreamBody, attempt) => {
        const answer = await this.attempts.send(context, attempt, target, upstreamBody, {
          capability: 'audioSpeech',
          title: 'speech synthesis',
          usage: () => null,
        });
        // Speech is billed by the characters of its input.
        const characters = [...String(upstreamBody.input)].length;
        return binaryResult(answer, 'audio', { ...emptyUsage(), promptTokens: characters, totalTokens: characters, characters });
      },
      { cacheable: false },
    );
  }
}
