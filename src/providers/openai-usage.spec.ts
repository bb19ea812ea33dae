import { usageFromOpenAI, usageFromOpenAIImages, usageFromOpenAIResponse, usageFromOpenAIResponses } from './openai-usage';

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

  it('chat: cached and reasoning tokens, and the cache writes of a translated Anthropic answer', () => {
    const usage = {
      prompt_tokens: 300,
      completion_tokens: 40,
      total_tokens: 340,
      prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 50 },
      completion_tokens_details: { reasoning_tokens: 12 },
    };
    expect(usageFromOpenAI(usage)).toEqual({
      promptTokens: 300,
      completionTokens: 40,
      totalTokens: 340,
      cachedTokens: 200,
      cacheWriteTokens: 50,
      reasoningTokens: 12,
    });
  });

  it('responses: input and output tokens with their cached and reasoning details', () => {
    const usage = {
      input_tokens: 36,
      input_tokens_details: { cached_tokens: 18 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 45,
    };
    expect(usageFromOpenAIResponses(usage)).toEqual({
      promptTokens: 36,
      completionTokens: 9,
      totalTokens: 45,
      cachedTokens: 18,
      cacheWriteTokens: 0,
      reasoningTokens: 5,
    });
    expect(usageFromOpenAIResponses(null)).toBeNull();
  });

  it('a Responses answer: one web search per web_search_call item', () => {
    const usage = { input_tokens: 30, output_tokens: 9, total_tokens: 39 };
    const output = [
      { type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'a' } },
      { type: 'message', content: [] },
      { type: 'web_search_call', status: 'completed', action: { type: 'open_page', url: 'https://example.com' } },
    ];
    expect(usageFromOpenAIResponse({ usage, output })).toMatchObject({ promptTokens: 30, completionTokens: 9, webSearches: 2 });
    expect(usageFromOpenAIResponse({ usage, output: [{ type: 'message' }] })?.webSearches).toBeUndefined();
    expect(usageFromOpenAIResponse({ output })).toBeNull();
    expect(usageFromOpenAIResponse({ usage, output: 'junk' })).toMatchObject({ promptTokens: 30 });
  });
});
