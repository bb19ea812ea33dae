import { jsonPayload } from '../../common/http/received-body';
import type { ProviderTarget } from '../provider-target';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, ResourceCapability, UpstreamRequest } from '../provider-adapter';
import { withAutoBreakpoints } from '../prompt-cache';
import { toAnthropicRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { AnthropicChatStreamDecoder } from './chat-stream';
import { anthropicBatches } from './batches';

/** The API's base; the version is a header, so a custom host replaces the whole base. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';
/** The API version sent when neither the client nor the virtual key names one. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

const translation: ChatTranslation = {
  toChatCompletion,
  streamDecoder: (model) => new AnthropicChatStreamDecoder(model),
  toOpenAIError,
};

/**
 * The headers of every call: `x-api-key` from the routing, never from the client; the
 * version and betas are the client's when it sent them (native operations), else the
 * virtual key's `provider_options`, else the default version and no beta.
 */
function anthropicRequestHeaders(target: ProviderTarget, headers: Record<string, string>): Record<string, string> {
  const sent: Record<string, string> = {
    'anthropic-version': headers['anthropic-version'] || target.providerOptions.anthropic_version || DEFAULT_ANTHROPIC_VERSION,
  };
  const beta = headers['anthropic-beta'] || target.providerOptions.anthropic_beta;
  if (beta) sent['anthropic-beta'] = beta;
  if (target.apiKey) sent['x-api-key'] = target.apiKey;
  return sent;
}

const baseUrl = (target: ProviderTarget) => (target.customHost ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '');

/** A call on a path of the API (`/messages/batches/{id}` …), a JSON body when given. */
function apiRequest(
  method: UpstreamRequest['method'],
  path: string,
  target: ProviderTarget,
  headers: Record<string, string> = {},
  body?: Record<string, unknown>,
): UpstreamRequest {
  const sent = anthropicRequestHeaders(target, headers);
  return body
    ? { method, url: `${baseUrl(target)}${path}`, headers: { 'content-type': 'application/json', ...sent }, body: JSON.stringify(body) }
    : { method, url: `${baseUrl(target)}${path}`, headers: sent };
}

/** A JSON POST to a path of the API (`/messages`, `/messages/count_tokens`); a client's Messages body unchanged goes as received. */
function postRequest(path: string, payload: Record<string, unknown>, target: ProviderTarget, headers: Record<string, string> = {}): UpstreamRequest {
  return {
    method: 'POST',
    url: `${baseUrl(target)}${path}`,
    headers: { 'content-type': 'application/json', ...anthropicRequestHeaders(target, headers) },
    body: jsonPayload(payload),
  };
}

/** A Messages request; with the config's `cache_breakpoints: "auto"`, breakpoints placed where the client put none. */
const messagesRequest = (payload: Record<string, unknown>, target: ProviderTarget, headers?: Record<string, string>) =>
  postRequest('/messages', target.autoCacheBreakpoints ? withAutoBreakpoints(payload) : payload, target, headers);

/** `GET /models`, `/models/{id}`: Anthropic's Models API (its query, `limit`, `before_id`, `after_id`, as the client sent it). */
const anthropicModels: ResourceCapability = {
  request: (method, path, query, target) => apiRequest(method, `/models${path}${query ? `?${query}` : ''}`, target),
};

/** Anthropic: the Messages API natively, and chat completions translated to it. */
export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  credentialOptional: false,
  requiresCustomHost: false,
  messages: { buildRequest: messagesRequest },
  messagesCountTokens: { buildRequest: (payload, target, headers) => postRequest('/messages/count_tokens', payload, target, headers) },
  anthropicModels,
  batches: anthropicBatches(apiRequest),
  chatCompletions: {
    buildRequest: (body, target, headers) => {
      const ignored = new IgnoredParams(target.strictParams);
      return { ...messagesRequest(toAnthropicRequest(body, ignored), target, headers), ignoredParams: ignored.list() };
    },
    translation,
  },
};
