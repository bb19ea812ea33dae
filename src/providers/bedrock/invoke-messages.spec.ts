import type { RouteTarget } from '../../modules/routing/route-plan';
import { bedrockMessages, isBedrockClaude } from './invoke-messages';

describe('Claude on Bedrock through InvokeModel', () => {
  it('recognises Claude model ids, inference profiles included, and nothing else', () => {
    for (const model of ['anthropic.claude-3-5-haiku-20241022-v1:0', 'us.anthropic.claude-sonnet-4-20250514-v1:0', 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0', 'apac.anthropic.claude-3-haiku-20240307-v1:0', 'global.anthropic.claude-sonnet-4-5-20250929-v1:0']) {
      expect(isBedrockClaude(model)).toBe(true);
    }
    for (const model of ['meta.llama3-1-70b-instruct-v1:0', 'amazon.nova-pro-v1:0', 'us.amazon.nova-lite-v1:0', 'claude-3-5-haiku', 'mistral.anthropic.claude']) {
      expect(isBedrockClaude(model)).toBe(false);
    }
  });

  it('moves the model to the URL, the stream to the method, betas into the body', () => {
    const target = { providerOptions: { aws_region: 'eu-west-1' }, customHost: null } as unknown as RouteTarget;
    const request = bedrockMessages.buildRequest({ model: 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0', stream: true, max_tokens: 5, messages: [] }, target, { 'anthropic-beta': 'a-1, b-2' });
    expect(request.url).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-3-7-sonnet-20250219-v1%3A0/invoke-with-response-stream');
    expect(JSON.parse(request.body as string)).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['a-1', 'b-2'], max_tokens: 5, messages: [] });
  });

  it('reads the Anthropic event out of a chunk and throws on an exception frame', () => {
    const inner = JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } });
    expect(bedrockMessages.streamEvent!({ event: 'chunk', data: JSON.stringify({ bytes: Buffer.from(inner).toString('base64'), p: 'abc' }), id: undefined })).toEqual({ event: 'content_block_delta', data: inner, id: undefined });
    expect(() => bedrockMessages.streamEvent!({ event: 'exception:throttlingException', data: '{"message":"slow down"}', id: undefined })).toThrow(/slow down/);
  });
});
