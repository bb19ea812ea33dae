import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isInt, isNotEmpty, isOneOf, isString, Rule } from '../../../common/pipes/body-rules';

const RESPONSE_FORMATS = ['url', 'b64_json'] as const;
const QUALITIES = ['auto', 'low', 'medium', 'high', 'standard', 'hd'] as const;
const STYLES = ['vivid', 'natural'] as const;
const BACKGROUNDS = ['auto', 'transparent', 'opaque'] as const;
const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;

const imageSize: Rule = (v, f) =>
  typeof v === 'string' && (v === 'auto' || /^[1-9]\d*x[1-9]\d*$/.test(v)) ? null : `${f} must be auto or <width>x<height>, e.g. 1024x1024`;

// The gateway relays image generations as one JSON answer; a stream of partial images would not parse.
const notStreamed: Rule = (v, f) => (v === false ? null : `${f} must be false: streamed image generation is not supported`);

/**
 * The fields of an image generation request the gateway reads or can check; any other
 * field passes through to the provider. `model` is required although OpenAI defaults
 * it: routing, the Azure deployment, the cache key and pricing all need it, and
 * OpenAI's default depends on which other fields are present.
 */
export const IMAGE_GENERATION_SCHEMA = {
  required: {
    model: isString(256),
    prompt: all(isString(), isNotEmpty),
  },
  optional: {
    n: isInt(1, 10),
    size: imageSize,
    quality: isOneOf(QUALITIES),
    response_format: isOneOf(RESPONSE_FORMATS),
    style: isOneOf(STYLES),
    user: isString(256),
    background: isOneOf(BACKGROUNDS),
    output_format: isOneOf(OUTPUT_FORMATS),
    stream: notStreamed,
  },
};

/** `POST /v1/images/generations` (OpenAI's format). The OpenAPI description; the checks are IMAGE_GENERATION_SCHEMA. */
export class ImageGenerationCreateDto {
  [extra: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, IMAGE_GENERATION_SCHEMA);
  }

  @ApiProperty({ example: 'gpt-image-1', description: 'Model name, or @<virtual-key-slug>/<model>; required by the gateway' })
  model: string;

  @ApiProperty({ example: 'A watercolour lighthouse at dawn' })
  prompt: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 10 })
  n?: number;

  @ApiPropertyOptional({ example: '1024x1024', description: '<width>x<height> or auto' })
  size?: string;

  @ApiPropertyOptional({ enum: QUALITIES })
  quality?: string;

  @ApiPropertyOptional({ enum: RESPONSE_FORMATS, description: 'DALL·E models; GPT Image models always answer b64_json' })
  response_format?: string;

  @ApiPropertyOptional({ enum: STYLES })
  style?: string;

  @ApiPropertyOptional({ enum: BACKGROUNDS })
  background?: string;

  @ApiPropertyOptional({ enum: OUTPUT_FORMATS })
  output_format?: string;

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;
}
