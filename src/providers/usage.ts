/**
 * Token usage normalised across providers. Every adapter maps its vendor's
 * usage object into this shape; pricing and logging only ever see this.
 *
 * - promptTokens: all input tokens, cached ones included.
 * - cachedTokens: the part of promptTokens read from the provider's prompt cache.
 * - cacheWriteTokens: input tokens written to the cache (Anthropic bills these apart).
 * - completionTokens: all output tokens, reasoning tokens included.
 * - reasoningTokens: the part of completionTokens spent on hidden reasoning.
 */
export interface NormalizedUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Realtime models: the audio part of promptTokens, of cachedTokens, and of completionTokens (priced at audio rates). */
  audioPromptTokens?: number;
  cachedAudioTokens?: number;
  audioCompletionTokens?: number;
  /** Per-unit usage, priced by the model's per-unit prices: seconds of audio transcribed (whisper), characters spoken (tts), web searches run. */
  audioSeconds?: number;
  characters?: number;
  webSearches?: number;
  /** Searches a reranker bills (Cohere's search units: one per query and up to 100 documents), priced per search like web searches. */
  searchUnits?: number;
}

export function emptyUsage(): NormalizedUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 };
}

/** Roughly four characters a token: what a request's prompt is taken to cost before (or without) the provider's count. */
export function estimatePromptTokens(body: Record<string, unknown>): number {
  return Math.ceil(JSON.stringify(body.messages ?? body.input ?? body.prompt ?? '').length / 4);
}

/**
 * Usage for a stream that ended before the provider reported it (the client left, or the
 * stream broke): the prompt estimated from the request, and one token per content chunk
 * delivered (how OpenAI-style streams send text).
 */
export function estimatedStreamUsage(requestBody: unknown, contentChunks: number): NormalizedUsage {
  const promptTokens = requestBody && typeof requestBody === 'object' ? estimatePromptTokens(requestBody as Record<string, unknown>) : 0;
  return { ...emptyUsage(), promptTokens, completionTokens: contentChunks, totalTokens: promptTokens + contentChunks };
}
