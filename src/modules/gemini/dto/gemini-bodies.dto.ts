import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { all, checkBody, isArray, isObject, type Rule } from '../../../common/pipes/body-rules';

/** Each of a list's members an object (a Content, a Tool, an embedding request). */
const objects: Rule = (value, field) => {
  const index = (value as unknown[]).findIndex((item) => typeof item !== 'object' || item === null || Array.isArray(item));
  return index < 0 ? null : `${field}[${index}] must be an object`;
};

/** A system instruction: a Content, or text (the SDKs accept both). */
const instruction: Rule = (value, field) => (typeof value === 'string' ? null : isObject(value, field));

/**
 * What the gateway acts on in a GenerateContentRequest (CONTRACT section 16): the contents
 * it bounds, and the shapes its translation reads. Every other field goes to Gemini as sent;
 * the chat bridge (chat-bridge/gemini-to-chat.ts) checks what it translates.
 */
const GENERATE_SCHEMA = {
  required: { contents: all(isArray(1, 100_000), objects) },
  optional: {
    systemInstruction: instruction,
    system_instruction: instruction,
    tools: all(isArray(0, 10_000), objects),
    toolConfig: isObject,
    tool_config: isObject,
    generationConfig: isObject,
    generation_config: isObject,
  },
};

/** `POST /v1beta/models/{model}:generateContent` (and `:streamGenerateContent`). */
export class GenerateContentDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    checkBody(body, GENERATE_SCHEMA);
  }

  @ApiProperty({
    description: 'The conversation: Content objects ({role: user | model, parts: [{text} | {inlineData} | {functionCall} | {functionResponse}]})',
  })
  contents: unknown[];

  @ApiPropertyOptional({ description: 'A Content of text parts' })
  systemInstruction?: unknown;

  @ApiPropertyOptional({ description: '[{functionDeclarations: [{name, description, parameters | parametersJsonSchema}]}]' })
  tools?: unknown[];

  @ApiPropertyOptional({ description: 'temperature, topP, maxOutputTokens, stopSequences, responseMimeType, responseSchema, thinkingConfig …' })
  generationConfig?: Record<string, unknown>;
}

/** `…:countTokens`: `contents`, or a whole `generateContentRequest`. */
export class CountTokensDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    const inner = body.generateContentRequest ?? body.generate_content_request;
    if (inner !== undefined) checkBody({ generateContentRequest: inner }, { required: { generateContentRequest: isObject }, optional: {} });
    else checkBody(body, { required: { contents: all(isArray(1, 100_000), objects) }, optional: {} });
  }

  @ApiPropertyOptional()
  contents?: unknown[];

  @ApiPropertyOptional({ description: 'A GenerateContentRequest, counted whole (system instruction and tools too)' })
  generateContentRequest?: Record<string, unknown>;
}

/** `…:embedContent` (`content`) and `…:batchEmbedContents` (`requests`). */
export class EmbedContentDto {
  [extra: string]: unknown;

  static validateBody(body: Record<string, unknown>): void {
    if (body.requests !== undefined) checkBody(body, { required: { requests: all(isArray(1, 10_000), objects) }, optional: {} });
    else checkBody(body, { required: { content: isObject }, optional: {} });
  }

  @ApiPropertyOptional({ description: 'embedContent: a Content of text parts' })
  content?: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'batchEmbedContents: [{model, content, taskType, outputDimensionality}]' })
  requests?: unknown[];
}
