import { GatewayError } from '../../common/errors/gateway-error';
import { openAIEmbeddingList } from '../embedding-vectors';
import { fieldOf } from '../translation-checks';

/**
 * OpenAI embeddings bodies for Google's embedding models: Gemini's `batchEmbedContents`
 * (the Gemini API) and Vertex AI's `:predict`. Both answer float vectors, encoded here as
 * the client's `encoding_format` asks (`base64` by default in the OpenAI SDKs).
 *
 * Fields: `model`, `input` (texts; token ids are refused: Google embeds text only),
 * `encoding_format` (applied to the answer), `user` (dropped: Google has no such field),
 * `dimensions` (→ `outputDimensionality`), `task_type` (Google's own, e.g.
 * RETRIEVAL_DOCUMENT, passed as sent); anything else is a 400 naming it.
 */
const PASSED = new Set(['model', 'input', 'encoding_format', 'user', 'dimensions', 'task_type']);

export interface GoogleEmbedInput {
  texts: string[];
  dimensions?: number;
  taskType?: string;
}

export function googleEmbedInput(body: Record<string, unknown>, provider: string): GoogleEmbedInput {
  for (const [field, value] of Object.entries(body)) {
    if (value !== null && value !== undefined && !PASSED.has(field))
      throw GatewayError.invalidRequest(`Provider ${provider} does not support ${field} for embeddings`, field);
  }
  const texts = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((text) => typeof text === 'string')) {
    throw GatewayError.invalidRequest(`Provider ${provider} embeds text only: input must be a string or a non-empty array of strings`, 'input');
  }
  const input: GoogleEmbedInput = { texts };
  if (body.dimensions !== undefined && body.dimensions !== null) {
    if (!Number.isInteger(body.dimensions) || (body.dimensions as number) < 1)
      throw GatewayError.invalidRequest('dimensions must be a positive integer', 'dimensions');
    input.dimensions = body.dimensions as number;
  }
  if (body.task_type !== undefined && body.task_type !== null) {
    if (typeof body.task_type !== 'string') throw GatewayError.invalidRequest('task_type must be a string (e.g. RETRIEVAL_DOCUMENT)', 'task_type');
    input.taskType = body.task_type;
  }
  return input;
}

const isVector = (values: unknown): values is number[] => Array.isArray(values) && values.every((value) => typeof value === 'number');

/** `models/{model}:batchEmbedContents`'s body: one request per text, each naming the model. */
export function toGeminiBatchEmbedRequest(input: GoogleEmbedInput, model: string): Record<string, unknown> {
  return {
    requests: input.texts.map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...(input.dimensions !== undefined && { outputDimensionality: input.dimensions }),
      ...(input.taskType !== undefined && { taskType: input.taskType }),
    })),
  };
}

/**
 * `{embeddings: [{values}]}` in OpenAI's shape. Gemini's answer reports no token count,
 * so usage is estimated (about four characters a token, as elsewhere in the gateway) for
 * the log and the cost: an estimate, not Google's billing.
 */
export function fromGeminiEmbeddings(answer: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const vectors = Array.isArray(answer.embeddings) ? answer.embeddings.map((embedding: unknown) => fieldOf(embedding, 'values')) : null;
  if (!vectors || !vectors.every(isVector)) {
    throw GatewayError.upstreamMalformed('Provider google answered without embeddings[].values');
  }
  const texts = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
  const estimated = texts.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  return openAIEmbeddingList(vectors, String(body.model), body.encoding_format, estimated);
}

/** Vertex AI's `:predict` body for a text embedding model. */
export function toVertexPredictRequest(input: GoogleEmbedInput): Record<string, unknown> {
  const parameters = input.dimensions !== undefined ? { outputDimensionality: input.dimensions } : undefined;
  return {
    instances: input.texts.map((content) => ({ content, ...(input.taskType !== undefined && { task_type: input.taskType }) })),
    ...(parameters && { parameters }),
  };
}

/** `{predictions: [{embeddings: {values, statistics: {token_count}}}]}` in OpenAI's shape, tokens summed over the texts. */
export function fromVertexPredictions(answer: Record<string, unknown>, body: Record<string, unknown>): Record<string, unknown> {
  const embeddings = Array.isArray(answer.predictions) ? answer.predictions.map((prediction: unknown) => fieldOf(prediction, 'embeddings')) : null;
  const vectors = embeddings?.map((embedding) => fieldOf(embedding, 'values'));
  if (!embeddings || !vectors?.every(isVector)) {
    throw GatewayError.upstreamMalformed('Provider vertex-ai answered without predictions[].embeddings.values');
  }
  const counts = embeddings.map((embedding) => fieldOf(fieldOf(embedding, 'statistics'), 'token_count'));
  const tokens = counts.every((count) => typeof count === 'number') ? counts.reduce((sum, count) => sum + count, 0) : null;
  return openAIEmbeddingList(vectors, String(body.model), body.encoding_format, tokens);
}
