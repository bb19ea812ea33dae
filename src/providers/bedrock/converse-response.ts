import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../common/errors/gateway-error';
import type { ChatAssistantMessage, ChatCompletion, ChatToolCall, ChatUsage, OpenAIErrorBody } from '../chat-format';
import { type Fields, isObject } from '../translation-checks';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

export const generatedId = () => `chatcmpl-${randomUUID().replace(/-/g, '')}`;

/**
 * Converse's `usage` as OpenAI's. Like Anthropic's, Converse's `inputTokens` leave out
 * the prompt-cache reads and writes (`cacheReadInputTokens`, `cacheWriteInputTokens`),
 * so the prompt is their sum; `prompt_tokens_details.cache_write_tokens` (the gateway's
 * own addition, as for Anthropic) keeps the writes apart for pricing.
 */
export function converseUsageAsOpenAI(usage: Record<string, unknown>): ChatUsage {
  const cached = count(usage.cacheReadInputTokens);
  const written = count(usage.cacheWriteInputTokens);
  const prompt = count(usage.inputTokens) + cached + written;
  const completion = count(usage.outputTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, cache_write_tokens: written },
  };
}

/**
 * Converse's `stopReason` as OpenAI's `finish_reason`. A guardrail or the model's content
 * filter stopping the answer is `content_filter`; reasons added later are `stop`.
 */
export function finishReasonFromConverse(stopReason: unknown): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * A Converse answer (`{output: {message: {role, content}}, stopReason, usage}`) as a
 * `chat.completion`. Text blocks join into the content, `toolUse` blocks become tool
 * calls, reasoning text becomes `reasoning_content` (its signature stays behind, as for
 * Anthropic). Converse names neither the answer nor the model: the id is made here and
 * the model is the one the request named.
 */
/** The object at `key` of `value`, if both are objects. */
const objectAt = (value: unknown, key: string): Fields | undefined => (isObject(value) && isObject(value[key]) ? value[key] : undefined);

export function toChatCompletion(answer: unknown, model: string): ChatCompletion {
  const content = objectAt(objectAt(answer, 'output'), 'message')?.content;
  if (!isObject(answer) || !Array.isArray(content)) throw GatewayError.upstreamMalformed('Provider bedrock answered without output.message.content');
  const blocks = content.filter((block) => typeof block === 'object' && block !== null) as Fields[];
  const text = blocks.filter((block) => typeof block.text === 'string').map((block) => block.text as string);
  const reasoning = blocks
    .map((block) => objectAt(block.reasoningContent, 'reasoningText')?.text)
    .filter((value): value is string => typeof value === 'string');
  const toolCalls = blocks
    .map((block) => objectAt(block, 'toolUse'))
    .filter((toolUse): toolUse is Fields & { name: string } => typeof toolUse?.name === 'string')
    .map((toolUse): ChatToolCall => ({
      id: String(toolUse.toolUseId),
      type: 'function',
      function: { name: toolUse.name, arguments: JSON.stringify(toolUse.input ?? {}) },
    }));
  const message: ChatAssistantMessage = { role: 'assistant', content: text.length ? text.join('') : null, refusal: null };
  if (reasoning.length) message.reasoning_content = reasoning.join('\n\n');
  if (toolCalls.length) message.tool_calls = toolCalls;
  const completion: ChatCompletion = {
    id: generatedId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReasonFromConverse(answer.stopReason), logprobs: null }],
  };
  // Absent counts are not zero counts: without usage the log records none rather than a free call.
  if (answer.usage && typeof answer.usage === 'object') completion.usage = converseUsageAsOpenAI(answer.usage as Fields);
  return completion;
}

/** AWS error names (`x-amzn-errortype`, or the stream's `:exception-type`) whose OpenAI type is more precise than the status's. */
const ERROR_TYPES: Record<string, string> = {
  InvalidSignatureException: 'authentication_error',
  UnrecognizedClientException: 'authentication_error',
  ExpiredTokenException: 'authentication_error',
  IncompleteSignatureException: 'authentication_error',
  MissingAuthenticationTokenException: 'authentication_error',
  AccessDeniedException: 'permission_error',
  ResourceNotFoundException: 'not_found_error',
  ThrottlingException: 'rate_limit_error',
  ServiceQuotaExceededException: 'rate_limit_error',
  ValidationException: 'invalid_request_error',
  ModelNotReadyException: 'api_error',
  ModelTimeoutException: 'timeout_error',
  ModelErrorException: 'api_error',
  ModelStreamErrorException: 'api_error',
  InternalServerException: 'api_error',
  ServiceUnavailableException: 'api_error',
};

/** What a person can do about an AWS error, added to AWS's own message. */
const HINTS: Record<string, string> = {
  InvalidSignatureException: "check the virtual key's AWS secret access key (its key) and provider_options.aws_access_key_id",
  UnrecognizedClientException: 'check provider_options.aws_access_key_id and the session token of the virtual key',
  ExpiredTokenException: 'the AWS session token expired: give the virtual key fresh credentials',
  AccessDeniedException:
    'grant the IAM identity bedrock:InvokeModel (and InvokeModelWithResponseStream for streams) on this model, and enable the model in the Bedrock console of this region',
  ResourceNotFoundException:
    "check the model id: Bedrock's own id (e.g. anthropic.claude-3-5-haiku-20241022-v1:0) or an inference profile (us.…, eu.…, global.…) available in this region",
  ThrottlingException: 'Bedrock throttled the request: retry later or raise the quota of this model',
  ServiceQuotaExceededException: 'a Bedrock service quota was exceeded: retry later or raise the quota',
};

/** AWS's error name: `x-amzn-errortype` is `Name:http://…` at times; the stream's exception types are lowerCamel. */
export function awsErrorName(raw: string | undefined | null): string | null {
  if (!raw) return null;
  const name = raw.split(':')[0].trim();
  return name ? name.charAt(0).toUpperCase() + name.slice(1) : null;
}

/**
 * An AWS error (`{"message": "…"}` or `{"Message": "…"}`, its name in `x-amzn-errortype`
 * or a `__type` field) in OpenAI's error shape: the status is kept by the caller, the
 * name becomes the code, its kind the type, and the message says what to do about it.
 */
export function toOpenAIError(status: number, body: unknown, headers?: Record<string, string>): OpenAIErrorBody {
  const record = typeof body === 'object' && body !== null ? (body as Fields) : null;
  const name = awsErrorName(headers?.['x-amzn-errortype'] ?? (typeof record?.__type === 'string' ? record.__type.split('#').pop() : null));
  const given =
    typeof record?.message === 'string'
      ? record.message
      : typeof record?.Message === 'string'
        ? record.Message
        : typeof body === 'string'
          ? body.trim().slice(0, 1000)
          : '';
  const hint = name && Object.hasOwn(HINTS, name) ? HINTS[name] : null;
  const message = `Provider bedrock answered ${status}${name ? ` ${name}` : ''}${given ? `: ${given}` : ''}${hint ? ` (${hint})` : ''}`;
  const type = (name && Object.hasOwn(ERROR_TYPES, name) ? ERROR_TYPES[name] : null) ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { error: { message, type, param: null, code: name } };
}
