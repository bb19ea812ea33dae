import type { ProviderTarget } from '../provider-target';
import { vertexAIAdapter } from './vertex-ai.adapter';

describe("Claude's count-tokens on Vertex AI", () => {
  const counter = vertexAIAdapter.messagesCountTokens!;
  const target = (region: string, extra: Record<string, string> = {}) =>
    ({ providerOptions: { project_id: 'p-1', region, ...extra }, customHost: null, accessToken: 'ya29.token' }) as unknown as ProviderTarget;

  it('serves Claude models only', () => {
    expect(counter.servesModel!('claude-sonnet-4-5@20250929')).toBe(true);
    expect(counter.servesModel!('gemini-2.5-flash')).toBe(false);
  });

  it('posts to the one count-tokens endpoint, the model kept in the body and the version added', () => {
    const request = counter.buildRequest({ model: 'claude-haiku-4-5@20251001', messages: [{ role: 'user', content: 'hi' }] }, target('us-east5'), {
      'anthropic-beta': 'b-1',
    });
    expect(request.url).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/p-1/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict',
    );
    expect(request.headers).toMatchObject({ authorization: 'Bearer ya29.token', 'anthropic-beta': 'b-1' });
    expect(JSON.parse(request.body as string)).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      model: 'claude-haiku-4-5@20251001',
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('uses the global host for region global and the beta of provider_options without a client one', () => {
    const request = counter.buildRequest({ model: 'claude-opus-4-1@20250805', messages: [] }, target('global', { anthropic_beta: 'opt-1' }));
    expect(request.url).toBe('https://aiplatform.googleapis.com/v1/projects/p-1/locations/global/publishers/anthropic/models/count-tokens:rawPredict');
    expect(request.headers['anthropic-beta']).toBe('opt-1');
  });

  it('refuses a body without a model, and never builds without a token', () => {
    expect(() => counter.buildRequest({ messages: [] }, target('us-east5'))).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => counter.buildRequest({ model: 'claude-x', messages: [] }, { ...target('us-east5'), accessToken: undefined })).toThrow(/access token/);
  });
});
