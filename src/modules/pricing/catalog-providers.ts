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
  // Not in the catalog (their prices differ from the same models elsewhere): local-prices.json.
  sambanova: null,
  nebius: null,
  deepinfra: null,
  hyperbolic: null,
  dashscope: null,
  siliconflow: null,
  // Billed at the routed provider's rate: see ROUTED_PROVIDERS.
  huggingface: null,
  // No per-token list price (free tiers, enterprise contracts): priced by override.
  'nvidia-nim': null,
  'github-models': null,
  // Self-hosted servers: no list price.
  ollama: null,
  'lm-studio': null,
  vllm: null,
  'openai-compatible': null,
};

/**
 * Routers that bill the provider a model name picks, at that provider's rate without markup.
 * Hugging Face's router: `meta-llama/Llama-3.3-70B-Instruct:sambanova` runs at SambaNova and
 * costs what SambaNova lists. Router's provider name → gateway provider id. Without a suffix the
 * router chooses, and the price is unknown (null) unless an override names the model.
 */
const ROUTED_PROVIDERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  huggingface: {
    cerebras: 'cerebras',
    cohere: 'cohere',
    'fireworks-ai': 'fireworks-ai',
    groq: 'groq',
    hyperbolic: 'hyperbolic',
    nebius: 'nebius',
    novita: 'novita',
    sambanova: 'sambanova',
    together: 'together-ai',
  },
};

/** The provider and model a router's model name is billed as, or null when the name picks none. */
export function routedProvider(provider: string, model: string): { provider: string; model: string } | null {
  const suffixes = ROUTED_PROVIDERS[provider.toLowerCase()];
  const colon = model.lastIndexOf(':');
  if (!suffixes || colon <= 0) return null;
  const routed = suffixes[model.slice(colon + 1).toLowerCase()];
  return routed ? { provider: routed, model: model.slice(0, colon) } : null;
}
