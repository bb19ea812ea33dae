import { calcPrice } from '@pydantic/genai-prices';
import { ProviderRegistry } from '../../providers/registry';
import { emptyUsage, type NormalizedUsage } from '../../providers/usage';
import { CATALOG_PROVIDER_IDS } from './catalog-providers';
import { CATALOG_PACKAGE, catalogModels } from './price-catalog';
import { PricingService } from './pricing.service';

const usage = (u: Partial<NormalizedUsage>): NormalizedUsage => ({ ...emptyUsage(), ...u });
/** The catalog's own total for the same usage, in its usage keys: the reference our formula must meet. */
const catalogTotal = (provider: string, model: string, u: Record<string, number>) =>
  calcPrice(u, model, { providerId: CATALOG_PROVIDER_IDS[provider]! })!.total_price;

describe('PricingService', () => {
  const pricing = new PricingService();

  describe('catalog look-up', () => {
    it.each([
      ['openai', 'gpt-4o', 'gpt-4o'],
      ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'], // a dated snapshot
      ['openai', 'o4-mini', 'o4-mini'],
      ['anthropic', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
      ['anthropic', 'claude-3-5-haiku-20241022', 'claude-3-5-haiku-latest'],
      ['google', 'gemini-2.5-flash', 'gemini-2.5-flash'],
      ['groq', 'llama-3.3-70b-versatile', 'llama-3.3-70b-versatile'],
      ['mistral-ai', 'mistral-large-latest', 'mistral-large'],
      ['deepseek', 'deepseek-chat', 'deepseek-chat'],
      ['x-ai', 'grok-4', 'grok-4-0709'],
      ['bedrock', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'regional.anthropic.claude-sonnet-4-20250514-v1:0'],
      ['vertex-ai', 'claude-sonnet-4@20250514', 'claude-4-sonnet'],
      ['azure-openai', 'gpt-4o', 'gpt-4o'],
      ['openrouter', 'openai/gpt-4o', 'openai/gpt-4o'],
    ])('%s %s → the catalog’s %s', (provider, model, catalogModel) => {
      expect(pricing.pricedBy(provider, model)).toMatchObject({ source: 'catalog', catalogModel });
    });

    it('prices gpt-4o as the catalog lists it', () => {
      expect(pricing.priceFor('openai', 'gpt-4o')).toMatchObject({ input: 2.5, output: 10, cachedInput: 1.25 });
    });

    it('answers null for an unknown model, a self-hosted provider and an unknown provider, never a 0', () => {
      expect(pricing.priceFor('openai', 'no-such-model-xyz')).toBeNull();
      expect(pricing.cost('openai', 'no-such-model-xyz', usage({ promptTokens: 10 }))).toBeNull();
      expect(pricing.priceFor('ollama', 'llama3')).toBeNull();
      expect(pricing.priceFor('no-such-provider', 'gpt-4o')).toBeNull();
    });

    it('maps every provider of the table to a catalog provider that exists', () => {
      for (const [provider, catalogId] of Object.entries(CATALOG_PROVIDER_IDS)) {
        if (catalogId) expect({ provider, models: catalogModels(provider).length > 0 }).toEqual({ provider, models: true });
      }
    });

    it('has a line for every provider the gateway routes to (a catalog id, or null for self-hosted and uncatalogued ones)', () => {
      const missing = new ProviderRegistry().ids().filter((id) => !Object.hasOwn(CATALOG_PROVIDER_IDS, id));
      expect(missing).toEqual([]);
    });

    it('names the catalog package and its version', () => {
      expect(CATALOG_PACKAGE).toEqual({ name: '@pydantic/genai-prices', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    });
  });

  describe('local table (what the catalog lacks)', () => {
    it('prices tts-1 per character and DALL·E per image', () => {
      expect(pricing.pricedBy('openai', 'tts-1')?.source).toBe('local');
      expect(pricing.cost('openai', 'tts-1', usage({ promptTokens: 1000, characters: 1000 }))).toBeCloseTo(0.015, 12);
      expect(pricing.imageCost('openai', 'dall-e-3', { count: 2, quality: 'hd', size: '1024x1792' })).toBeCloseTo(0.24, 12);
      expect(pricing.trainingCost('openai', 'gpt-4o-mini-2024-07-18', 1_000_000)).toBeCloseTo(3, 12);
    });

    it('prices the hosted vendors the catalog lacks from their price lists, case as the vendor writes it or not', () => {
      for (const provider of ['sambanova', 'nebius', 'deepinfra', 'hyperbolic', 'dashscope', 'siliconflow']) {
        expect(pricing.localEntries(provider).length).toBeGreaterThan(0);
      }
      expect(pricing.pricedBy('sambanova', 'meta-llama-3.3-70b-instruct')?.source).toBe('local');
      expect(pricing.cost('sambanova', 'Meta-Llama-3.3-70B-Instruct', usage({ promptTokens: 1000, completionTokens: 500 }))).toBeCloseTo(
        (1000 * 0.6 + 500 * 1.2) / 1e6,
        12,
      );
      expect(pricing.cost('nebius', 'BAAI/bge-en-icl', usage({ promptTokens: 2000 }))).toBeCloseTo((2000 * 0.01) / 1e6, 12);
      // No per-token list price: unknown, never 0.
      expect(pricing.cost('github-models', 'openai/gpt-4.1', usage({ promptTokens: 1000, completionTokens: 10 }))).toBeNull();
    });

    it("prices Hugging Face's router by the provider the model's suffix picks, and leaves the router's own choice unpriced", () => {
      const direct = pricing.cost('sambanova', 'Meta-Llama-3.3-70B-Instruct', usage({ promptTokens: 1000, completionTokens: 500 }));
      expect(direct).not.toBeNull();
      expect(pricing.cost('huggingface', 'Meta-Llama-3.3-70B-Instruct:sambanova', usage({ promptTokens: 1000, completionTokens: 500 }))).toBe(direct);
      expect(pricing.pricedBy('huggingface', 'meta-llama/Llama-3.3-70B-Instruct:nebius')?.source).toBe('local');
      expect(pricing.pricedBy('huggingface', 'meta-llama/Llama-3.3-70B-Instruct')).toBeNull();
      expect(pricing.pricedBy('huggingface', 'meta-llama/Llama-3.3-70B-Instruct:nowhere')).toBeNull();
      expect(pricing.pricedBy('nebius', 'meta-llama/Llama-3.3-70B-Instruct:sambanova')).toBeNull();
    });
  });

  describe('cost matches the catalog’s own calculation', () => {
    it('OpenAI: cached input', () => {
      const ours = pricing.cost('openai', 'gpt-4o', usage({ promptTokens: 1000, cachedTokens: 400, completionTokens: 50 }));
      expect(ours).toBeCloseTo(catalogTotal('openai', 'gpt-4o', { input_tokens: 1000, cache_read_tokens: 400, output_tokens: 50 }), 12);
    });

    it('Anthropic: cache writes and reads apart', () => {
      const ours = pricing.cost(
        'anthropic',
        'claude-3-5-haiku-20241022',
        usage({ promptTokens: 1500, cachedTokens: 200, cacheWriteTokens: 300, completionTokens: 40 }),
      );
      expect(ours).toBeCloseTo(
        catalogTotal('anthropic', 'claude-3-5-haiku-20241022', { input_tokens: 1500, cache_read_tokens: 200, cache_write_tokens: 300, output_tokens: 40 }),
        12,
      );
    });

    it('Gemini: the long-context tier past 200k prompt tokens', () => {
      const ours = pricing.cost('google', 'gemini-2.5-pro', usage({ promptTokens: 250_000, completionTokens: 1000 }));
      expect(ours).toBeCloseTo(catalogTotal('google', 'gemini-2.5-pro', { input_tokens: 250_000, output_tokens: 1000 }), 12);
      expect(ours).toBeGreaterThan(pricing.cost('google', 'gemini-2.5-pro', usage({ promptTokens: 200_000, completionTokens: 1000 }))! * 1.2);
    });

    it('realtime: audio tokens at their own rates', () => {
      const ours = pricing.cost(
        'openai',
        'gpt-realtime',
        usage({ promptTokens: 300, audioPromptTokens: 200, cachedTokens: 50, cachedAudioTokens: 50, completionTokens: 120, audioCompletionTokens: 100 }),
      );
      const theirs = catalogTotal('openai', 'gpt-realtime', {
        input_tokens: 300,
        input_audio_tokens: 200,
        cache_read_tokens: 50,
        cache_audio_read_tokens: 50,
        output_tokens: 120,
        output_audio_tokens: 100,
      });
      expect(ours).toBeCloseTo(theirs, 12);
    });

    it('whisper: by the second', () => {
      expect(pricing.cost('openai', 'whisper-1', usage({ promptTokens: 90, audioSeconds: 90 }))).toBeCloseTo(
        catalogTotal('openai', 'whisper-1', { audio_seconds: 90, input_audio_seconds: 90 }),
        12,
      );
    });

    it('reasoning tokens are not added on top of completion tokens', () => {
      const plain = pricing.cost('openai', 'o3', usage({ promptTokens: 10, completionTokens: 100 }));
      expect(pricing.cost('openai', 'o3', usage({ promptTokens: 10, completionTokens: 100, reasoningTokens: 80 }))).toBe(plain);
    });
  });

  describe('overrides', () => {
    it('win over the catalog and go away when removed', () => {
      const local = new PricingService();
      const catalogCost = local.cost('openai', 'gpt-4o', usage({ promptTokens: 1000, completionTokens: 100 }));
      local.setOverrides([{ provider: 'openai', model: 'gpt-4o', fields: { input: 1, output: 2, reasoning: 4 } }]);
      expect(local.pricedBy('openai', 'gpt-4o')?.source).toBe('override');
      expect(local.cost('openai', 'gpt-4o', usage({ promptTokens: 1000, completionTokens: 100, reasoningTokens: 30 }))).toBeCloseTo(
        (1000 * 1 + 70 * 2 + 30 * 4) / 1e6,
        12,
      );
      local.setOverrides([]);
      expect(local.cost('openai', 'gpt-4o', usage({ promptTokens: 1000, completionTokens: 100 }))).toBe(catalogCost);
    });

    it('price search units per search, and leave them unpriced without a per-search price', () => {
      const local = new PricingService();
      expect(local.cost('cohere', 'rerank-v3.5', usage({ searchUnits: 3 }))).toBeCloseTo(0.006, 12);
      expect(local.cost('cohere', 'rerank-v9-unknown', usage({ searchUnits: 3 }))).toBeNull();
      local.setOverrides([{ provider: 'cohere', model: 'rerank-v3.5', fields: { input: 0, output: 0, per_search: 0.01 } }]);
      expect(local.cost('cohere', 'rerank-v3.5', usage({ searchUnits: 3 }))).toBeCloseTo(0.03, 12);
    });

    it('price a self-hosted model, and images per image', () => {
      const local = new PricingService();
      local.setOverrides([{ provider: 'ollama', model: 'llama3', fields: { input: 0.1, output: 0.2, per_image: 0.5 } }]);
      expect(local.cost('ollama', 'llama3', usage({ promptTokens: 100, completionTokens: 10 }))).toBeCloseTo((100 * 0.1 + 10 * 0.2) / 1e6, 12);
      expect(local.imageCost('ollama', 'llama3', { count: 3 })).toBeCloseTo(1.5, 12);
    });
  });
});
