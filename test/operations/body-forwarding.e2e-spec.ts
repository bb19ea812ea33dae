/**
 * Request bodies forwarded as received: a request in the provider's own wire format that
 * the gateway does not change reaches the provider as the very bytes the client sent
 * (src/common/http/received-body.ts); one the gateway changes (routing's model, a config's
 * override_params, stream_options for usage, a translation, a key sent twice) is
 * serialised with the change. Either way the log holds the body the client sent.
 */
import { call, createVirtualKey, logOf } from '../support/e2e-helpers';
import { MockUpstream, startMockUpstream } from '../support/mock-upstream';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('request bodies forwarded as received', () => {
  let gateway: TestGateway;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'anthropic-vk', provider: 'anthropic', key: 'sk-ant-secret-000000', custom_host: `${mock.url}/v1` });
    await createVirtualKey(gateway, { slug: 'openai-vk', provider: 'openai', key: 'sk-openai-secret-000000', custom_host: `${mock.url}/v1` });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  beforeEach(() => mock.reset());

  /** Sends `text` as it is and returns the one request the mock received, with the client's answer. */
  async function send(path: string, text: string, headers: Record<string, string>) {
    const response = await call(gateway, path, { headers, body: text });
    expect(response.status).toBe(200);
    expect(mock.requests).toHaveLength(1);
    return { response, upstream: mock.requests[0] };
  }

  // Key order, whitespace (tabs, CRs), unicode and quote escapes, brackets in text, numbers like 1.0 and 1e0 (Sonnet 4.5 takes top_p or temperature, not both).
  const MESSAGES = `{ "max_tokens" : 100.0 ,\r\n\t"messages":[ {"content":"caf\\u00e9 \\"quoted\\" {[ \\\\", "role":"user"} ],
    "model":"claude-sonnet-4-5", "top_p": 1e0, "metadata": {"user_id":"\\u0061lice"} }`;
  const CHAT = `{"messages":[{"role":"user","content":"na\\u00efve \\ud83d\\ude00 [x]"}] , "model" : "gpt-4o-mini","temperature":1.0,"seed":12345678901234567890}`;
  const RESPONSES = `{ "input" : [ {"role":"user","content":[{"type":"input_text","text":"\\u00fcber {\\"a\\":1}"}]} ], "model":"gpt-4o-mini", "temperature":1.0,"store":false}`;

  describe('a request the gateway does not change reaches the provider byte for byte', () => {
    it('Anthropic Messages to Anthropic, and the log holds the body as sent', async () => {
      const { response, upstream } = await send('/v1/messages', MESSAGES, { 'x-gateway-virtual-key': 'anthropic-vk' });
      expect(upstream.path).toBe('/v1/messages');
      expect(upstream.rawBody).toEqual(Buffer.from(MESSAGES));
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log).toMatchObject({ provider: 'anthropic', model: 'claude-sonnet-4-5', user: 'alice', status_code: 200 });
      expect(log.request_body).toEqual(JSON.parse(MESSAGES));
    });

    it('a streamed Messages request too', async () => {
      const text = MESSAGES.replace('"model"', '"stream" : true, "model"');
      const { upstream } = await send('/v1/messages', text, { 'x-gateway-virtual-key': 'anthropic-vk' });
      expect(upstream.rawBody).toEqual(Buffer.from(text));
    });

    it('OpenAI chat completions to OpenAI, and the log holds the body as sent', async () => {
      const { response, upstream } = await send('/v1/chat/completions', CHAT, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.rawBody).toEqual(Buffer.from(CHAT));
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.request_body).toEqual(JSON.parse(CHAT));
    });

    it('a streamed chat request that asks for usage itself', async () => {
      const text = CHAT.replace('"model"', '"stream":true,"stream_options":{ "include_usage":true },"model"');
      const { upstream } = await send('/v1/chat/completions', text, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.rawBody).toEqual(Buffer.from(text));
    });

    it('OpenAI Responses to OpenAI, streamed or not, and the log holds the body as sent', async () => {
      const { response, upstream } = await send('/v1/responses', RESPONSES, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.path).toBe('/v1/responses');
      expect(upstream.rawBody).toEqual(Buffer.from(RESPONSES));
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.request_body).toEqual(JSON.parse(RESPONSES));

      mock.reset();
      const streamed = RESPONSES.replace('"model"', '"stream": true, "model"');
      expect((await send('/v1/responses', streamed, { 'x-gateway-virtual-key': 'openai-vk' })).upstream.rawBody).toEqual(Buffer.from(streamed));
    });
  });

  describe('a request the gateway changes is serialised with the change', () => {
    it("routing's model (@slug/model): the model the provider knows, the rest as parsed; the log keeps the client's", async () => {
      const text = CHAT.replace('"gpt-4o-mini"', '"@openai-vk/gpt-4o-mini"');
      const { response, upstream } = await send('/v1/chat/completions', text, {});
      expect(upstream.rawBody).toEqual(Buffer.from(JSON.stringify({ ...JSON.parse(text), model: 'gpt-4o-mini' })));
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(log.request_body).toEqual(JSON.parse(text));
    });

    it("a config's override_params", async () => {
      const config = JSON.stringify({ virtual_key: 'anthropic-vk', override_params: { top_p: 0.5, model: 'claude-haiku-4-5' } });
      const { upstream } = await send('/v1/messages', MESSAGES, { 'x-gateway-config': config });
      expect(upstream.body).toEqual({ ...JSON.parse(MESSAGES), top_p: 0.5, model: 'claude-haiku-4-5' });
      expect(upstream.rawBody).toEqual(Buffer.from(JSON.stringify(upstream.body)));
    });

    it('stream_options.include_usage added to a streamed chat request that did not ask for usage', async () => {
      const text = CHAT.replace('"model"', '"stream":true,"model"');
      const { response, upstream } = await send('/v1/chat/completions', text, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.body).toEqual({ ...JSON.parse(text), stream_options: { include_usage: true } });
      expect(response.text).not.toContain('"usage":{'); // asked for by the gateway: not the client's
    });

    it('a translation: Anthropic Messages to OpenAI goes as chat completions', async () => {
      const { upstream } = await send('/v1/messages', MESSAGES, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.body).toMatchObject({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'café "quoted" {[ \\' }] });
    });

    it('a key sent twice: the provider gets the value the gateway routed, priced and checked by, once', async () => {
      const text = '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"model":"gpt-4o-mini"}';
      const { response, upstream } = await send('/v1/chat/completions', text, { 'x-gateway-virtual-key': 'openai-vk' });
      expect(upstream.rawBody?.toString()).toBe('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}');
      expect((await logOf(gateway, response.headers.get('x-gateway-request-id'))).model).toBe('gpt-4o-mini');
    });
  });
});
