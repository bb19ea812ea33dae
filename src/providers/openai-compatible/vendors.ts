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
  new OpenAICompatibleAdapter({
    id: 'groq',
    baseUrl: 'https://api.groq.com/openai/v1',
    offers: ['responses', 'models', 'audioSpeech', 'audioTranscriptions', 'audioTranslations'],
  }),
  new OpenAICompatibleAdapter({ id: 'mistral-ai', baseUrl: 'https://api.mistral.ai/v1', offers: ['embeddings', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'together-ai', baseUrl: 'https://api.together.xyz/v1', offers: ['embeddings', 'imageGenerations', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'deepseek', baseUrl: 'https://api.deepseek.com/v1', offers: ['models'] }),
  new OpenAICompatibleAdapter({ id: 'fireworks-ai', baseUrl: 'https://api.fireworks.ai/inference/v1', offers: ['embeddings'] }),
  new OpenAICompatibleAdapter({ id: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', offers: ['embeddings', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'x-ai', baseUrl: 'https://api.x.ai/v1', offers: ['embeddings', 'imageGenerations', 'responses', 'models'] }),
  new OpenAICompatibleAdapter({ id: 'perplexity-ai', baseUrl: 'https://api.perplexity.ai' }),
  // Ollama's image generation is marked experimental in its OpenAI-compatibility docs.
  new OpenAICompatibleAdapter({
    id: 'ollama',
    baseUrl: 'http://localhost:11434/v1',
    credentialOptional: true,
    offers: ['embeddings', 'imageGenerations', 'models'],
  }),
  // The long tail (issue 21). Where a vendor has regional hosts, the international one is
  // the default and the other is reached through custom_host.
  // inference-docs.cerebras.ai: chat and GET /models.
  new OpenAICompatibleAdapter({ id: 'cerebras', baseUrl: 'https://api.cerebras.ai/v1', offers: ['models'] }),
  // docs.sambanova.ai API reference: /embeddings, Whisper-style /audio/transcriptions and /audio/translations, /models.
  new OpenAICompatibleAdapter({
    id: 'sambanova',
    baseUrl: 'https://api.sambanova.ai/v1',
    offers: ['embeddings', 'audioTranscriptions', 'audioTranslations', 'models'],
  }),
  // Nebius Token Factory (formerly AI Studio, api.studio.nebius.com), docs.tokenfactory.nebius.com/api-reference.
  new OpenAICompatibleAdapter({ id: 'nebius', baseUrl: 'https://api.tokenfactory.nebius.com/v1', offers: ['embeddings', 'imageGenerations', 'models'] }),
  // novita.ai docs: OpenAI-compatible chat, embeddings and models under /openai/v1 (the older /v3/openai still answers).
  new OpenAICompatibleAdapter({ id: 'novita', baseUrl: 'https://api.novita.ai/openai/v1', offers: ['embeddings', 'models'] }),
  // deepinfra.com/docs/openai_api: chat and embeddings in OpenAI's format; its image, speech and
  // rerank models answer on its own /v1/inference/{model}, not in OpenAI's shape.
  new OpenAICompatibleAdapter({ id: 'deepinfra', baseUrl: 'https://api.deepinfra.com/v1/openai', offers: ['embeddings', 'models'] }),
  // Hyperbolic: chat and /models; its images are /v1/image/generation in a shape of its own.
  new OpenAICompatibleAdapter({ id: 'hyperbolic', baseUrl: 'https://api.hyperbolic.xyz/v1', offers: ['models'] }),
  // Hugging Face Inference Providers' router: chat, the Responses API (beta) and /models; its
  // other tasks (feature extraction, text to image) are per-provider routes, not OpenAI's.
  new OpenAICompatibleAdapter({ id: 'huggingface', baseUrl: 'https://router.huggingface.co/v1', offers: ['responses', 'models'] }),
  // NVIDIA's hosted NIM API catalog (build.nvidia.com); a self-hosted NIM is the same API at custom_host.
  new OpenAICompatibleAdapter({ id: 'nvidia-nim', baseUrl: 'https://integrate.api.nvidia.com/v1', offers: ['embeddings', 'models'] }),
  // GitHub Models REST API (a GitHub token with models:read): /inference/chat/completions and
  // /inference/embeddings; its catalog (/catalog/models) is not OpenAI's model list.
  new OpenAICompatibleAdapter({ id: 'github-models', baseUrl: 'https://models.github.ai/inference', offers: ['embeddings'] }),
  // Kimi API (platform.moonshot.ai; China: api.moonshot.cn/v1): chat, Responses, models, files.
  new OpenAICompatibleAdapter({ id: 'moonshot', baseUrl: 'https://api.moonshot.ai/v1', offers: ['responses', 'models', 'files'] }),
  // Alibaba Cloud Model Studio (Qwen) compatible mode, Singapore; Beijing: dashscope.aliyuncs.com/compatible-mode/v1.
  new OpenAICompatibleAdapter({ id: 'dashscope', baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1', offers: ['embeddings', 'files'] }),
  // Zhipu BigModel (open.bigmodel.cn) and its international platform Z.ai: the same v4 API
  // (chat, /embeddings, CogView's /images/generations answered as `data: [{url}]`).
  new OpenAICompatibleAdapter({ id: 'zhipu', baseUrl: 'https://open.bigmodel.cn/api/paas/v4', offers: ['embeddings', 'imageGenerations'] }),
  new OpenAICompatibleAdapter({ id: 'z-ai', baseUrl: 'https://api.z.ai/api/paas/v4', offers: ['embeddings', 'imageGenerations'] }),
  // docs.siliconflow.com (China: api.siliconflow.cn/v1). Its /images/generations answers
  // `images: [{url}]` rather than OpenAI's `data`, so images are left out.
  new OpenAICompatibleAdapter({
    id: 'siliconflow',
    baseUrl: 'https://api.siliconflow.com/v1',
    offers: ['embeddings', 'audioSpeech', 'audioTranscriptions', 'models'],
  }),
  // LM Studio's local server (lmstudio.ai/docs/api/openai-api): port 1234 unless changed; a host
  // the operator chose, like ollama's, so private addresses are allowed.
  new OpenAICompatibleAdapter({
    id: 'lm-studio',
    baseUrl: 'http://localhost:1234/v1',
    credentialOptional: true,
    offers: ['embeddings', 'responses', 'models'],
  }),
  // vLLM's OpenAI-compatible server (docs.vllm.ai, "Online Serving"): no default host, the
  // deployment's URL is custom_host; a key only when started with --api-key.
  new OpenAICompatibleAdapter({
    id: 'vllm',
    baseUrl: null,
    credentialOptional: true,
    offers: ['embeddings', 'audioTranscriptions', 'audioTranslations', 'responses', 'models'],
  }),
  // Azure AI Foundry Models' inference endpoint, custom_host = `https://{resource}.services.ai.azure.com/models`
  // (Azure AI Model Inference API: chat and text embeddings, `api-version` required, the key in
  // `api-key`; Entra tokens are not supported here). Azure OpenAI deployments stay `azure-openai`.
  new OpenAICompatibleAdapter({
    id: 'azure-ai-foundry',
    baseUrl: null,
    apiKeyHeader: 'api-key',
    fixedQuery: 'api-version=2024-05-01-preview',
    offers: ['embeddings'],
  }),
  // vLLM, LM Studio, a private deployment: any OpenAI-compatible server at custom_host;
  // the server answers for what it lacks.
  new OpenAICompatibleAdapter({
    id: 'openai-compatible',
    baseUrl: null,
    credentialOptional: true,
    offers: [
      'embeddings',
      'imageGenerations',
      'audioSpeech',
      'audioTranscriptions',
      'audioTranslations',
      'rerank',
      'responses',
      'realtime',
      'fineTuning',
      'models',
      'files',
      'vectorStores',
    ],
  }),
];
