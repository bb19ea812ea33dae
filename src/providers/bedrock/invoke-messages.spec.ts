import type { ProviderTarget } from '../provider-target';
import { bedrockCountTokens, bedrockMessages, isBedrockClaude } from './invoke-messages';

describe('Claude on Bedrock through InvokeModel', () => {
  it('recognises Claude model ids, inference profiles included, and nothing else', () => {
    for (const model of [
      'anthropic.claude-3-5-haiku-20241022-v1:0',
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
      'eu.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'apac.anthropic.claude-3-haiku-20240307-v1:0',
      'global.anthropic.claude-sonnet-4-5-20250929-v1:0',
    ]) {
      expect(isBedrockClaude(model)).toBe(true);
    }
    for (const model of [
      'meta.llama3-1-70b-instruct-v1:0',
      'amazon.nova-pro-v1:0',
      'us.amazon.nova-lite-v1:0',
      'claude-3-5-haiku',
      'mistral.anthropic.claude',
    ]) {
      expect(isBedrockClaude(model)).toBe(false);
    }
  });

  it('moves the model to the URL, the stream to the method, betas into the body', () => {
    const target = { providerOptions: { aws_region: 'eu-west-1' }, customHost: null } as unknown as ProviderTarget;
    const request = bedrockMessages.buildRequest({ model: 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0', stream: true, max_tokens: 5, messages: [] }, target, {
      'anthropic-beta': 'a-1, b-2',
    });
    expect(request.url).toBe(
      'https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke-with-response-stream',
    );
    expect(JSON.parse(request.body as string)).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['a-1', 'b-2'],
      max_tokens: 5,
      messages: [],
    });
  });

  it('reads the Anthropic event out of a chunk and throws on an exception frame', () => {
    const inner = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } });
    expect(
      bedrockMessages.streamEvent!({ event: 'chunk', data: JSON.stringify({ bytes: Buffer.from(inner).toString('base64'), p: 'abc' }), id: undefined }),
    ).toEqual({ event: 'content_block_delta', data: inner, id: undefined });
    expect(() => bedrockMessages.streamEvent!({ event: 'exception:throttlingException', data: '{"message":"slow down"}', id: undefined })).toThrow(/slow down/);
  });

  describe('CountTokens', () => {
    const target = { providerOptions: { aws_region: 'us-west-2', anthropic_beta: 'from-options-1' }, customHost: null } as unknown as ProviderTarget;
    const invokeBodyOf = (body: string) => JSON.parse(Buffer.from(JSON.parse(body).input.invokeModel.body, 'base64').toString('utf8'));

    it('wraps the InvokeModel body in base64 under input.invokeModel, the profile prefix dropped from the URL', () => {
      const request = bedrockCountTokens.buildRequest(
        { model: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0', system: 'S', messages: [{ role: 'user', content: 'hi' }] },
        target,
      );
      expect(request.method).toBe('POST');
      expect(request.url).toBe('https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/count-tokens');
      expect(Object.keys(JSON.parse(request.body as string))).toEqual(['input']);
      expect(invokeBodyOf(request.body as string)).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        anthropic_beta: ['from-options-1'],
        system: 'S',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 1,
      });
    });

    it("keeps max_tokens above a thinking budget and prefers the client's betas", () => {
      const request = bedrockCountTokens.buildRequest(
        { model: 'anthropic.claude-opus-4-1-20250805-v1:0', messages: [], thinking: { type: 'enabled', budget_tokens: 4000 } },
        target,
        { 'anthropic-beta': 'client-1' },
      );
      expect(invokeBodyOf(request.body as string)).toMatchObject({
        max_tokens: 4001,
        anthropic_beta: ['client-1'],
        thinking: { type: 'enabled', budget_tokens: 4000 },
      });
    });

    it('refuses a body without a model with a 400 naming it', () => {
      expect(() => bedrockCountTokens.buildRequest({ messages: [] }, target)).toThrow(expect.objectContaining({ status: 400 }));
    });

    it('reads inputTokens, and tells a model it cannot count from a bad body', () => {
      expect(bedrockCountTokens.inputTokens!({ inputTokens: 42 })).toBe(42);
      expect(bedrockCountTokens.inputTokens!({ input_tokens: 42 })).toBeNull();
      expect(bedrockCountTokens.inputTokens!({ inputTokens: '42' })).toBeNull();
      expect(bedrockCountTokens.cannotCount!(400, { message: "The provided model doesn't support counting tokens." })).toBe(true);
      expect(bedrockCountTokens.cannotCount!(400, { message: 'Malformed input request: #: required key [messages] not found' })).toBe(false);
      expect(bedrockCountTokens.cannotCount!(403, { message: "The provided model doesn't support counting tokens." })).toBe(false);
      expect(
        bedrockCountTokens.toAnthropicError!(
          429,
          { message: 'Too many requests' },
          { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/' },
        ),
      ).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    });
  });
});
