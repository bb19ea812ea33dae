import { GatewayError } from '../../common/errors/gateway-error';
import type { ProviderTarget } from '../provider-target';
import { mergeEmbeddingLists, openAIEmbeddingList } from '../embedding-vectors';
import type { JsonOperationCapability, UpstreamHeaders, UpstreamRequest } from '../provider-adapter';
import { fieldOf } from '../translation-checks';
import { toOpenAIError } from './converse-response';
import { modelUrl } from './bedrock-urls';

/**
 * OpenAI embeddings through InvokeModel (`POST /model/{id}/invoke`), whose body is the
 * model family's own:
 *   - Cohere Embed (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`, `cohere.embed-v4:0`):
 *     `{texts, input_type, truncate?, output_dimension?}` → `{embeddings: [[…]] | {float: [[…]]}, texts, id}`,
 *     at most 96 texts a request; the token count only in the `x-amzn-bedrock-input-token-count` header.
 *   - Titan Text Embeddings (`amazon.titan-embed-text-v2:0`, `-v1`, `amazon.titan-embed-g1-text-02`):
 *     `{inputText, dimensions?, normalize?}` → `{embedding, inputTextTokenCount}`, one text a request.
 * A client's inputs beyond what one request takes fan out (JsonFanOut): one request per Titan
 * text, per 96 Cohere texts, merged in order with the tokens summed. Vectors are always asked
 * for as floats and encoded as the client's `encoding_format` asks (`base64` in the OpenAI SDKs).
 */

/** Model ids, also behind a cross-region inference profile (`us.`, `eu.`, `apac.`, `global.` …). */
const PROFILE = '^([a-z]{2,6}(-[a-z]+)?\\.)?';
const COHERE_EMBED = new RegExp(`${PROFILE}cohere\\.embed-`);
const TITAN_EMBED_TEXT = new RegExp(`${PROFILE}amazon\\.titan-embed-(text|g1-text)-`);
/** Cohere Embed's limit of texts in one InvokeModel. */
const COHERE_TEXTS_PER_REQUEST = 96;
/** OpenAI's own limit of inputs in one embeddings request; here it also bounds a Titan fan-out. */
const MAX_INPUTS = 2048;
/** Where Bedrock reports the input tokens of an InvokeModel. */
const INPUT_TOKENS_HEADER = 'x-amzn-bedrock-input-token-count';

const unsupported = (field: string) => GatewayError.invalidRequest(`Provider bedrock does not support ${field} for embeddings`, field);

type Family = 'cohere' | 'titan';

function familyOf(model: unknown): Family {
  if (typeof model === 'string' && COHERE_EMBED.test(model)) return 'cohere';
  if (typeof model === 'string' && TITAN_EMBED_TEXT.test(model)) return 'titan';
  throw GatewayError.invalidRequest(
    'Provider bedrock embeds with Cohere Embed (cohere.embed-…) and Titan Text Embeddings (amazon.titan-embed-text-…) models: model names neither',
    'model',
  );
}

/** The texts of `input`: Bedrock's embedding models take text, not token ids. */
function textsOf(body: Record<string, unknown>): string[] {
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw GatewayError.invalidRequest('Provider bedrock embeds text only: input must be a string or a non-empty array of strings', 'input');
  }
  if (texts.length > MAX_INPUTS) throw GatewayError.invalidRequest(`input holds ${texts.length} texts; at most ${MAX_INPUTS} in one request`, 'input');
  return texts;
}

/**
 * Each OpenAI field for a family: mapped, applied to the answer (`encoding_format`), dropped
 * (`user`: recorded in the log, Bedrock has no such field) or, when absent here, a 400 naming it.
 */
const COMMON: Record<string, (value: unknown, request: Record<string, unknown>) => void> = {
  model: () => undefined,
  input: () => undefined,
  encoding_format: () => undefined,
  user: () => undefined,
};
const FIELDS: Record<Family, typeof COMMON> = {
  cohere: {
    ...COMMON,
    // Embed v4 only; v3 models answer Bedrock's ValidationException, passed through.
    dimensions: (value, request) => (request.output_dimension = value),
    input_type: (value, request) => {
      if (typeof value !== 'string')
        throw GatewayError.invalidRequest('input_type must be a string (search_document, search_query, classification or clustering)', 'input_type');
      request.input_type = value;
    },
    truncate: (value, request) => {
      if (typeof value !== 'string') throw GatewayError.invalidRequest('truncate must be NONE, START or END', 'truncate');
      request.truncate = value;
    },
  },
  titan: {
    ...COMMON,
    // Titan v2 only (256, 512 or 1024); v1 answers Bedrock's ValidationException, passed through.
    dimensions: (value, request) => (request.dimensions = value),
    normalize: (value, request) => {
      if (typeof value !== 'boolean') throw GatewayError.invalidRequest('normalize must be a boolean', 'normalize');
      request.normalize = value;
    },
  },
};

function apply(family: Family, body: Record<string, unknown>, request: Record<string, unknown>): Record<string, unknown> {
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const map = Object.hasOwn(FIELDS[family], field) ? FIELDS[family][field] : undefined;
    if (!map) throw unsupported(field);
    map(value, request);
  }
  return request;
}

/** The InvokeModel body for one request's worth of texts (after the fan-out). */
export function toBedrockEmbedRequest(body: Record<string, unknown>): Record<string, unknown> {
  const family = familyOf(body.model);
  const texts = textsOf(body);
  if (family === 'cohere') {
    if (texts.length > COHERE_TEXTS_PER_REQUEST)
      throw GatewayError.invalidRequest(`Cohere Embed takes at most ${COHERE_TEXTS_PER_REQUEST} texts in one request`, 'input');
    return apply(family, body, { texts, input_type: 'search_document' });
  }
  if (texts.length > 1) throw GatewayError.invalidRequest('Titan Text Embeddings take one text in one request', 'input');
  return apply(family, body, { inputText: texts[0] });
}

/** The bodies one client request becomes: null when one request takes all of its texts. */
export function splitEmbedBody(body: Record<string, unknown>): Record<string, unknown>[] | null {
  const family = familyOf(body.model);
  const texts = textsOf(body);
  const size = family === 'cohere' ? COHERE_TEXTS_PER_REQUEST : 1;
  if (texts.length <= size) return null;
  // Every part is checked as a whole body would be, so a bad field is refused before anything is sent.
  toBedrockEmbedRequest({ ...body, input: texts.slice(0, size) });
  const parts: Record<string, unknown>[] = [];
  for (let start = 0; start < texts.length; start += size) parts.push({ ...body, input: texts.slice(start, start + size) });
  return parts;
}

function headerTokens(headers: UpstreamHeaders): number | null {
  const value = headers[INPUT_TOKENS_HEADER];
  const count = Number(Array.isArray(value) ? value[0] : value);
  return value !== undefined && Number.isInteger(count) && count >= 0 ? count : null;
}

const isVector = (values: unknown): values is number[] => Array.isArray(values) && values.every((value) => typeof value === 'number');

/** An InvokeModel embeddings answer in OpenAI's shape; tokens from Titan's body, else Bedrock's header. */
export function fromBedrockEmbeddings(answer: Record<string, unknown>, body: Record<string, unknown>, headers: UpstreamHeaders): Record<string, unknown> {
  const model = String(body.model);
  if (familyOf(model) === 'titan') {
    if (!isVector(answer.embedding)) throw GatewayError.upstreamMalformed('Provider bedrock answered without embedding (Titan)');
    const tokens = typeof answer.inputTextTokenCount === 'number' ? answer.inputTextTokenCount : headerTokens(headers);
    return openAIEmbeddingList([answer.embedding], model, body.encoding_format, tokens);
  }
  // Without embedding_types Cohere answers `embeddings_floats` (a list of vectors); Embed v4 may answer by type.
  const vectors = Array.isArray(answer.embeddings) ? answer.embeddings : fieldOf(answer.embeddings, 'float');
  if (!Array.isArray(vectors) || !vectors.every(isVector)) throw GatewayError.upstreamMalformed('Provider bedrock answered without float embeddings (Cohere)');
  return openAIEmbeddingList(vectors, model, body.encoding_format, headerTokens(headers));
}

function buildEmbedRequest(body: Record<string, unknown>, target: ProviderTarget): UpstreamRequest {
  const request = toBedrockEmbedRequest(body);
  return {
    method: 'POST',
    url: modelUrl(target, String(body.model), 'invoke'),
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(request),
  };
}

export const bedrockEmbeddings: JsonOperationCapability = {
  buildRequest: buildEmbedRequest,
  translation: { toAnswer: fromBedrockEmbeddings, toOpenAIError },
  fanOut: { split: splitEmbedBody, merge: (answers, body) => mergeEmbeddingLists(answers, String(body.model)) },
};
