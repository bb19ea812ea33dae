import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { toAnthropicRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { AnthropicChatStreamDecoder } from './chat-stream';

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
 * A POST to `/messages`. `x-api-key` comes from the routing, never from the client; the
 * version and betas are the client's when it sent them (native messages), else the
 * virtual key's `provider_options`, else the default version and no beta.
 */
function messagesRequest(payload: Record<string, unknown>, target: RouteTarget, headers: Record<string, string> = {}): UpstreamRequest {
  const base = (target.customHost ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '');
  const sent: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': headers['anthropic-version'] || target.providerOptions.anthropic_version || DEFAULT_ANTHROPIC_VERSION,
  };
  const beta = headers['anthropic-beta'] || target.providerOptions.anthropic_beta;
  if (beta) sent['anthropic-beta'] = beta;
  if (target.apiKey) sent['x-api-key'] = target.apiKey;
  return { method: 'POST', url: `${base}/messages`, headers: sent, body: JSON.stringify(payload) };
}

/** Anthropic: the Messages API natively, and chat completions translated to it. */
export const anthropicAdapter: ProviderAdapter = {
  id: 'anthropic',
  credentialOptional: false,
  requiresCustomHost: false,
  messages: { buildRequest: messagesRequest },
  chatCompletions: {
    buildRequest: (body, target, headers) => {
      const ignored = new IgnoredParams(target.strictParams);
      return { ...messagesRequest(toAnthropicRequest(body, ignored), target, headers), ignoredParams: ignored.list() };
    },
    translation,
  },
};
