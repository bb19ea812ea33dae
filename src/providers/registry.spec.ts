import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openAICompatibleVendors } from './openai-compatible/vendors';
import { operationsOf } from './provider-operations';
import { ProviderRegistry } from './registry';

/** Vendors whose default base URL is a local server, on purpose (the operator runs it next to the gateway). */
const LOCAL_SERVERS = ['ollama', 'lm-studio'];

describe('ProviderRegistry', () => {
  const registry = new ProviderRegistry();

  it('routes to at least 30 providers, the 14 of before and the long tail among them', () => {
    expect(registry.ids().length).toBeGreaterThanOrEqual(30);
    for (const id of [
      'openai',
      'azure-openai',
      'anthropic',
      'google',
      'groq',
      'ollama',
      'openai-compatible',
      'cerebras',
      'sambanova',
      'nebius',
      'novita',
      'deepinfra',
      'hyperbolic',
      'huggingface',
      'nvidia-nim',
      'github-models',
      'moonshot',
      'dashscope',
      'zhipu',
      'siliconflow',
      'lm-studio',
      'vllm',
      'azure-ai-foundry',
    ]) {
      expect(registry.has(id)).toBe(true);
    }
  });

  it('has no duplicate ids, and each is a stable lowercase id with dashes', () => {
    const ids = [...openAICompatibleVendors.map((adapter) => adapter.id), ...registry.ids()];
    // The registry's Map would silently keep the last of two equal ids: count the vendor list itself too.
    expect(new Set(openAICompatibleVendors.map((adapter) => adapter.id)).size).toBe(openAICompatibleVendors.length);
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it('gives every vendor with a default host an https base URL, except the local servers', () => {
    for (const adapter of openAICompatibleVendors) {
      const request = adapter.requiresCustomHost ? null : adapter.chatCompletions.buildRequest({}, { provider: adapter.id, providerOptions: {} } as never);
      if (!request) continue;
      const url = new URL(request.url);
      if (LOCAL_SERVERS.includes(adapter.id)) {
        expect(url.hostname).toBe('localhost');
        expect(adapter.credentialOptional).toBe(true);
      } else {
        expect(url.protocol).toBe('https:');
      }
    }
    expect(new URL(registry.get('lm-studio').chatCompletions!.buildRequest({}, { providerOptions: {} } as never).url).port).toBe('1234');
  });
});

describe("the README's provider table", () => {
  it('lists every provider the registry routes to, with the operations GET /v1/providers gives', () => {
    const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `([a-z0-9-]+)` \| ([a-z_., ]+) \|$/gm)].map(([, id, operations]) => [id, operations]);
    const registry = new ProviderRegistry();
    expect(rows).toEqual(
      registry
        .ids()
        .sort()
        .map((id) => [id, operationsOf(registry.get(id)).join(', ')]),
    );
  });
});
