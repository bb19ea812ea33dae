import { OpenAICompatibleAdapter } from './openai-compatible.adapter';

/** Vendors served by the OpenAI-compatible base: id and public base URL. */
export const openAICompatibleVendors = [
  new OpenAICompatibleAdapter({ id: 'groq', baseUrl: 'https://api.groq.com/openai/v1' }),
  new OpenAICompatibleAdapter({ id: 'mistral-ai', baseUrl: 'https://api.mistral.ai/v1' }),
  new OpenAICompatibleAdapter({ id: 'together-ai', baseUrl: 'https://api.together.xyz/v1' }),
  new OpenAICompatibleAdapter({ id: 'deepseek', baseUrl: 'https://api.deepseek.com/v1' }),
  new OpenAICompatibleAdapter({ id: 'fireworks-ai', baseUrl: 'https://api.fireworks.ai/inference/v1' }),
  new OpenAICompatibleAdapter({ id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' }),
  new OpenAICompatibleAdapter({ id: 'x-ai', baseUrl: 'https://api.x.ai/v1' }),
  new OpenAICompatibleAdapter({ id: 'perplexity-ai', baseUrl: 'https://api.perplexity.ai' }),
  new OpenAICompatibleAdapter({ id: 'ollama', baseUrl: 'http://localhost:11434/v1', credentialOptional: true }),
  // vLLM, LM Studio, a private deployment: any OpenAI-compatible server at custom_host.
  new OpenAICompatibleAdapter({ id: 'openai-compatible', baseUrl: null, credentialOptional: true }),
];
