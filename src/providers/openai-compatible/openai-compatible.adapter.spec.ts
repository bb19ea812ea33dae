import type { ProviderTarget } from '../provider-target';
import { AzureOpenAIAdapter } from '../azure-openai/azure-openai.adapter';
import { openAIAdapter } from '../openai/openai.adapter';
import { openAICompatibleVendors } from './vendors';

const target = (fields: Partial<ProviderTarget> = {}) => ({ provider: 'x', apiKey: 'sk-1', providerOptions: {}, ...fields }) as ProviderTarget;
const vendor = (id: string) => openAICompatibleVendors.find((adapter) => adapter.id === id)!;

describe('operation capabilities of the OpenAI-format adapters', () => {
  it('OpenAI: embeddings and image generations next to chat, under the base URL', () => {
    const body = { model: 'text-embedding-3-small', input: 'a' };
    expect(openAIAdapter.embeddings!.buildRequest(body, target())).toMatchObject({
      method: 'POST',
      url: 'https://api.openai.com/v1/embeddings',
      headers: { authorization: 'Bearer sk-1' },
      body: JSON.stringify(body),
    });
    expect(openAIAdapter.imageGenerations!.buildRequest({}, target({ customHost: 'http://h/v1/' })).url).toBe('http://h/v1/images/generations');
  });

  it('Azure OpenAI: the deployment URL per operation', () => {
    const azure = new AzureOpenAIAdapter();
    const options = { resource_name: 'res', api_version: '2024-10-21' };
    expect(azure.embeddings.buildRequest({ model: 'emb' }, target({ providerOptions: options })).url).toBe(
      'https://res.openai.azure.com/openai/deployments/emb/embeddings?api-version=2024-10-21',
    );
    expect(azure.imageGenerations.buildRequest({ model: 'img' }, target({ providerOptions: options })).url).toBe(
      'https://res.openai.azure.com/openai/deployments/img/images/generations?api-version=2024-10-21',
    );
  });

  it('vendors offer only what their public API documents', () => {
    const offers = Object.fromEntries(openAICompatibleVendors.map((a) => [a.id, [!!a.embeddings, !!a.imageGenerations]]));
    expect(offers).toEqual({
      groq: [false, false],
      'mistral-ai': [true, false],
      'together-ai': [true, true],
      deepseek: [false, false],
      'fireworks-ai': [true, false],
      openrouter: [true, false],
      'x-ai': [true, true],
      'perplexity-ai': [false, false],
      ollama: [true, true],
      cerebras: [false, false],
      sambanova: [true, false],
      nebius: [true, true],
      novita: [true, false],
      deepinfra: [true, false],
      hyperbolic: [false, false],
      huggingface: [false, false],
      'nvidia-nim': [true, false],
      'github-models': [true, false],
      moonshot: [false, false],
      dashscope: [true, false],
      zhipu: [true, true],
      'z-ai': [true, true],
      siliconflow: [true, false],
      'lm-studio': [true, false],
      vllm: [true, false],
      'azure-ai-foundry': [true, false],
      'openai-compatible': [true, true],
    });
    expect(vendor('mistral-ai').embeddings!.buildRequest({}, target()).url).toBe('https://api.mistral.ai/v1/embeddings');
  });

  it("Azure AI Foundry: the key in `api-key` and the api-version on every URL, ahead of the client's query", () => {
    const foundry = vendor('azure-ai-foundry');
    const host = 'https://res.services.ai.azure.com/models';
    const chat = foundry.chatCompletions.buildRequest({ model: 'Mistral-large' }, target({ customHost: host }));
    expect(chat.url).toBe(`${host}/chat/completions?api-version=2024-05-01-preview`);
    expect(chat.headers).toEqual({ 'content-type': 'application/json', 'api-key': 'sk-1' });
    expect(foundry.embeddings!.buildRequest({}, target({ customHost: host })).url).toBe(`${host}/embeddings?api-version=2024-05-01-preview`);
    expect(() => foundry.chatCompletions.buildRequest({}, target())).toThrow(/needs a custom host/);
  });

  it("GitHub Models and vLLM: the base path kept, the client's query appended", () => {
    expect(vendor('github-models').chatCompletions.buildRequest({}, target()).url).toBe('https://models.github.ai/inference/chat/completions');
    const vllm = vendor('vllm');
    expect(vllm.credentialOptional && vllm.requiresCustomHost).toBe(true);
    expect(vllm.models!.request('GET', '', 'limit=2', target({ customHost: 'http://gpu:8000/v1', apiKey: undefined })).url).toBe(
      'http://gpu:8000/v1/models?limit=2',
    );
    expect(vllm.models!.request('GET', '', '', target({ customHost: 'http://gpu:8000/v1', apiKey: undefined })).headers).toEqual({
      'content-type': 'application/json',
    });
  });

  it('rerank (Jina and Cohere shape) only for a custom OpenAI-compatible server such as vLLM, body as sent', () => {
    expect(openAICompatibleVendors.filter((adapter) => adapter.rerank).map((adapter) => adapter.id)).toEqual(['openai-compatible']);
    const body = { model: 'bge-reranker-v2-m3', query: 'q', documents: ['a'], top_n: 1 };
    expect(vendor('openai-compatible').rerank!.buildRequest(body, target({ customHost: 'http://vllm.internal:8000/v1/' }))).toMatchObject({
      method: 'POST',
      url: 'http://vllm.internal:8000/v1/rerank',
      headers: { authorization: 'Bearer sk-1' },
      body: JSON.stringify(body),
    });
  });
});
