/**
 * Gateway provider id → the price catalog's provider id (`@pydantic/genai-prices`).
 * One line per provider: when you add a provider to the registry, add it here too.
 * `null`: no catalog prices (self-hosted servers; set a price through `POST /v1/prices`).
 * The catalog's ids: `node -e "require('@pydantic/genai-prices').waitForUpdate().then(p => console.log(p.map(x => x.id)))"`.
 */
export const CATALOG_PROVIDER_IDS: Readonly<Record<string, string | null>> = {
  openai: 'openai',
  // The catalog's azure answers for Azure's own models and falls back to openai's (and others').
  'azure-openai': 'azure',
  anthropic: 'anthropic',
  google: 'google',
  'vertex-ai': 'google',
  bedrock: 'aws',
  cohere: 'cohere',
  groq: 'groq',
  'mistral-ai': 'mistral',
  'together-ai': 'together',
  deepseek: 'deepseek',
  'fireworks-ai': 'fireworks',
  openrouter: 'openrouter',
  'x-ai': 'x-ai',
  'perplexity-ai': 'perplexity',
  cerebras: 'cerebras',
  novita: 'novita',
  ovhcloud: 'ovhcloud',
  moonshot: 'moonshotai',
  ollama: null,
  'openai-compatible': null,
};
