import { GatewayError } from '../../common/errors/gateway-error';
import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { toGeminiRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { GeminiChatStreamDecoder } from './chat-stream';

/** The Gemini API (AI Studio keys). The version is part of the base, so a custom host can pin another. */
export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

const translation: ChatTranslation = {
  toChatCompletion,
  streamDecoder: (model) => new GeminiChatStreamDecoder(model),
  toOpenAIError,
};

/**
 * The method URL of a model. Gemini's own SDKs name models `models/<id>`; the path
 * adds that segment itself, so a name given with it loses it.
 */
export function generateContentUrl(target: RouteTarget, model: string, stream: boolean): string {
  const base = (target.customHost ?? GOOGLE_BASE_URL).replace(/\/+$/, '');
  const id = encodeURIComponent(model.replace(/^models\//, ''));
  // alt=sse: without it the stream is one JSON array sent piece by piece, which no SSE parser reads.
  return stream ? `${base}/models/${id}:streamGenerateContent?alt=sse` : `${base}/models/${id}:generateContent`;
}

function buildRequest(body: Record<string, unknown>, target: RouteTarget): UpstreamRequest {
  if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Gemini model', 'model');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey) headers['x-goog-api-key'] = target.apiKey;
  const ignored = new IgnoredParams(target.strictParams);
  const request = toGeminiRequest(body, ignored);
  return {
    method: 'POST',
    url: generateContentUrl(target, body.model, body.stream === true),
    headers,
    body: JSON.stringify(request),
    ignoredParams: ignored.list(),
  };
}

/** Google's Gemini API: its own wire format, translated from and to OpenAI's chat completions. */
export const googleAdapter: ProviderAdapter = {
  id: 'google',
  credentialOptional: false,
  requiresCustomHost: false,
  chatCompletions: { buildRequest, translation },
};
