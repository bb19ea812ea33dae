import type { ProviderTarget } from '../provider-target';
import type { ChatTranslation } from '../chat-format';
import { IgnoredParams } from '../ignored-params';
import type { JsonOperationCapability, ProviderAdapter, UpstreamRequest } from '../provider-adapter';
import { toCohereChatRequest } from './chat-request';
import { toChatCompletion, toOpenAIError } from './chat-response';
import { CohereChatStreamDecoder } from './chat-stream';
import { toCohereEmbedRequest, toOpenAIEmbeddings } from './embed';
import { fromCohereRerank, toCohereRerankRequest } from './rerank';

/** Cohere's v2 API. The version is part of the base, so a custom host names it too (`https://…/v2`). */
export const COHERE_BASE_URL = 'https://api.cohere.com/v2';

const translation: ChatTranslation = {
  toChatCompletion,
  streamDecoder: (model) => new CohereChatStreamDecoder(model),
  toOpenAIError,
};

function post(target: ProviderTarget, path: string, body: Record<string, unknown>, ignoredParams?: string[]): UpstreamRequest {
  const base = (target.customHost ?? COHERE_BASE_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  if (body.stream === true) headers.accept = 'text/event-stream';
  return { method: 'POST', url: `${base}${path}`, headers, body: JSON.stringify(body), ...(ignoredParams ? { ignoredParams } : {}) };
}

/** `/embed`, answered in OpenAI's embeddings shape (`encoding_format` honoured). */
const embeddings: JsonOperationCapability = {
  buildRequest: (body, target) => post(target, '/embed', toCohereEmbedRequest(body)),
  translation: { toAnswer: (answer, body) => toOpenAIEmbeddings(answer, body), toOpenAIError },
};

/** `/rerank`, Cohere's own shape; the rerank operation adds what the gateway's answer has besides. */
const rerank: JsonOperationCapability = {
  buildRequest: (body, target) => post(target, '/rerank', toCohereRerankRequest(body)),
  translation: { toAnswer: (answer) => fromCohereRerank(answer), toOpenAIError },
};

/** Cohere: v2 chat translated from and to OpenAI's chat completions, embeddings and rerank. */
export const cohereAdapter: ProviderAdapter = {
  id: 'cohere',
  credentialOptional: false,
  requiresCustomHost: false,
  chatCompletions: {
    buildRequest(body, target) {
      const ignored = new IgnoredParams(target.strictParams);
      const request = toCohereChatRequest(body, ignored);
      return post(target, '/chat', request, ignored.list());
    },
    translation,
  },
  embeddings,
  rerank,
};
