import { Test } from '@nestjs/testing';
import { emptyUsage, NormalizedUsage } from '../../providers/usage';
import { PricingModule } from './pricing.module';
import { PRICE_TABLE, PriceTable, PricingService } from './pricing.service';
import prices from './prices.json';

const usage = (u: Partial<NormalizedUsage>): NormalizedUsage => ({ ...emptyUsage(), ...u });

describe('PricingService', () => {
  const service = new PricingService();

  describe('priceFor', () => {
    it('matches a model exactly', () => {
      expect(service.priceFor('openai', 'gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6, cachedInput: 0.075, cacheWrite: null, audioInput: null, cachedAudioInput: null, audioOutput: null });
      expect(service.priceFor('groq', 'openai/gpt-oss-120b')?.input).toBe(0.15);
    });

    it('is case-insensitive', () => {
      expect(service.priceFor('OpenAI', 'GPT-4o-Mini')).toBe(service.priceFor('openai', 'gpt-4o-mini'));
    });

    it.each([
      ['openai', 'gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
      ['openai', 'gpt-4o-2024-08-06', 'gpt-4o'],
      ['openai', 'gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
      ['anthropic', 'claude-3-5-haiku-20241022', 'claude-3-5-haiku'],
      ['anthropic', 'claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
      ['anthropic', 'claude-3-7-sonnet-latest', 'claude-3-7-sonnet'],
      ['mistral-ai', 'mistral-large-2411', 'mistral-large-latest'],
      ['mistral-ai', 'mistral-small', 'mistral-small-latest'],
    ])('strips the snapshot suffix: %s %s', (provider, model, key) => {
      expect(service.priceFor(provider, model)).toBe(service.priceFor(provider, key));
      expect(service.priceFor(provider, model)).not.toBeNull();
    });

    it('keeps an explicitly listed snapshot over the stripped name', () => {
      // gpt-4o-2024-05-13 is the older, dearer gpt-4o snapshot.
      expect(service.priceFor('openai', 'gpt-4o-2024-05-13')?.input).toBe(5);
      expect(service.priceFor('openai', 'gpt-4o')?.input).toBe(2.5);
    });

    it('falls back to the longest key that prefixes the model at a dash', () => {
      expect(service.priceFor('openai', 'gpt-4o-mini-search-preview')).toBe(service.priceFor('openai', 'gpt-4o-mini'));
      expect(service.priceFor('openai', 'o1-preview-2024-09-12')).toBe(service.priceFor('openai', 'o1'));
      expect(service.priceFor('google', 'gemini-2.5-flash-lite-preview-09-2025')).toBe(service.priceFor('google', 'gemini-2.5-flash-lite'));
      expect(service.priceFor('anthropic', 'claude-opus-4-0')).toBe(service.priceFor('anthropic', 'claude-opus-4'));
    });

    it('does not treat a version dot as a dash (gpt-4.1-x is not gpt-4)', () => {
      expect(service.priceFor('openai', 'gpt-4.1-mini-2025-04-14')).toBe(service.priceFor('openai', 'gpt-4.1-mini'));
      expect(service.priceFor('openai', 'gpt-4.5-preview')).toBeNull();
    });

    it('prices azure-openai as openai', () => {
      expect(service.priceFor('azure-openai', 'gpt-4o')).toBe(service.priceFor('openai', 'gpt-4o'));
    });

    it('looks up OpenRouter vendor/model ids under the vendor, dotted versions included', () => {
      expect(service.priceFor('openrouter', 'openai/gpt-4o')).toBe(service.priceFor('openai', 'gpt-4o'));
      expect(service.priceFor('openrouter', 'anthropic/claude-sonnet-4.5')).toBe(service.priceFor('anthropic', 'claude-sonnet-4-5'));
      expect(service.priceFor('openrouter', 'mistralai/mistral-medium-latest')).toBe(service.priceFor('mistral-ai', 'mistral-medium-latest'));
      expect(service.priceFor('openrouter', 'gpt-4o')).toBeNull();
      expect(service.priceFor('openrouter', 'meta-llama/llama-3.3-70b-instruct')).toBeNull();
    });

    it('only strips vendor prefixes on OpenRouter', () => {
      expect(service.priceFor('together-ai', 'openai/gpt-4o')).toBeNull();
    });

    it.each([
      ['ollama', 'llama3.1:8b'],
      ['openai', 'my-finetune'],
      ['openai', 'gpt-6'],
      ['together-ai', 'meta-llama/Llama-3.3-70B-Instruct-Turbo'],
      ['no-such-provider', 'gpt-4o'],
    ])('has no price for unknown %s %s', (provider, model) => {
      expect(service.priceFor(provider, model)).toBeNull();
      expect(service.cost(provider, model, usage({ promptTokens: 10, completionTokens: 10 }))).toBeNull();
    });
  });

  describe('cost', () => {
    it('bills cached tokens at the cached rate', () => {
      const cost = service.cost('openai', 'gpt-4o-mini', usage({ promptTokens: 1000, cachedTokens: 400, completionTokens: 200 }));
      expect(cost).toBe(0.00024); // 600*0.15e-6 + 400*0.075e-6 + 200*0.6e-6, exact after rounding
    });

    it('bills cached tokens at the input rate when the model has no cached price', () => {
      const cost = service.cost('openai', 'gpt-4-turbo', usage({ promptTokens: 1000, cachedTokens: 400 }));
      expect(cost).toBe(0.01);
    });

    it('bills Anthropic cache writes and reads apart', () => {
      // 1000 uncached at $3, 2000 read at $0.30, 4000 written at $3.75, 100 out at $15.
      const cost = service.cost(
        'anthropic',
        'claude-sonnet-4-5-20250929',
        usage({ promptTokens: 7000, cachedTokens: 2000, cacheWriteTokens: 4000, completionTokens: 100 }),
      );
      expect(cost).toBe(0.0201); // 0.003 + 0.0006 + 0.015 + 0.0015
    });

    it('does not add reasoning tokens on top of completion tokens', () => {
      const withReasoning = service.cost('openai', 'o3', usage({ promptTokens: 100, completionTokens: 1000, reasoningTokens: 800 }));
      expect(withReasoning).toBe(0.0082); // 100*2e-6 + 1000*8e-6
    });

    it('never bills negative uncached input', () => {
      const cost = service.cost('openai', 'gpt-4o-mini', usage({ promptTokens: 100, cachedTokens: 150 }));
      expect(cost).toBe(0.00001125); // 150 cached at $0.075
    });

    it('returns 0, not null, for a priced model with no usage', () => {
      expect(service.cost('deepseek', 'deepseek-chat', usage({}))).toBe(0);
    });
  });

  describe('table validation', () => {
    const withEntry = (entry: unknown, aliases?: Record<string, string>): PriceTable =>
      ({ providers: { acme: { 'model-a': entry } }, aliases }) as PriceTable;

    it('accepts the shipped table', () => {
      expect(() => new PricingService(prices as PriceTable)).not.toThrow();
    });

    it.each([
      [{ input: -1, output: 1 }, /providers\.acme\["model-a"\]\.input must be a finite non-negative number, got -1/],
      [{ input: 1, output: Infinity }, /\.output must be a finite non-negative number/],
      [{ input: 1, output: 1, cached_input: '0.5' }, /\.cached_input must be a finite non-negative number, got "0\.5"/],
      [{ input: 1 }, /\.output must be a finite non-negative number, got undefined/],
      [{ input: 1, output: 1, cache_input: 0.1 }, /unknown field "cache_input"/],
      [7, /providers\.acme\["model-a"\] must be an object/],
    ])('rejects %p', (entry, message) => {
      expect(() => new PricingService(withEntry(entry))).toThrow(message);
    });

    it('rejects an alias to a missing provider', () => {
      expect(() => new PricingService(withEntry({ input: 1, output: 1 }, { azure: 'nope' }))).toThrow(/alias "azure"/);
    });

    it('uses an injected table', () => {
      const custom = new PricingService(withEntry({ input: 1, output: 2 }, { 'acme-cloud': 'acme' }));
      expect(custom.priceFor('acme-cloud', 'model-a-latest')).toEqual({ input: 1, output: 2, cachedInput: null, cacheWrite: null, audioInput: null, cachedAudioInput: null, audioOutput: null });
      expect(custom.priceFor('openai', 'gpt-4o')).toBeNull();
    });
  });

  it('prices the audio tokens of realtime models at their own rates', () => {
    // gpt-realtime: text in 4 / cached 0.4 / out 16, audio in 32 / cached 0.4 / out 64 per million.
    const usage = { ...emptyUsage(), promptTokens: 300, cachedTokens: 50, audioPromptTokens: 200, cachedAudioTokens: 50, completionTokens: 320, audioCompletionTokens: 300, totalTokens: 620 };
    const expected = (100 * 4 + 150 * 32 + 50 * 0.4 + 20 * 16 + 300 * 64) / 1e6;
    expect(service.cost('openai', 'gpt-realtime', usage)).toBeCloseTo(expected, 12);
    // A model without audio rates prices every token at its text rates, as before.
    expect(service.cost('openai', 'gpt-4o-mini', usage)).toBeCloseTo((250 * 0.15 + 50 * 0.075 + 320 * 0.6) / 1e6, 12);
  });

  describe('Nest DI', () => {
    it('resolves with the shipped table when no PRICE_TABLE is provided', async () => {
      const moduleRef = await Test.createTestingModule({ imports: [PricingModule] }).compile();
      expect(moduleRef.get(PricingService).priceFor('openai', 'gpt-4o')?.output).toBe(10);
    });

    it('takes a PRICE_TABLE provider', async () => {
      const moduleRef = await Test.createTestingModule({
        providers: [PricingService, { provide: PRICE_TABLE, useValue: { providers: { acme: { m: { input: 1, output: 1 } } } } }],
      }).compile();
      expect(moduleRef.get(PricingService).priceFor('openai', 'gpt-4o')).toBeNull();
      expect(moduleRef.get(PricingService).priceFor('acme', 'm')?.input).toBe(1);
    });
  });
});
