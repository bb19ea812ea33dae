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
  zhipu: 'zhipuai',
  'z-ai': 'zai',
  // Azure AI Foundry serves Azure's catalog of models.
  'azure-ai-foundry': 'azure',
  // Not in the catalog (their prices differ from the same models elsewhere): priced by override.
  sambanova: null,
  nebius: null,
  deepinfra: null,
  hyperbolic: null,
  huggingface: null,
  'nvidia-nim': null,
  'github-models': null,
  dashscope: null,
  siliconflow: null,
  // Self-hosted servers: no list price.
  ollama: null,
  'lm-studio': null,
  vllm: null,
  'openai-compatible': null,
};
