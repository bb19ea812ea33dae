import { usageFromOpenAI, usageFromOpenAIImages } from './openai-usage';

describe('OpenAI usage mapping', () => {
  it('embeddings: prompt tokens only', () => {
    expect(usageFromOpenAI({ prompt_tokens: 8, total_tokens: 8 })).toEqual({
      promptTokens: 8,
      completionTokens: 0,
      totalTokens: 8,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
  });

  it('images: the input and output tokens of GPT Image models', () => {
    const usage = { input_tokens: 12, input_tokens_details: { text_tokens: 12, image_tokens: 0 }, output_tokens: 1056, total_tokens: 1068 };
    expect(usageFromOpenAIImages(usage)).toEqual({
      promptTokens: 12,
      completionTokens: 1056,
      totalTokens: 1068,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
  });

  it('images: no usage, or one without token counts, is null', () => {
    expect(usageFromOpenAIImages(undefined)).toBeNull();
    expect(usageFromOpenAIImages({ cost_in_usd_ticks: 700000000 })).toBeNull();
  });
});
