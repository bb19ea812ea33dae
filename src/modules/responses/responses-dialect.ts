import { sseFrame } from '../../common/http/sse-frame';
import { isObject } from '../../common/config-fields';
import { contentSlots, RESPONSES_INPUT_PARTS, slot, type OperationTexts } from '../guardrails/operation-texts';
import { list, parsedArguments, records, text, type Body, type ToolDialect } from '../mcp/tool-dialects';
import type { ModelDialect } from '../model-operation/model-operation';
import { openAIOpening } from '../chat/chat-dialect';

/**
 * OpenAI's Responses API as a dialect: where its texts are, how it offers and calls tools,
 * and what its body says of the request. The attempts (native to providers with the
 * Responses API, bridged through chat completions to the others) are ResponsesService's.
 */

const RESPONSES_OUTPUT_PARTS = new Set(['output_text']);

/** Responses: `instructions` and `input` (a string or items with content); the answer's output text. */
export const RESPONSES_TEXTS: OperationTexts = {
  request: (body) => [
    ...slot(body, 'instructions'),
    ...(typeof body.input === 'string'
      ? slot(body, 'input')
      : Array.isArray(body.input)
        ? body.input.filter(isObject).flatMap((item) => contentSlots(item, 'content', RESPONSES_INPUT_PARTS))
        : []),
  ],
  answer: (answer) =>
    isObject(answer) && Array.isArray(answer.output)
      ? answer.output.filter(isObject).flatMap((item) => contentSlots(item, 'content', RESPONSES_OUTPUT_PARTS))
      : [],
  streamError: (error) => sseFrame(JSON.stringify({ type: 'error', code: error.code, message: error.message, param: null, ...error.details }), 'error'),
};

/** `POST /v1/responses`: `tools[]` of type function, `function_call` output items, `function_call_output` input items. */
export const RESPONSES_TOOLS: ToolDialect = {
  clientToolNames: (body) =>
    records(body.tools)
      .filter((tool) => tool.type === 'function')
      .map((tool) => text(tool.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [
      ...list(body.tools),
      ...tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema, strict: false })),
    ],
  }),
  toolCalls: (answer) =>
    records(isObject(answer) ? answer.output : undefined)
      .filter((item) => item.type === 'function_call')
      .map((item) => ({ id: text(item.call_id), name: text(item.name), ...parsedArguments(item.arguments) })),
  continued: (body, answer, results) => {
    const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : list(body.input);
    // The model's messages and calls go back as input; reasoning items stay out (a bridged provider cannot read them, OpenAI does without).
    const turn = records((answer as Body).output).filter((item) => item.type === 'message' || item.type === 'function_call');
    const replies = results.map((result) => ({ type: 'function_call_output', call_id: result.call.id, output: result.text }));
    return { ...body, input: [...input, ...turn, ...replies] };
  },
  withoutCalls: (answer, ids) => {
    const response = answer as Body;
    return { ...response, output: records(response.output).filter((item) => item.type !== 'function_call' || !ids.has(text(item.call_id))) };
  },
  frames: (answer) => {
    const response = answer as Body;
    let sequence = 0;
    const event = (type: string, data: Body) => sseFrame(JSON.stringify({ type, sequence_number: sequence++, ...data }), type);
    const frames = [event('response.created', { response: { ...response, status: 'in_progress', output: [] } })];
    records(response.output).forEach((item, outputIndex) => {
      frames.push(...responseItemFrames(item, outputIndex, event));
    });
    frames.push(event('response.completed', { response }));
    return frames;
  },
};

/** One output item as the typed events that rebuild it. */
function responseItemFrames(item: Body, outputIndex: number, event: (type: string, data: Body) => string): string[] {
  const at = { output_index: outputIndex };
  if (item.type === 'function_call') {
    return [
      event('response.output_item.added', { ...at, item: { ...item, arguments: '', status: 'in_progress' } }),
      event('response.function_call_arguments.delta', { ...at, item_id: item.id, delta: text(item.arguments) }),
      event('response.function_call_arguments.done', { ...at, item_id: item.id, arguments: text(item.arguments) }),
      event('response.output_item.done', { ...at, item }),
    ];
  }
  if (item.type !== 'message') return [event('response.output_item.added', { ...at, item }), event('response.output_item.done', { ...at, item })];
  const frames = [event('response.output_item.added', { ...at, item: { ...item, content: [], status: 'in_progress' } })];
  records(item.content).forEach((part, contentIndex) => {
    const where = { ...at, item_id: item.id, content_index: contentIndex };
    const isText = part.type === 'output_text';
    frames.push(event('response.content_part.added', { ...where, part: isText ? { ...part, text: '' } : part }));
    if (isText) {
      frames.push(event('response.output_text.delta', { ...where, delta: text(part.text) }));
      frames.push(event('response.output_text.done', { ...where, text: text(part.text) }));
    }
    frames.push(event('response.content_part.done', { ...where, part }));
  });
  frames.push(event('response.output_item.done', { ...at, item }));
  return frames;
}

export const RESPONSES_DIALECT: ModelDialect = {
  texts: RESPONSES_TEXTS,
  tools: RESPONSES_TOOLS,
  opening: openAIOpening,
};
