import type { ChatAssistantMessage, ChatChoice, ChatCompletion, OpenAIErrorBody } from '../chat-format';
import { isObject } from '../translation-checks';
import { answerText, generatedId, logprobs, thoughtText, toolCalls } from './candidate';
import { finishReasonFromGemini } from './finish-reason';
import type { GeminiCandidate, GeminiResponse } from './gemini-types';
import { usageFromGemini } from './gemini-usage';

/** One OpenAI choice of a Gemini candidate. */
function choice(candidate: GeminiCandidate, position: number): ChatChoice {
  const parts = Array.isArray(candidate.content?.parts) ? candidate.content.parts : [];
  const calls = toolCalls(parts);
  const message: ChatAssistantMessage = { role: 'assistant', content: answerText(parts), refusal: null };
  const reasoning = thoughtText(parts);
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls;
  return {
    index: candidate.index ?? position,
    message,
    logprobs: logprobs(candidate),
    finish_reason: finishReasonFromGemini(String(candidate.finishReason ?? 'STOP'), calls.length > 0),
  };
}

/**
 * A `generateContent` answer as a `chat.completion`. A prompt Gemini blocked has no
 * candidates, only `promptFeedback.blockReason`: it becomes one empty choice finished by
 * `content_filter`, which is how OpenAI reports filtered answers.
 */
export function toChatCompletion(answer: unknown, model: string): ChatCompletion {
  const response = answer as GeminiResponse;
  const candidates = Array.isArray(response.candidates) ? response.candidates : [];
  const choices: ChatChoice[] = candidates.length
    ? candidates.map(choice)
    : [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: null },
          logprobs: null,
          finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
        },
      ];
  const completion: ChatCompletion = {
    id: response.responseId ?? generatedId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? model,
    choices,
  };
  // Absent counts are not zero counts: without usageMetadata the log records no usage rather than a free call.
  if (response.usageMetadata && typeof response.usageMetadata === 'object') completion.usage = usageFromGemini(response.usageMetadata);
  return completion;
}

/** Google's canonical error statuses whose OpenAI error type is more precise than 4xx/5xx. */
const ERROR_TYPES: Record<string, string> = {
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'authentication_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
};

/**
 * Gemini's `{error: {code, message, status, details}}` in OpenAI's error shape. The
 * stream endpoint may wrap it in an array. A bad API key is a 400 INVALID_ARGUMENT with
 * the reason API_KEY_INVALID in its details; OpenAI clients expect an
 * authentication error for it.
 */
export function toOpenAIError(status: number, body: unknown): OpenAIErrorBody {
  const fallbackType = status >= 500 ? 'api_error' : 'invalid_request_error';
  const unwrapped = Array.isArray(body) ? body[0] : body;
  const error = isObject(unwrapped) ? unwrapped.error : undefined;
  if (!isObject(error) || typeof error.message !== 'string') {
    return { error: { message: `Provider google answered ${status}`, type: fallbackType, param: null, code: null } };
  }
  const code = typeof error.status === 'string' ? error.status : null;
  const badKey = Array.isArray(error.details) && error.details.some((detail: unknown) => isObject(detail) && detail.reason === 'API_KEY_INVALID');
  const type = badKey ? 'authentication_error' : ((code && ERROR_TYPES[code]) ?? fallbackType);
  return { error: { message: error.message, type, param: null, code } };
}
