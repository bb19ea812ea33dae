import type { ProviderAdapter, ProviderOperation } from './provider-adapter';

/**
 * The public name of each capability, as `GET /v1/providers` lists it: the log's `operation`
 * for operations sent with one request (`chat.completions`, `images.generations` …), and for
 * the REST resources the prefix their log operations share (`models` for `models.list` and
 * `models.retrieve`, `fine_tuning.jobs`, `files`, `vector_stores`). Two capabilities that serve
 * the same route share a name: `anthropicModels` is `/v1/models` in Anthropic's shape, and
 * `chatInputTokens` is how Gemini answers `messages.count_tokens`.
 */
const OPERATION_NAMES: Record<ProviderOperation, string> = {
  chatCompletions: 'chat.completions',
  responses: 'responses',
  messages: 'messages',
  messagesCountTokens: 'messages.count_tokens',
  chatInputTokens: 'messages.count_tokens',
  embeddings: 'embeddings',
  rerank: 'rerank',
  imageGenerations: 'images.generations',
  audioSpeech: 'audio.speech',
  audioTranscriptions: 'audio.transcriptions',
  audioTranslations: 'audio.translations',
  realtime: 'realtime',
  responsesSocket: 'responses',
  generateContent: 'gemini.generate_content',
  geminiCountTokens: 'gemini.count_tokens',
  geminiEmbed: 'gemini.embed_content',
  geminiModels: 'gemini.models',
  models: 'models',
  anthropicModels: 'models',
  fineTuning: 'fine_tuning.jobs',
  files: 'files',
  vectorStores: 'vector_stores',
};

/**
 * The operations a provider serves itself, from the capabilities present on its adapter, in
 * the order of OPERATION_NAMES (chat first). A capability this table does not name yet (one a
 * new adapter brings, such as `rerank`) is listed under its key in snake case, so a provider
 * never hides what it offers. `/v1/responses` and `/v1/messages` also reach every provider
 * with `chat.completions` through the chat bridge; they are not listed as its own.
 */
export function operationsOf(adapter: ProviderAdapter): string[] {
  const fields = adapter as unknown as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(OPERATION_NAMES), ...Object.keys(adapter)])].filter((key) => isCapability(fields[key]));
  return [...new Set(keys.map((key) => OPERATION_NAMES[key as ProviderOperation] ?? key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)))];
}

/**
 * A capability is an object with one of the capability methods (`buildRequest`, `request`,
 * `connection`); an adapter's other fields (its id, flags, a class's private options) are not.
 */
function isCapability(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const methods = value as Record<string, unknown>;
  return ['buildRequest', 'request', 'connection'].some((name) => typeof methods[name] === 'function');
}
