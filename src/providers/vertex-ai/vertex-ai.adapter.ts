import { GatewayError } from '../../common/errors/gateway-error';
import type { RouteTarget } from '../../modules/routing/route-plan';
import type { ChatTranslation } from '../chat-format';
import { toGeminiRequest } from '../google/chat-request';
import * as geminiResponse from '../google/chat-response';
import { GeminiChatStreamDecoder } from '../google/chat-stream';
import { IgnoredParams } from '../ignored-params';
import type { ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { GoogleCredentials } from './google-credentials';

/**
 * Google Vertex AI: Gemini (and, through their publishers, partner models) in a Google
 * Cloud project, behind OAuth2 bearer tokens (see google-credentials.ts).
 *
 * `provider_options`: `project_id`, `region` (`global` allowed). Every model method is
 * `{host}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`,
 * the host `https://{region}-aiplatform.googleapis.com` (`https://aiplatform.googleapis.com`
 * for `global`) or `custom_host`. Gemini speaks the same GenerateContent format as the
 * Gemini API, so its translation is the Google adapter's.
 */

const credentials = new GoogleCredentials();

/** The project and region of a target; a 400 naming the option that is missing. */
function location(target: RouteTarget): { project: string; region: string } {
  const project = target.providerOptions.project_id;
  if (!project) throw GatewayError.invalidRequest('Vertex AI needs provider_options.project_id (the Google Cloud project)', 'provider_options.project_id');
  const region = target.providerOptions.region;
  if (!region) throw GatewayError.invalidRequest('Vertex AI needs provider_options.region (e.g. us-central1, or global)', 'provider_options.region');
  return { project, region };
}

function host(target: RouteTarget, region: string): string {
  if (target.customHost) return target.customHost.replace(/\/+$/, '');
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${encodeURIComponent(region)}-aiplatform.googleapis.com`;
}

/** A model method's URL; `method` may carry a query (`streamGenerateContent?alt=sse`). */
export function vertexModelUrl(target: RouteTarget, publisher: string, model: string, method: string): string {
  const { project, region } = location(target);
  const path = `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}/publishers/${publisher}/models/${encodeURIComponent(model)}`;
  return `${host(target, region)}${path}:${method}`;
}

function headers(target: RouteTarget): Record<string, string> {
  // `authorize` runs before every build; without its token nothing is sent (the stored key must never go out as a bearer).
  if (!target.accessToken) throw new Error('Vertex AI request built without an access token');
  return { 'content-type': 'application/json', authorization: `Bearer ${target.accessToken}` };
}

/** Gemini's model names as the Gemini API writes them (`models/gemini-2.5-flash`) lose the prefix. */
function modelOf(body: Record<string, unknown>): string {
  if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Vertex AI model', 'model');
  return body.model.replace(/^models\//, '');
}

function chatRequest(body: Record<string, unknown>, target: RouteTarget): UpstreamRequest {
  const model = modelOf(body);
  const ignored = new IgnoredParams(target.strictParams);
  const request = toGeminiRequest(body, ignored);
  // alt=sse: without it the stream is one JSON array sent piece by piece, which no SSE parser reads.
  const method = body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return { method: 'POST', url: vertexModelUrl(target, 'google', model, method), headers: headers(target), body: JSON.stringify(request), ignoredParams: ignored.list() };
}

const translation: ChatTranslation = {
  toChatCompletion: geminiResponse.toChatCompletion,
  streamDecoder: (model) => new GeminiChatStreamDecoder(model),
  toOpenAIError: geminiResponse.toOpenAIError,
};

export const vertexAIAdapter: ProviderAdapter = {
  id: 'vertex-ai',
  // No key: the gateway's Application Default Credentials (virtual keys only, see google-credentials.ts).
  credentialOptional: true,
  requiresCustomHost: false,
  async authorize(target, fetch) {
    location(target);
    return { ...target, accessToken: await credentials.accessToken(target, fetch) };
  },
  chatCompletions: { buildRequest: chatRequest, translation },
};
