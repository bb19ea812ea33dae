import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import * as anthropicResponse from '../anthropic/chat-response';
import { toAnthropicRequest } from '../anthropic/chat-request';
import { AnthropicChatStreamDecoder } from '../anthropic/chat-stream';
import type { ChatTranslation } from '../chat-format';
import { toGeminiRequest } from '../google/chat-request';
import { geminiNativeBody } from '../google/google.adapter';
import { withAutoBreakpoints } from '../prompt-cache';
import * as geminiResponse from '../google/chat-response';
import { GeminiChatStreamDecoder } from '../google/chat-stream';
import { fromVertexPredictions, googleEmbedInput, toVertexPredictRequest } from '../google/embed';
import { IgnoredParams } from '../ignored-params';
import type {
  GeminiCapability,
  JsonOperationCapability,
  MessagesCapability,
  MessagesCountTokensCapability,
  ProviderAdapter,
  UpstreamRequest,
} from '../provider-adapter';
import { GoogleCredentials } from './google-credentials';

/**
 * Google Vertex AI: Gemini (and, through their publishers, partner models) in a Google
 * Cloud project, behind OAuth2 bearer tokens (see google-credentials.ts).
 *
 * `provider_options`: `project_id`, `region` (`global` allowed). Every model method is
 * `{host}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`,
 * the host `https://{region}-aiplatform.googleapis.com` (`https://aiplatform.googleapis.com`
 * for `global`) or `custom_host`. Gemini speaks the same GenerateContent format as the
 * Gemini API, so its translation is the Google adapter's. Claude (publisher `anthropic`,
 * every model id starting with `claude`) speaks Anthropic's Messages API through
 * `:rawPredict` / `:streamRawPredict`, the model in the URL instead of the body and
 * `anthropic_version: "vertex-2023-10-16"` in the body: natively for `/v1/messages`,
 * through the Anthropic adapter's translation for chat completions.
 */

/** The API version Vertex AI's Claude endpoints take, in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

const isClaude = (model: string) => model.startsWith('claude');

const credentials = new GoogleCredentials();

/** The project and region of a target; a 400 naming the option that is missing. */
function location(target: ProviderTarget): { project: string; region: string } {
  const project = target.providerOptions.project_id;
  if (!project) throw GatewayError.invalidRequest('Vertex AI needs provider_options.project_id (the Google Cloud project)', 'provider_options.project_id');
  const region = target.providerOptions.region;
  if (!region) throw GatewayError.invalidRequest('Vertex AI needs provider_options.region (e.g. us-central1, or global)', 'provider_options.region');
  return { project, region };
}

function host(target: ProviderTarget, region: string): string {
  if (target.customHost) return target.customHost.replace(/\/+$/, '');
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${encodeURIComponent(region)}-aiplatform.googleapis.com`;
}

/** A model method's URL; `method` may carry a query (`streamGenerateContent?alt=sse`). */
export function vertexModelUrl(target: ProviderTarget, publisher: string, model: string, method: string): string {
  const { project, region } = location(target);
  const path = `/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}/publishers/${publisher}/models/${encodeURIComponent(model)}`;
  return `${host(target, region)}${path}:${method}`;
}

function headers(target: ProviderTarget): Record<string, string> {
  // `authorize` runs before every build; without its token nothing is sent (the stored key must never go out as a bearer).
  if (!target.accessToken) throw new Error('Vertex AI request built without an access token');
  return { 'content-type': 'application/json', authorization: `Bearer ${target.accessToken}` };
}

/** Gemini's model names as the Gemini API writes them (`models/gemini-2.5-flash`) lose the prefix. */
function modelOf(body: Record<string, unknown>): string {
  if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Vertex AI model', 'model');
  return body.model.replace(/^models\//, '');
}

/**
 * A Messages API body for Claude on Vertex: the model moves to the URL, the version into
 * the body; the client's `anthropic-beta` goes on as Anthropic's own API takes it.
 */
function claudeRequest(payload: Record<string, unknown>, model: string, target: ProviderTarget, clientHeaders: Record<string, string> = {}): UpstreamRequest {
  const { model: _inUrl, ...rest } = target.autoCacheBreakpoints ? withAutoBreakpoints(payload) : payload;
  const method = rest.stream === true ? 'streamRawPredict' : 'rawPredict';
  const sent: Record<string, string> = headers(target);
  const beta = clientHeaders['anthropic-beta'] || target.providerOptions.anthropic_beta;
  if (beta) sent['anthropic-beta'] = beta;
  return {
    method: 'POST',
    url: vertexModelUrl(target, 'anthropic', model, method),
    headers: sent,
    body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }),
  };
}

const messages: MessagesCapability = {
  servesModel: (model) => isClaude(model),
  buildRequest: (body, target, clientHeaders) => claudeRequest(body, modelOf(body), target, clientHeaders),
};

/**
 * Claude's count_tokens on Vertex: one endpoint for every model,
 * `…/publishers/anthropic/models/count-tokens:rawPredict`, the model staying in the body
 * (unlike rawPredict's), the version added as for messages; answered `{input_tokens}`.
 */
const countTokens: MessagesCountTokensCapability = {
  servesModel: (model) => isClaude(model),
  buildRequest(body, target, clientHeaders = {}) {
    const model = modelOf(body);
    const sent: Record<string, string> = headers(target);
    const beta = clientHeaders['anthropic-beta'] || target.providerOptions.anthropic_beta;
    if (beta) sent['anthropic-beta'] = beta;
    return {
      method: 'POST',
      url: vertexModelUrl(target, 'anthropic', 'count-tokens', 'rawPredict'),
      headers: sent,
      body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body, model }),
    };
  },
};

function chatRequest(body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
  const model = modelOf(body);
  const ignored = new IgnoredParams(target.strictParams);
  if (isClaude(model)) return { ...claudeRequest(toAnthropicRequest(body, ignored), model, target), ignoredParams: ignored.list() };
  const request = toGeminiRequest(body, ignored);
  // alt=sse: without it the stream is one JSON array sent piece by piece, which no SSE parser reads.
  const method = body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    method: 'POST',
    url: vertexModelUrl(target, 'google', model, method),
    headers: headers(target),
    body: JSON.stringify(request),
    ignoredParams: ignored.list(),
  };
}

/** The answers' translation follows the model's publisher; an error body tells by its shape (Anthropic's has `type: "error"`). */
const translation: ChatTranslation = {
  toChatCompletion: (answer, model) => (isClaude(model) ? anthropicResponse : geminiResponse).toChatCompletion(answer, model),
  streamDecoder: (model) => (isClaude(model) ? new AnthropicChatStreamDecoder(model) : new GeminiChatStreamDecoder(model)),
  toOpenAIError: (status, body) =>
    ((body as Record<string, unknown> | null)?.type === 'error' ? anthropicResponse : geminiResponse).toOpenAIError(status, body),
};

/** Google's text embedding models through `:predict`, answered in OpenAI's embeddings shape (`encoding_format` honoured). */
const embeddings: JsonOperationCapability = {
  buildRequest(body, target) {
    const model = modelOf(body);
    return {
      method: 'POST',
      url: vertexModelUrl(target, 'google', model, 'predict'),
      headers: headers(target),
      body: JSON.stringify(toVertexPredictRequest(googleEmbedInput(body, 'vertex-ai'))),
    };
  },
  translation: { toAnswer: fromVertexPredictions, toOpenAIError: geminiResponse.toOpenAIError },
};

/** A Gemini route's body to a Gemini model on Vertex (the same GenerateContent format); Claude models are translated. */
function geminiMethod(
  method: (body: Record<string, unknown>) => string,
  reshape?: (body: Record<string, unknown>) => Record<string, unknown>,
): GeminiCapability {
  return {
    servesModel: (model) => !isClaude(model.replace(/^models\//, '')),
    buildRequest(body, target) {
      const { model, payload } = geminiNativeBody(reshape ? reshape(body) : body);
      return { method: 'POST', url: vertexModelUrl(target, 'google', model, method(body)), headers: headers(target), body: payload };
    },
  };
}

/**
 * The Gemini API's countTokens takes a whole `generateContentRequest`; Vertex's takes its
 * fields at the top (contents, system instruction, tools), without the model.
 */
function vertexCountBody(body: Record<string, unknown>): Record<string, unknown> {
  const { generateContentRequest, generate_content_request, ...rest } = body;
  const inner = generateContentRequest ?? generate_content_request;
  if (!inner || typeof inner !== 'object') return rest;
  const { model: _model, contents, systemInstruction, system_instruction, tools } = inner as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries({ ...rest, contents, systemInstruction: systemInstruction ?? system_instruction, tools }).filter(([, value]) => value !== undefined),
  );
}

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
  messages,
  // Claude only (Gemini's countTokens is not wired here: other models are estimated).
  messagesCountTokens: countTokens,
  embeddings,
  // alt=sse: see chatRequest.
  generateContent: geminiMethod((body) => (body.stream === true ? 'streamGenerateContent?alt=sse' : 'generateContent')),
  geminiCountTokens: geminiMethod(() => 'countTokens', vertexCountBody),
};
