import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { GatewayError } from '../../../common/errors/gateway-error';
import { checkBody, isBoolean, isInt, isObject, Rule } from '../../../common/pipes/body-rules';
import { CHAT_PARAMETER_SCHEMA } from '../../chat/dto/chat-completion-create.dto';
import { MAX_VERSION } from '../../keys/admin-list';

const chat = CHAT_PARAMETER_SCHEMA.optional;
const stringValues: Rule = (v, f) =>
  isObject(v, f) ?? (Object.values(v as object).every((value) => typeof value === 'string') ? null : `${f} values must be strings`);

/** The hyperparameters a call may override, checked as chat completions check them. */
export const OVERRIDABLE = {
  max_tokens: chat.max_tokens,
  max_completion_tokens: chat.max_completion_tokens,
  temperature: chat.temperature,
  top_p: chat.top_p,
  presence_penalty: chat.presence_penalty,
  frequency_penalty: chat.frequency_penalty,
  stop: chat.stop,
  seed: chat.seed,
  user: chat.user,
};

export const PROMPT_CALL_SCHEMA = {
  required: { variables: isObject },
  optional: {
    ...OVERRIDABLE,
    version: isInt(1, MAX_VERSION),
    stream: isBoolean,
    stream_options: isObject,
    // Log metadata (as x-gateway-metadata), merged over the header's.
    metadata: stringValues,
  },
};
const KNOWN = new Set([...Object.keys(PROMPT_CALL_SCHEMA.required), ...Object.keys(PROMPT_CALL_SCHEMA.optional)]);

/** `POST /v1/prompts/{id}/completions` and `/render`: variables, and what the call may override. */
export class PromptCallDto {
  [field: string]: unknown;

  /** Called by GatewayValidationPipe instead of class-validator. */
  static validateBody(body: Record<string, unknown>): void {
    const unknown = Object.keys(body).find((field) => !KNOWN.has(field));
    if (unknown) {
      throw GatewayError.invalidRequest(
        `${unknown} cannot be given to a prompt call: it takes variables, version, stream, stream_options, metadata and ${Object.keys(OVERRIDABLE).join(', ')}`,
        unknown,
      );
    }
    checkBody(body, PROMPT_CALL_SCHEMA);
  }

  @ApiProperty({ description: 'Values of the template variables', example: { customer: 'Ada' } })
  variables: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'A version to run; default the latest' })
  version?: number;

  @ApiPropertyOptional()
  stream?: boolean;

  @ApiPropertyOptional({ description: 'Overrides the template hyperparameter' })
  max_tokens?: number;

  @ApiPropertyOptional({ description: 'Overrides the template hyperparameter' })
  presence_penalty?: number;

  @ApiPropertyOptional({ description: 'Overrides the template hyperparameter' })
  temperature?: number;

  @ApiPropertyOptional({ description: 'End user, recorded in the log and sent on' })
  user?: string;

  @ApiPropertyOptional({ description: 'Log metadata, merged over x-gateway-metadata' })
  metadata?: Record<string, string>;
}
