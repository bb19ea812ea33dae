import { usageFromOpenAI } from '../openai-usage';
import { anthropicUsageAsOpenAI, usageFromAnthropic } from './anthropic-usage';

describe('Anthropic usage', () => {
  it('counts cache reads and writes in the prompt, apart as cached and cache-write tokens', () => {
    expect(usageFromAnthropic({ input_tokens: 10, cache_read_input_tokens: 200, cache_creation_input_tokens: 50, output_tokens: 7 })).toEqual({
      promptTokens: 260,
      completionTokens: 7,
      totalTokens: 267,
      cachedTokens: 200,
      cacheWriteTokens: 50,
      reasoningTokens: 0,
    });
  });

  it('treats missing or null counts as zero, and no usage as none', () => {
    expect(usageFromAnthropic({ input_tokens: 3, cache_read_input_tokens: null, output_tokens: 1 })).toMatchObject({
      promptTokens: 3,
      cachedTokens: 0,
      cacheWriteTokens: 0,
    });
    expect(usageFromAnthropic(undefined)).toBeNull();
  });

  it("in OpenAI's shape keeps the writes in prompt_tokens_details.cache_write_tokens", () => {
    expect(anthropicUsageAsOpenAI({ input_tokens: 10, cache_read_input_tokens: 200, cache_creation_input_tokens: 50, output_tokens: 7 })).toEqual({
      prompt_tokens: 260,
      completion_tokens: 7,
      total_tokens: 267,
      prompt_tokens_details: { cached_tokens: 200, cache_write_tokens: 50 },
    });
  });

  it('web searches from server_tool_use, carried through the OpenAI shape and back', () => {
    const anthropic = { input_tokens: 100, output_tokens: 20, server_tool_use: { web_search_requests: 3 } };
    expect(usageFromAnthropic(anthropic)).toMatchObject({ promptTokens: 100, completionTokens: 20, webSearches: 3 });
    const openai = anthropicUsageAsOpenAI(anthropic);
    expect(openai.server_tool_use).toEqual({ web_search_requests: 3 });
    expect(usageFromOpenAI(openai)).toMatchObject({ promptTokens: 100, completionTokens: 20, webSearches: 3 });
    expect(usageFromAnthropic({ input_tokens: 1, output_tokens: 1, server_tool_use: { web_search_requests: 0 } })?.webSearches).toBeUndefined();
    expect(anthropicUsageAsOpenAI({ input_tokens: 1, output_tokens: 1 }).server_tool_use).toBeUndefined();
  });
});
