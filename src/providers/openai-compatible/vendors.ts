import { OpenAICompatibleAdapter } from './openai-compatible.adapter';

/**
 * Vendors served by the OpenAI-compatible base: id, public base URL, and what their
 * public API reference documents besides chat completions in OpenAI's format
 * (`responses`: OpenAI's Responses API, which Groq and xAI serve too; `models`: the
 * OpenAI-style `GET /models` list, which each of those documents). Left
 * out on purpose: Perplexity's embeddings (under `/v1` while its chat is at the root,
 * and vectors as `base64_int8`, not OpenAI's float/base64), and Fireworks' and
 * OpenRouter's images (workflow endpoints; chat completions), not `/images/generations`.
 */
export const openAICompatibleVendors = [
  new OpenAICompatibleAdapter({ id: 'groq', baseUrl: 'https://api.groq.com/openai/v1', offers: ['responses', 'models', 'audioSpeech', 'audioTranscriptions', 'audioTranslations'] }),
  new OpenAICompatibleAdapter({ id: 'mistral-ai', baseUrl: 'https://api.mistral.ai/v1', offers: ['embeddings', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'together-ai', baseUrl: 'https://api.together.xyz/v1', offers: ['embeddings', 'imageGenerations', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', offers: ['models'] }),
  new OpenAICompatibleAdapter({ id: 'fireworks-ai', baseUrl: 'https://api.fireworks.ai/inference/v1', offers: ['embeddings'] }),
  new OpenAICompatibleAdapter({ id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', offers: ['embeddings', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'x-ai', baseUrl: 'https://api.x.ai/v1', offers: ['embeddings', 'imageGenerations', 'responses', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'perplexity-ai', baseUrl: 'https://api.perplexity.ai' }),
  // Ollama's image generation is marked experimental in its OpenAI-compatibility docs.
  new OpenAICompatibleAdapter({ id: 'ollama', baseUrl: 'http://localhost:11434/v1', credentialOptional: true, offers: ['embeddings', 'imageGenerations', 'models'] }),
  // vLLM, LM Studio, a private deployment: any OpenAI-compatible server at custom_host;
  // the server answers for what it lacks.
  new OpenAICompatibleAdapter({ id: 'openai-compatible', baseUrl: null, credentialOptional: true, offers: ['embeddings', 'imageGenerations', 'audioSpeech', 'audioTranscriptions', 'audioTranslations', 'rerank', 'responses', 'realtime', 'fineTuning', 'models', 'files', 'vectorStores'] }),
];
