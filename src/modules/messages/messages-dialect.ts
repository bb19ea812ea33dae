import { sseFrame } from '../../common/http/sse-frame';
import { isObject } from '../../common/config-fields';
import { contentSlots, type OperationTexts } from '../guardrails/operation-texts';
import { list, parsedArguments, records, text, type Body, type ToolDialect } from '../mcp/tool-dialects';
import type { ModelDialect } from '../model-operation/model-operation';
import { anthropicErrorType } from '../../common/errors/anthropic-error';
import type { ErrorShape } from '../../common/errors/error-shape';
import { speaksAnthropic } from '../../common/http/anthropic-shape';

/**
 * Anthropic's Messages API as a dialect: where its texts are, how it offers and calls tools,
 * and what its body says of the request (the end user is `metadata.user_id`). The attempts
 * (native to Anthropic-format providers, bridged through chat completions to the others)
 * are MessagesService's.
 */

const ANTHROPIC_PARTS = new Set(['text']);

/** Anthropic Messages: `system` and every message's text blocks; the answer's text blocks. */
export const MESSAGES_TEXTS: OperationTexts = {
  request: (body) => [
    ...contentSlots(body, 'system', ANTHROPIC_PARTS),
    ...(Array.isArray(body.messages) ? body.messages.filter(isObject).flatMap((message) => contentSlots(message, 'content', ANTHROPIC_PARTS)) : []),
  ],
  answer: (answer) => (isObject(answer) ? contentSlots(answer, 'content', ANTHROPIC_PARTS) : []),
  isFinalFrame: (frame) => frame.startsWith('event: message_stop\n'),
  streamError: (error) => sseFrame(JSON.stringify({ type: 'error', error: { type: error.type, message: error.message, ...error.details } }), 'error'),
};

/** `POST /v1/messages`: `tools[]` with `input_schema`, `tool_use` blocks, `tool_result` blocks in a user turn. */
export const MESSAGES_TOOLS: ToolDialect = {
  clientToolNames: (body) => records(body.tools).map((tool) => text(tool.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [...list(body.tools), ...tools.map((tool) => ({ name: tool.name, description: tool.description ?? '', input_schema: tool.inputSchema }))],
  }),
  toolCalls: (answer) =>
    records(isObject(answer) ? answer.content : undefined)
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ id: text(block.id), name: text(block.name), ...parsedArguments(block.input) })),
  continued: (body, answer, results) => {
    const turn = { role: 'assistant', content: (answer as Body).content };
    const replies = results.map((result) => ({
      type: 'tool_result',
      tool_use_id: result.call.id,
      content: result.text,
      ...(result.isError ? { is_error: true } : {}),
    }));
    return { ...body, messages: [...list(body.messages), turn, { role: 'user', content: replies }] };
  },
  withoutCalls: (answer, ids) => {
    const message = answer as Body;
    return { ...message, content: records(message.content).filter((block) => block.type !== 'tool_use' || !ids.has(text(block.id))) };
  },
  frames: (answer) => {
    const message = answer as Body;
    const usage = isObject(message.usage) ? message.usage : {};
    const event = (type: string, data: Body) => sseFrame(JSON.stringify({ type, ...data }), type);
    const frames = [
      event('message_start', { message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } } }),
    ];
    records(message.content).forEach((block, index) => {
      const { start, delta } = messageBlockParts(block);
      frames.push(event('content_block_start', { index, content_block: start }));
      for (const part of delta) frames.push(event('content_block_delta', { index, delta: part }));
      frames.push(event('content_block_stop', { index }));
    });
    frames.push(
      event('message_delta', {
        delta: { stop_reason: message.stop_reason ?? 'end_turn', stop_sequence: message.stop_sequence ?? null },
        usage: { output_tokens: usage.output_tokens ?? 0 },
      }),
    );
    frames.push(event('message_stop', {}));
    return frames;
  },
};

/** A content block as its start event and the deltas that rebuild it (Anthropic's streaming shape). */
function messageBlockParts(block: Body): { start: Body; delta: Body[] } {
  if (block.type === 'text') return { start: { ...block, text: '' }, delta: [{ type: 'text_delta', text: text(block.text) }] };
  if (block.type === 'tool_use')
    return { start: { ...block, input: {} }, delta: [{ type: 'input_json_delta', partial_json: JSON.stringify(block.input ?? {}) }] };
  if (block.type === 'thinking') {
    const deltas: Body[] = [{ type: 'thinking_delta', thinking: text(block.thinking) }];
    if (typeof block.signature === 'string') deltas.push({ type: 'signature_delta', signature: block.signature });
    return { start: { ...block, thinking: '', signature: '' }, delta: deltas };
  }
  return { start: block, delta: [] };
}

/** Anthropic's `{"type": "error", "error": {type, message}}`, on `/v1/messages…` and Anthropic-flavoured `/v1/models`. */
export const ANTHROPIC_ERROR_SHAPE: ErrorShape = {
  matches: speaksAnthropic,
  body: (error) => ({ type: 'error', error: { type: anthropicErrorType(error.type, error.status), message: error.message, ...error.details } }),
};

export const MESSAGES_DIALECT: ModelDialect = {
  texts: MESSAGES_TEXTS,
  tools: MESSAGES_TOOLS,
  errors: ANTHROPIC_ERROR_SHAPE,
  opening: (body) => {
    const endUser = isObject(body.metadata) ? body.metadata.user_id : undefined;
    return { stream: body.stream === true, user: typeof endUser === 'string' && endUser ? endUser : null };
  },
};
