import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { RequestContext } from '../../context/request-context';
import type { GatewayResult } from '../routing/gateway-result';
import type { MultipartUpload } from '../../common/http/multipart-upload';
import { emptyUsage, type NormalizedUsage } from '../../providers/usage';
import { UploadOperations } from '../routing/upload-operation';
import { UpstreamAttempt } from '../upstream/upstream-attempt';

type Task = 'audioTranscriptions' | 'audioTranslations';

/**
 * `audio.transcriptions` and `audio.translations`: an audio file in (multipart, streamed
 * through), text out (JSON, or text/SRT/VTT passed through as the provider sends it).
 *
 * Priced as the providers bill: gpt-4o(-mini)-transcribe by tokens (`usage.type:
 * "tokens"`); whisper by the second, from `usage.seconds`, a verbose answer's `duration`,
 * or, for an answer that has neither (text formats), a WAV file's own header. Seconds are
 * recorded as prompt tokens (the log's count) and as `audioSeconds`, priced per second.
 */
@Injectable()
export class TranscriptionService {
  constructor(
    private readonly uploads: UploadOperations,
    private readonly attempts: UpstreamAttempt,
  ) {}

  run(context: RequestContext, req: Request, task: Task): Promise<GatewayResult> {
    const title = task === 'audioTranscriptions' ? 'audio transcription' : 'audio translation';
    return this.uploads.run(
      context,
      req,
      {
        request: (target, fields) => this.attempts.capability(target, { capability: task, title }).buildRequest({ model: fields.model }, target),
        usage: transcriptionUsage,
      },
      { file: true, fields: ['model'] },
    );
  }
}

export function transcriptionUsage(json: Record<string, any> | null, upload: MultipartUpload): NormalizedUsage | null {
  const usage = json?.usage;
  if (usage?.type === 'tokens') {
    const promptTokens = Number(usage.input_tokens) || 0;
    const completionTokens = Number(usage.output_tokens) || 0;
    // The audio part of the input has its own rate (gpt-4o-transcribe); clamped so a bad count cannot exceed the whole.
    const audioPromptTokens = Math.min(promptTokens, Math.max(0, Number(usage.input_token_details?.audio_tokens) || 0));
    return { ...emptyUsage(), promptTokens, completionTokens, totalTokens: Number(usage.total_tokens) || promptTokens + completionTokens, audioPromptTokens };
  }
  const seconds = usage?.type === 'duration' ? Number(usage.seconds) : typeof json?.duration === 'number' ? json.duration : upload.wavSeconds;
  if (seconds === null || !Number.isFinite(seconds)) return null;
  const billed = Math.ceil(seconds);
  return { ...emptyUsage(), promptTokens: billed, totalTokens: billed, audioSeconds: billed };
}
