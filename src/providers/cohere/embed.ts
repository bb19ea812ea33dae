import { GatewayError } from '../../common/errors/gateway-error';
import { openAIEmbeddingList } from '../embedding-vectors';
import { fieldOf, invalid, unsupportedBy } from '../translation-checks';

const unsupported = unsupportedBy('cohere');

/**
 * OpenAI embeddings fields and what becomes of them at Cohere's v2 `/embed`. The gateway
 * always asks for float vectors (`embedding_types: ["float"]`) and encodes them as the
 * client's `encoding_format` asks; `input_type` (search_document by default, which is
 * what most embedding is for: indexing) and `truncate` are Cohere's own and pass as sent.
 */
const FIELDS: Record<string, (value: unknown, request: Record<string, unknown>) => void> = {
  model: () => undefined,
  input: () => undefined,
  encoding_format: () => undefined,
  user: () => undefined,
  dimensions: (value, request) => {
    if (!Number.isInteger(value)) throw invalid('dimensions must be an integer', 'dimensions');
    request.output_dimension = value;
  },
  input_type: (value, request) => {
    if (typeof value !== 'string') throw invalid('input_type must be a string', 'input_type');
    request.input_type = value;
  },
  truncate: (value, request) => (request.truncate = value),
};

/** An OpenAI embeddings body as a Cohere v2 embed request; Cohere embeds texts, not token ids. */
export function toCohereEmbedRequest(body: Record<string, unknown>): Record<string, unknown> {
  const input = body.input;
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || !texts.every((text) => typeof text === 'string')) {
    throw unsupported('input', 'token ids as input (input must be a string or an array of strings)');
  }
  const request: Record<string, unknown> = { model: body.model, texts, input_type: 'search_document', embedding_types: ['float'] };
  for (const [field, value] of Object.entries(body)) {
    if (value === null || value === undefined) continue;
    const apply = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined;
    if (!apply) throw unsupported(field);
    apply(value, request);
  }
  return request;
}

/**
 * A v2 embed answer (`{id, embeddings: {float: [[…]]}, texts, meta: {billed_units: {input_tokens}}}`)
 * in OpenAI's embeddings shape, each vector encoded as the request's `encoding_format` asks.
 */
export function toOpenAIEmbeddings(answer: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const vectors = fieldOf(answer.embeddings, 'float');
  if (!Array.isArray(vectors) || !vectors.every((vector) => Array.isArray(vector) && vector.every((value: unknown) => typeof value === 'number'))) {
    throw GatewayError.upstreamMalformed('Provider cohere answered without float embeddings (embeddings.float)');
  }
  const tokens = fieldOf(fieldOf(answer.meta, 'billed_units'), 'input_tokens');
  return openAIEmbeddingList(vectors, String(body.model), body.encoding_format, typeof tokens === 'number' ? tokens : null);
}
