import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type {
  ChatInputTokensCapability,
  GeminiCapability,
  JsonOperationCapability,
  ProviderAdapter,
  ResourceCapability,
  UpstreamRequest,
} from '../provider-adapter';
import { toGeminiRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { GeminiChatStreamDecoder } from './chat-stream';
import { fromGeminiEmbeddings, googleEmbedInput, toGeminiBatchEmbedRequest } from './embed';

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
export function generateContentUrl(target: ProviderTarget, model: string, stream: boolean): string {
  const base = (target.customHost ?? GOOGLE_BASE_URL).replace(/\/+$/, '');
  const id = encodeURIComponent(model.replace(/^models\//, ''));
  // alt=sse: without it the stream is one JSON array sent piece by piece, which no SSE parser reads.
  return stream ? `${base}/models/${id}:streamGenerateContent?alt=sse` : `${base}/models/${id}:generateContent`;
}

function buildRequest(body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
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

const baseUrl = (target: ProviderTarget) => (target.customHost ?? GOOGLE_BASE_URL).replace(/\/+$/, '');

function authHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey ? { 'x-goog-api-key': target.apiKey } : {};
}

/**
 * `models/{model}:countTokens` (https://ai.google.dev/api/tokens) of a chat body: the
 * GenerateContentRequest the chat would send (contents, system instruction, tools), so
 * the count covers all of it. Generation settings change no input token and are left out.
 */
const chatInputTokens: ChatInputTokensCapability = {
  buildRequest(body, target) {
    if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Gemini model', 'model');
    const model = body.model.replace(/^models\//, '');
    const { contents, systemInstruction, tools, toolConfig } = toGeminiRequest(body);
    const generateContentRequest = { model: `models/${model}`, contents, systemInstruction, tools, toolConfig };
    return {
      method: 'POST',
      url: `${baseUrl(target)}/models/${encodeURIComponent(model)}:countTokens`,
      headers: { 'content-type': 'application/json', ...authHeaders(target) },
      body: JSON.stringify({ generateContentRequest }),
    };
  },
  inputTokens: (answer) => (typeof answer.totalTokens === 'number' ? answer.totalTokens : null),
};

/**
 * The model list through Gemini's OpenAI-compatible endpoint (`/openai/models`, under
 * the same base and key), so `/v1/models` answers in OpenAI's shape as for every other
 * provider. Its ids are as Google sends them. The key goes as a bearer token, as the
 * OpenAI libraries Google documents for that endpoint send it.
 */
const bearer = (apiKey: string | null): Record<string, string> => (apiKey ? { authorization: `Bearer ${apiKey}` } : {});

const models: ResourceCapability = {
  request: (method, path, query, target) => ({
    method,
    url: `${baseUrl(target)}/openai/models${path}${query ? `?${query}` : ''}`,
    headers: bearer(target.apiKey),
  }),
};

/** `models/{model}:batchEmbedContents`, answered in OpenAI's embeddings shape (`encoding_format` honoured, usage estimated). */
const embeddings: JsonOperationCapability = {
  buildRequest(body, target) {
    if (typeof body.model !== 'string' || !body.model) throw GatewayError.invalidRequest('model must be a string naming a Gemini embedding model', 'model');
    const model = body.model.replace(/^models\//, '');
    return {
      method: 'POST',
      url: `${baseUrl(target)}/models/${encodeURIComponent(model)}:batchEmbedContents`,
      headers: { 'content-type': 'application/json', ...authHeaders(target) },
      body: JSON.stringify(toGeminiBatchEmbedRequest(googleEmbedInput(body, 'google'), model)),
    };
  },
  translation: { toAnswer: fromGeminiEmbeddings, toOpenAIError },
};

/**
 * A body of the gateway's Gemini routes (`/v1beta/models/{model}:{method}`) as Gemini
 * takes it: the gateway's own `model` (the path's, after routing) and `stream` fields
 * leave the body for the URL (the model without its `models/` prefix); every other field
 * goes as the client sent it.
 */
export function geminiNativeBody(body: Record<string, unknown>): { model: string; payload: string } {
  const { model, stream: _stream, ...request } = body;
  if (typeof model !== 'string' || !model) throw GatewayError.invalidRequest('model must be a string naming a Gemini model', 'model');
  return { model: model.replace(/^models\//, ''), payload: JSON.stringify(request) };
}

function geminiMethodRequest(target: ProviderTarget, body: Record<string, unknown>, urlOf: (model: string) => string): UpstreamRequest {
  const { model, payload } = geminiNativeBody(body);
  return { method: 'POST', url: urlOf(model), headers: { 'content-type': 'application/json', ...authHeaders(target) }, body: payload };
}

const modelMethodUrl = (target: ProviderTarget, method: string) => (model: string) => `${baseUrl(target)}/models/${encodeURIComponent(model)}:${method}`;

/**
 * Gemini's own routes, natively. A stream is always asked for as SSE (`alt=sse`): the
 * gateway reads it event by event and writes the client the form it asked for.
 */
const generateContent: GeminiCapability = {
  buildRequest: (body, target) => geminiMethodRequest(target, body, (model) => generateContentUrl(target, model, body.stream === true)),
};

const geminiCountTokens: GeminiCapability = {
  buildRequest: (body, target) => geminiMethodRequest(target, body, modelMethodUrl(target, 'countTokens')),
};

/**
 * `embedContent` for one content, `batchEmbedContents` for `requests`, whose every request
 * names the model again: the routed one (a client's `models/@slug/model` is not Google's).
 */
const geminiEmbed: GeminiCapability = {
  buildRequest(body, target) {
    if (!Array.isArray(body.requests)) return geminiMethodRequest(target, body, modelMethodUrl(target, 'embedContent'));
    const model = `models/${String(body.model).replace(/^models\//, '')}`;
    const requests = body.requests.map((request: unknown) => (request && typeof request === 'object' ? { ...request, model } : request));
    return geminiMethodRequest(target, { ...body, requests }, modelMethodUrl(target, 'batchEmbedContents'));
  },
};

/** `GET /models[/{model}]` in Gemini's own shape (`pageSize`, `pageToken` passed on). */
const geminiModels: ResourceCapability = {
  request: (method, path, query, target) => ({
    method,
    url: `${baseUrl(target)}/models${path}${query ? `?${query}` : ''}`,
    headers: authHeaders(target),
  }),
};

/** Google's Gemini API: its own wire format, translated from and to OpenAI's chat completions. */
export const googleAdapter: ProviderAdapter = {
  id: 'google',
  credentialOptional: false,
  requiresCustomHost: false,
  chatCompletions: { buildRequest, translation },
  chatInputTokens,
  embeddings,
  models,
  generateContent,
  geminiCountTokens,
  geminiEmbed,
  geminiModels,
};
