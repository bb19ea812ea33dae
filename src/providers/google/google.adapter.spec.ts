import type { ProviderTarget } from '../provider-target';
import { googleAdapter } from './google.adapter';

const target = (fields: Partial<ProviderTarget> = {}) =>
  ({ provider: 'google', apiKey: 'AIza-key', customHost: null, providerOptions: {}, ...fields }) as ProviderTarget;
const chat = googleAdapter.chatCompletions!;
const messages = [{ role: 'user', content: 'Hi' }];

describe('googleAdapter', () => {
  it('is the google provider, needing a key and no custom host, with translated chat', () => {
    expect(googleAdapter).toMatchObject({ id: 'google', credentialOptional: false, requiresCustomHost: false });
    expect(chat.translation).toBeDefined();
    expect(googleAdapter.embeddings?.translation).toBeDefined(); // batchEmbedContents, answered in OpenAI's shape
  });

  it('non-streaming: generateContent with the key header and the translated body', () => {
    const request = chat.buildRequest({ model: 'gemini-2.5-flash', messages, temperature: 0.2 }, target());
    expect(request).toEqual({
      method: 'POST',
      url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIza-key' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], generationConfig: { temperature: 0.2 } }),
      ignoredParams: [],
    });
  });

  it('streaming: streamGenerateContent as SSE; stream and stream_options stay out of the body', () => {
    const request = chat.buildRequest({ model: 'gemini-2.5-pro', messages, stream: true, stream_options: { include_usage: true } }, target());
    expect(request.url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(JSON.parse(request.body as string)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  it('a custom host (trailing slashes removed), the models/ prefix dropped and the model URL-encoded', () => {
    const request = chat.buildRequest({ model: 'models/tuned model/v1', messages }, target({ customHost: 'http://127.0.0.1:9000/v1alpha//' }));
    expect(request.url).toBe('http://127.0.0.1:9000/v1alpha/models/tuned%20model%2Fv1:generateContent');
  });

  it('a missing model is a 400 naming it', () => {
    expect(() => chat.buildRequest({ messages }, target())).toThrow(expect.objectContaining({ status: 400, param: 'model' }));
  });

  it('the translation answers in OpenAI format', () => {
    const completion = chat.translation!.toChatCompletion({ candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] }, 'gemini-2.5-flash');
    expect(completion.choices[0].message.content).toBe('ok');
    const decoder = chat.translation!.streamDecoder('gemini-2.5-flash');
    expect(decoder.onEvent({ event: undefined, id: undefined, data: '{"candidates":[{"content":{"parts":[{"text":"x"}]}}]}' })[1].choices[0].delta).toEqual({
      content: 'x',
    });
  });
});
