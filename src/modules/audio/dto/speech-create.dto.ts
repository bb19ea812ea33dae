import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isNotEmpty, isNumber, isOneOf, isString, Rule } from '../../../common/pipes/body-rules';

const FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
// The gateway streams the audio bytes as they come; OpenAI's `sse` stream format is not relayed.
const audioStream: Rule = (v, f) => (v === 'audio' ? null : `${f} must be audio: the sse stream format is not supported`);

export const SPEECH_SCHEMA = {
  required: {
    model: all(isString(256), isNotEmpty),
    input: all(isString(4096), isNotEmpty),
    voice: all(isString(64), isNotEmpty),
  },
  optional: {
    response_format: isOneOf(FORMATS),
    speed: isNumber(0.25, 4),
    instructions: isString(4096),
    stream_format: audioStream,
  },
};

/** `POST /v1/audio/speech` (OpenAI's format): the OpenAPI description; the checks are SPEECH_SCHEMA; other fields pass through. */
export class SpeechCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, SPEECH_SCHEMA);
  }

  @ApiProperty({ example: 'tts-1' })
  model: string;

  @ApiProperty({ example: 'Hello from the gateway', maxLength: 4096 })
  input: string;

  @ApiProperty({ example: 'alloy' })
  voice: string;

  @ApiPropertyOptional({ enum: FORMATS, default: 'mp3' })
  response_format?: string;

  @ApiPropertyOptional({ minimum: 0.25, maximum: 4 })
  speed?: number;
}
