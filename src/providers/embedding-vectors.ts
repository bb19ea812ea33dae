import { fieldOf } from './translation-checks';

/**
 * OpenAI's `encoding_format` for a vendor whose embeddings come back as float arrays
 * (Cohere, and any other translated vendor): `base64` is the bytes of the vector as
 * little-endian float32, which the OpenAI SDKs ask for by default and decode with a
 * Float32Array; anything else (`float`, absent) keeps the numbers.
 */
export function encodeEmbedding(vector: readonly number[], encodingFormat: unknown): number[] | string {
  if (encodingFormat !== 'base64') return vector as number[];
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** Float vectors in OpenAI's embeddings list shape, encoded as the request asked. */
export function openAIEmbeddingList(
  vectors: readonly (readonly number[])[],
  model: string,
  encodingFormat: unknown,
  promptTokens: number | null,
): Record<string, unknown> {
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(vector, encodingFormat) })),
    model,
    // No count is not a zero count: without one the log records no usage rather than a free call.
    ...(promptTokens === null ? {} : { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }),
  };
}

/**
 * OpenAI embeddings lists (the translated answers of one request's parts, in order) as one:
 * the vectors renumbered in order, usage summed, or left out when any part has none (an
 * unknown count is not a smaller one).
 */
export function mergeEmbeddingLists(lists: readonly Record<string, unknown>[], model: string): Record<string, unknown> {
  const data = lists.flatMap((list) => list.data as Record<string, unknown>[]).map((item, index) => ({ ...item, index }));
  const counts = lists.map((list) => fieldOf(list.usage, 'prompt_tokens'));
  const promptTokens = counts.every((count) => typeof count === 'number') ? counts.reduce((sum: number, count: number) => sum + count, 0) : null;
  return { object: 'list', data, model, ...(promptTokens === null ? {} : { usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }) };
}
