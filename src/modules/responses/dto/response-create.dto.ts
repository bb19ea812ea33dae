import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isBoolean, isInt, isNumber, isObject, isOneOf, isString, Rule } from '../../../common/pipes/body-rules';
import { eachResponsesTool, responsesInput } from './response-tools.rules';

const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;

const reasoning: Rule = (v, f) => {
  const problem = isObject(v, f);
  if (problem) return problem;
  const effort = (v as Record<string, unknown>).effort;
  return effort === undefined || effort === null ? null : isOneOf(REASONING_EFFORTS)(effort, `${f}.effort`);
};

const toolChoice: Rule = (v, f) => (typeof v === 'string' || (typeof v === 'object' && v !== null && !Array.isArray(v)) ? null : `${f} must be a string ("auto", "none", "required") or an object`);

/**
 * The fields of a Responses request the gateway reads or can check; any other field
 * passes to the provider untouched.
 */
export const RESPONSE_CREATE_SCHEMA = {
  required: {
    model: isString(256),
    input: responsesInput,
  },
  optional: {
    instructions: isString(),
    tools: all(isArray(), eachResponsesTool),
    tool_choice: toolChoice,
    reasoning,
    stream: isBoolean,
    store: isBoolean,
    background: isBoolean,
    user: isString(256),
    metadata: isObject,
    max_output_tokens: isInt(1),
    temperature: isNumber(0, 2),
    top_p: isNumber(0, 1),
    parallel_tool_calls: isBoolean,
    previous_response_id: isString(),
    text: isObject,
  },
};

/** `POST /v1/responses` (OpenAI's Responses API). The OpenAPI description; the checks are RESPONSE_CREATE_SCHEMA. */
export class ResponseCreateDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, RESPONSE_CREATE_SCHEMA);
  }

  @ApiProperty({ example: 'gpt-4.1-mini', description: 'Model name, or @<virtual-key-slug>/<model>' })
  model: string;

  @ApiProperty({ description: 'A string, or input items (messages with input_text / input_image parts, tool outputs …)' })
  input: unknown;

  @ApiPropertyOptional()
  instructions?: string;

  @ApiPropertyOptional({ description: 'function, web_search_preview, file_search, mcp (headers are forwarded, never stored) …' })
  tools?: unknown[];

  @ApiPropertyOptional()
  tool_choice?: unknown;

  @ApiPropertyOptional({ description: '{effort: minimal | low | medium | high}' })
  reasoning?: { effort?: string };

  @ApiPropertyOptional({ description: 'true: the typed event stream as SSE' })
  stream?: boolean;

  @ApiPropertyOptional({ description: 'End-user identifier, recorded in the log' })
  user?: string;

  @ApiPropertyOptional()
  metadata?: Record<string, string>;
}
