import { type ChatCompletion, type ChatFinishReason, type ChatToolCall, type ChatUsage, reasoningText } from '../../../providers/chat-format';
import { isObject } from '../../../providers/translation-checks';
import { googleError } from '../gemini-dialect';

/** A Gemini part or candidate as the bridge writes it. */
type Json = Record<string, unknown>;

/** OpenAI's finish reason as Gemini's: tool calls end a turn with `STOP`, as Gemini's own do. */
export function finishReasonToGemini(reason: ChatFinishReason | null | undefined): string {
  switch (reason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * OpenAI's usage as Gemini's `usageMetadata`: reasoning is counted apart from the answer
 * (`thoughtsTokenCount`), cached prompt tokens stay part of the prompt's count.
 */
export function usageMetadataFromOpenAI(usage: ChatUsage | null | undefined): Json | undefined {
  if (!usage) return undefined;
  const thoughts = count(usage.completion_tokens_details?.reasoning_tokens);
  const cached = count(usage.prompt_tokens_details?.cached_tokens);
  return {
    promptTokenCount: count(usage.prompt_tokens),
    candidatesTokenCount: Math.max(0, count(usage.completion_tokens) - thoughts),
    totalTokenCount: count(usage.total_tokens) || count(usage.prompt_tokens) + count(usage.completion_tokens),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
  };
}

/** Tool call arguments as a `functionCall.args` object (Gemini's clients take one); arguments that are not an object are kept as text in `_raw_arguments`. */
export function callArgs(args: string): Json {
  if (!args.trim()) return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return isObject(parsed) ? parsed : { _raw_arguments: args };
  } catch {
    return { _raw_arguments: args };
  }
}

/** A tool call as a `functionCall` part, its id kept so that the client can answer it by id. */
export const functionCallPart = (call: ChatToolCall): Json => ({
  functionCall: { id: call.id, name: call.function.name, args: callArgs(call.function.arguments) },
});

/** A chat completion as a `GenerateContentResponse`: a candidate per choice, reasoning as a thought part first. */
export function chatCompletionToGemini(completion: ChatCompletion, model: string): Json {
  const candidates = completion.choices.map((choice) => {
    const message = choice.message;
    const parts: Json[] = [];
    const reasoning = reasoningText(message);
    if (reasoning) parts.push({ text: reasoning, thought: true });
    if (typeof message.content === 'string' && message.content) parts.push({ text: message.content });
    else if (typeof message.refusal === 'string' && message.refusal) parts.push({ text: message.refusal });
    for (const call of message.tool_calls ?? []) parts.push(functionCallPart(call));
    return { content: { role: 'model', parts }, finishReason: finishReasonToGemini(choice.finish_reason), index: choice.index };
  });
  const usageMetadata = usageMetadataFromOpenAI(completion.usage);
  return {
    candidates,
    ...(usageMetadata ? { usageMetadata } : {}),
    modelVersion: typeof completion.model === 'string' && completion.model ? completion.model : model,
    responseId: completion.id,
  };
}

/** A provider's error (in OpenAI's shape, as the chat bridge gives it) in Google's, status kept. */
export function openAIErrorToGoogle(body: unknown, status: number): Json {
  const error = isObject(body) ? body.error : undefined;
  let message = `The provider answered ${status}`;
  if (isObject(error) && typeof error.message === 'string' && error.message) message = error.message;
  else if (typeof error === 'string' && error) message = error;
  else if (typeof body === 'string' && body.trim()) message = body;
  return googleError(status, message);
}
