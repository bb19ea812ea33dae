import { sseFrame } from '../../common/http/sse-frame';
import { isObject } from '../../common/config-fields';
import { contentSlots, type OperationTexts } from '../guardrails/operation-texts';
import { list, parsedArguments, records, text, type Body, type ToolDialect } from '../mcp/tool-dialects';
import type { ModelDialect } from '../model-operation/model-operation';
import type { LoggedError } from '../../common/errors/gateway-error';

/**
 * OpenAI's chat completions as a dialect (CONTRACT section 12): where its texts are, how it
 * offers and calls tools, its stream's error frame, and what its body says of the request.
 * The attempts (native to OpenAI-format providers, translated by the others' adapters) are
 * ChatService's.
 */

const CHAT_PARTS = new Set(['text']);

/** A chat completion stream's error chunk (OpenAI's `{"error": {…}}`), however the stream failed. */
export function chatErrorFrame(error: LoggedError, details: Record<string, unknown> = {}): string {
  return sseFrame(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code, ...details } }));
}

/** Chat completions: every message's text; the answer's choices. */
export const CHAT_TEXTS: OperationTexts = {
  request: (body) => (Array.isArray(body.messages) ? body.messages.filter(isObject).flatMap((message) => contentSlots(message, 'content', CHAT_PARTS)) : []),
  answer: (answer) =>
    isObject(answer) && Array.isArray(answer.choices)
      ? answer.choices.filter(isObject).flatMap((choice) => (isObject(choice.message) ? contentSlots(choice.message, 'content', CHAT_PARTS) : []))
      : [],
  isFinalFrame: (frame) => frame === sseFrame('[DONE]'),
  streamError: (error) => chatErrorFrame(error, error.details),
};

/** `POST /v1/chat/completions`: `tools[].function`, `choices[0].message.tool_calls`, `role: "tool"` results. */
export const CHAT_TOOLS: ToolDialect = {
  clientToolNames: (body) => records(body.tools).map((tool) => text((tool.function as Body | undefined)?.name)),
  withTools: (body, tools) => ({
    ...body,
    tools: [
      ...list(body.tools),
      ...tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema } })),
    ],
  }),
  toolCalls: (answer) =>
    records(chatMessage(answer)?.tool_calls).map((call) => {
      const fn = isObject(call.function) ? call.function : {};
      return { id: text(call.id), name: text(fn.name), ...parsedArguments(fn.arguments) };
    }),
  continued: (body, answer, results) => {
    const message = chatMessage(answer) ?? {};
    const turn = { role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls };
    const replies = results.map((result) => ({ role: 'tool', tool_call_id: result.call.id, content: result.text }));
    return { ...body, messages: [...list(body.messages), turn, ...replies] };
  },
  withoutCalls: (answer, ids) => {
    const completion = answer as Body;
    const choices = records(completion.choices).map((choice, index) => {
      if (index !== 0 || !isObject(choice.message)) return choice;
      return { ...choice, message: { ...choice.message, tool_calls: records(choice.message.tool_calls).filter((call) => !ids.has(text(call.id))) } };
    });
    return { ...completion, choices };
  },
  frames: (answer, body) => {
    const completion = answer as Body;
    const head = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model };
    const frames = records(completion.choices).flatMap((choice) => {
      const message = isObject(choice.message) ? choice.message : {};
      const toolCalls = records(message.tool_calls).map((call, index) => ({ index, ...call }));
      const delta = { role: 'assistant', content: message.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
      return [
        sseFrame(JSON.stringify({ ...head, choices: [{ index: choice.index ?? 0, delta, finish_reason: null }] })),
        sseFrame(JSON.stringify({ ...head, choices: [{ index: choice.index ?? 0, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }] })),
      ];
    });
    const wantsUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
    if (wantsUsage && completion.usage) frames.push(sseFrame(JSON.stringify({ ...head, choices: [], usage: completion.usage })));
    return [...frames, sseFrame('[DONE]')];
  },
};

function chatMessage(answer: unknown): Body | null {
  const choice = isObject(answer) ? records(answer.choices)[0] : undefined;
  return choice && isObject(choice.message) ? choice.message : null;
}

/** What an OpenAI-format body (chat, Responses) says of its request: `stream`, and the end user in `user`. */
export const openAIOpening: ModelDialect['opening'] = (body) => ({ stream: body.stream === true, user: typeof body.user === 'string' ? body.user : null });

export const CHAT_DIALECT: ModelDialect = {
  texts: CHAT_TEXTS,
  tools: CHAT_TOOLS,
  opening: openAIOpening,
};
