import { anthropicAdapter } from './anthropic/anthropic.adapter';
import { AzureOpenAIAdapter } from './azure-openai/azure-openai.adapter';
import { googleAdapter } from './google/google.adapter';
import { openAIAdapter } from './openai/openai.adapter';
import { OpenAICompatibleAdapter } from './openai-compatible/openai-compatible.adapter';
import type { ProviderAdapter } from './provider-adapter';
import { operationsOf } from './provider-operations';

describe('operationsOf', () => {
  it('names each capability as the log names its operation, chat first, resources by their prefix', () => {
    expect(operationsOf(openAIAdapter)).toEqual([
      'chat.completions',
      'responses',
      'embeddings',
      'images.generations',
      'audio.speech',
      'audio.transcriptions',
      'audio.translations',
      'realtime',
      'models',
      'fine_tuning.jobs',
      'files',
      'vector_stores',
    ]);
    expect(operationsOf(new OpenAICompatibleAdapter({ id: 'v', baseUrl: 'https://v/v1' }))).toEqual(['chat.completions']);
  });

  it("lists native operations once, whatever capability serves them (Anthropic's own model list, Gemini's token counter)", () => {
    expect(operationsOf(anthropicAdapter)).toEqual(['chat.completions', 'messages', 'messages.count_tokens', 'models']);
    expect(operationsOf(googleAdapter)).toContain('messages.count_tokens');
    expect(operationsOf(googleAdapter)).not.toContain('messages');
  });

  it('reads class adapters (Azure) and ignores fields that are not capabilities', () => {
    expect(operationsOf(new AzureOpenAIAdapter())).toEqual(expect.arrayContaining(['chat.completions', 'responses', 'realtime', 'vector_stores']));
    expect(operationsOf(new OpenAICompatibleAdapter({ id: 'v', baseUrl: 'https://v/v1', offers: ['embeddings'] }))).not.toContain('options');
  });

  it('lists a capability the table does not know yet under its key in snake case', () => {
    const withRerank = {
      id: 'r',
      credentialOptional: false,
      requiresCustomHost: false,
      rerank: { buildRequest: () => ({}) },
      batchJobs: { request: () => ({}) },
      signer: { region: 'x' },
    };
    expect(operationsOf(withRerank as unknown as ProviderAdapter)).toEqual(['rerank', 'batch_jobs']);
  });
});
