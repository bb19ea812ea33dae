import type { Attributes } from '@opentelemetry/api';
import type { LoggedError } from '../../common/errors/gateway-error';
import type { NormalizedUsage } from '../../providers/usage';

/** Stable names (`@opentelemetry/semantic-conventions`, written out so that the package is loaded only with the SDK). */
export const ATTR_ERROR_TYPE = 'error.type';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';

/**
 * Attribute names of OpenTelemetry's GenAI semantic conventions. They are still
 * "development" and moved out of `@opentelemetry/semantic-conventions` (deprecated there),
 * so they are written here, as that package advises for unstable names.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
} as const;

/** The gateway's own provider ids whose GenAI name differs (the rest are named as the gateway names them). */
const PROVIDER_NAMES: Record<string, string> = {
  bedrock: 'aws.bedrock',
  'azure-openai': 'azure.ai.openai',
  'azure-ai-foundry': 'azure.ai.inference',
  google: 'gcp.gemini',
  'vertex-ai': 'gcp.vertex_ai',
  'mistral-ai': 'mistral_ai',
  'x-ai': 'x_ai',
  'perplexity-ai': 'perplexity',
};

/** `gen_ai.provider.name` of a gateway provider id (`bedrock` → `aws.bedrock`); an MCP server stays `mcp:<slug>`. */
export function genAiProviderName(provider: string): string {
  return PROVIDER_NAMES[provider] ?? provider;
}

/** The gateway operations that are a chat in GenAI's terms (a model answering messages). */
const CHAT_OPERATIONS = new Set(['chat.completions', 'responses', 'messages', 'prompts.completions']);

/** `gen_ai.operation.name` of a gateway operation: `chat`, `embeddings`, else the gateway's own name (`images.generations`, `rerank` …). */
export function genAiOperationName(operation: string): string {
  if (CHAT_OPERATIONS.has(operation)) return 'chat';
  return operation;
}

/** A span name after the GenAI conventions: `{operation} {model}`, or the operation alone. */
export function genAiSpanName(operation: string, model: string | null): string {
  const name = genAiOperationName(operation);
  return model ? `${name} ${model}` : name;
}

/** `error.type`: the gateway's error code (else its type), or the HTTP status of an error answer without one. */
export function errorType(error: LoggedError | null, status: number): string | null {
  if (error) return error.code ?? error.type;
  return status >= 400 ? String(status) : null;
}

/** Token counts in GenAI's names, the ones the usage has. */
export function usageAttributes(usage: NormalizedUsage | null): Attributes {
  if (!usage) return {};
  const attributes: Attributes = { [GEN_AI.inputTokens]: usage.promptTokens, [GEN_AI.outputTokens]: usage.completionTokens };
  if (usage.cachedTokens) attributes[GEN_AI.cacheReadInputTokens] = usage.cachedTokens;
  if (usage.reasoningTokens) attributes[GEN_AI.reasoningOutputTokens] = usage.reasoningTokens;
  return attributes;
}
