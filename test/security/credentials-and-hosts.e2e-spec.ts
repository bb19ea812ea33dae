/**
 * A member key as an attacker uses it (CONTRACT section 15): a stored credential never goes
 * to a host the request names; credentials the gateway sent never come back in a provider's
 * answer, to the client or to the log; header-bound fields are refused when given, not
 * when used; a URL's `user:password@` reaches neither the log nor the audit log.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, createApiKey, createConfig, createVirtualKey, expectError, HELLO, logOf } from '../support/e2e-helpers';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

/** The organisation's provider key, stored in the virtual key `org`. */
const ORG_KEY = 'sk-org-secret-0123456789abcdef';
const CHAT = { model: 'gpt-4o-mini', messages: HELLO };

interface Server {
  url: string;
  /** Authorization headers received, in order. */
  received: (string | undefined)[];
  close(): Promise<void>;
}

const completion = (content: string) =>
  JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  });

/**
 * A provider that quotes the Authorization it was sent, as some self-hosted servers do:
 * model `echo-error` in a 401 body and header, `echo-json` in an answer, `echo-stream` in a
 * stream's events; anything else is a plain answer (the attacker's server).
 */
async function startEchoServer(): Promise<Server> {
  const received: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => {
      const auth = req.headers.authorization;
      received.push(auth);
      const model = (JSON.parse(text || '{}') as { model?: string }).model;
      if (model === 'echo-error') {
        res.writeHead(401, { 'content-type': 'application/json', 'x-amzn-errortype': `Bad ${auth}` });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${auth}`, type: 'invalid_request_error', code: 'invalid_api_key' } }));
      } else if (model === 'echo-stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (content: string) =>
          JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
        // The key split across two network writes: the scrubber works on whole events.
        const frame = `data: ${chunk(`you sent ${auth}`)}\n\n`;
        const half = frame.indexOf(ORG_KEY) + 6;
        res.write(frame.slice(0, half));
        setTimeout(() => {
          res.write(frame.slice(half));
          res.end('data: [DONE]\n\n');
        }, 20);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(completion(model === 'echo-json' ? `your key is ${auth}` : 'hello'));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('credentials and hosts (hostile member key)', () => {
  let gateway: TestGateway;
  let provider: Server;
  let attacker: Server;
  let member: string;

  beforeAll(async () => {
    [provider, attacker] = await Promise.all([startEchoServer(), startEchoServer()]);
    gateway = await startTestGateway();
    await createVirtualKey(gateway, { slug: 'org', key: ORG_KEY, custom_host: `${provider.url}/v1` });
    await createVirtualKey(gateway, { slug: 'org-default-host', key: ORG_KEY });
    member = (await createApiKey(gateway, { name: 'member', role: 'member' })).key;
  });

  afterAll(async () => {
    await gateway?.close();
    await provider?.close();
    await attacker?.close();
  });

  beforeEach(() => {
    provider.received.length = 0;
    attacker.received.length = 0;
  });

  const asMember = (headers: Record<string, string>, body: Record<string, unknown> = CHAT, apiKey = member) =>
    call(gateway, '/v1/chat/completions', { headers, body, apiKey });
  // Non-ASCII written as JSON escapes, as a client must to put it in a header.
  const inline = (config: Record<string, unknown>) => ({
    'x-gateway-config': JSON.stringify(config).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  });
  const mismatch = { type: 'invalid_request_error', code: 'credential_host_mismatch' };

  describe('a stored credential goes only to its own host', () => {
    it('refuses an inline config that sends a virtual key to another host, at any level, inherited or not', async () => {
      const evil = `${attacker.url}/v1`;
      const configs = [
        { virtual_key: 'org', custom_host: evil },
        { virtual_key: 'org-default-host', custom_host: evil },
        { custom_host: evil, targets: [{ virtual_key: 'org' }] },
        {
          strategy: { mode: 'fallback' },
          targets: [
            { provider: 'openai', api_key: 'sk-own-key-123456', custom_host: evil },
            { virtual_key: 'org', custom_host: evil },
          ],
        },
        {
          strategy: { mode: 'loadbalance' },
          targets: [
            { virtual_key: 'org', weight: 1 },
            { targets: [{ virtual_key: 'org', custom_host: evil }], weight: 0 },
          ],
        },
      ];
      for (const config of configs) {
        const response = await asMember(inline(config));
        expectError(response, 400, {
          ...mismatch,
          param: 'x-gateway-config',
          message: /custom_host names the host .* virtual key 'org(-default-host)?' is a stored credential/,
        });
      }
      // Refused before anything was sent, to either server.
      expect(attacker.received).toEqual([]);
      expect(provider.received).toEqual([]);
    });

    it('refuses x-gateway-custom-host with a virtual key header, an @slug model, a default virtual key or a config', async () => {
      const host = { 'x-gateway-custom-host': `${attacker.url}/v1` };
      const withDefault = (await createApiKey(gateway, { name: 'defaulted', role: 'member', default_virtual_key: 'org' })).key;
      await createConfig(gateway, 'org-config', { virtual_key: 'org' });
      const cases = [
        await asMember({ ...host, 'x-gateway-virtual-key': 'org' }),
        await asMember(host, { ...CHAT, model: '@org/gpt-4o-mini' }),
        await asMember(host, CHAT, withDefault),
        await asMember({ ...host, 'x-gateway-config': 'org-config' }),
        await asMember({ ...host, ...inline({ virtual_key: 'org' }) }),
      ];
      for (const response of cases) expectError(response, 400, { ...mismatch, param: 'x-gateway-custom-host' });
      // Beside x-gateway-provider the host belongs to that route, which a virtual key wins over (CONTRACT
      // section 1's order): set aside with it, so the key goes to its own host.
      expect(
        (await asMember({ ...host, 'x-gateway-virtual-key': 'org', 'x-gateway-provider': 'openai', authorization: 'Bearer sk-own-key-123456' })).status,
      ).toBe(200);
      expect(provider.received).toEqual([`Bearer ${ORG_KEY}`]);
      expect(attacker.received).toEqual([]);
    });

    it("sends a request's own key wherever it names, and a virtual key to the host stored with it", async () => {
      const own = 'sk-own-key-123456';
      expect((await asMember({ 'x-gateway-provider': 'openai', authorization: `Bearer ${own}`, 'x-gateway-custom-host': `${attacker.url}/v1` })).status).toBe(
        200,
      );
      expect((await asMember(inline({ provider: 'openai', api_key: own, custom_host: `${attacker.url}/v1` }))).status).toBe(200);
      expect(attacker.received).toEqual([`Bearer ${own}`, `Bearer ${own}`]);

      // Naming the key's own host is no redirection (trailing slash or not).
      expect((await asMember(inline({ virtual_key: 'org', custom_host: `${provider.url}/v1/` }))).status).toBe(200);
      expect((await asMember({ 'x-gateway-virtual-key': 'org', 'x-gateway-custom-host': `${provider.url}/v1` })).status).toBe(200);
      expect(provider.received).toEqual([`Bearer ${ORG_KEY}`, `Bearer ${ORG_KEY}`]);
    });

    it('lets an admin-stored config pair a virtual key with the host the admin chose', async () => {
      await createConfig(gateway, 'admin-paired', { virtual_key: 'org-default-host', custom_host: `${provider.url}/v1` });
      expect((await asMember({ 'x-gateway-config': 'admin-paired' })).status).toBe(200);
      expect(provider.received).toEqual([`Bearer ${ORG_KEY}`]);
    });
  });

  describe('credentials sent upstream never come back', () => {
    const expectScrubbed = (text: string) => {
      expect(text).not.toContain(ORG_KEY);
      expect(text).toContain('[REDACTED]');
    };

    it('in an error body and its headers, to the client and in the log row', async () => {
      const response = await asMember({ 'x-gateway-virtual-key': 'org' }, { ...CHAT, model: 'echo-error' });
      expect(response.status).toBe(401);
      expect(response.body.error.message).toBe('Incorrect API key provided: Bearer [REDACTED]');
      expect(response.headers.get('x-amzn-errortype')).toBe('Bad Bearer [REDACTED]');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expectScrubbed(JSON.stringify(log));
    });

    it('in a JSON answer', async () => {
      const response = await asMember({ 'x-gateway-virtual-key': 'org' }, { ...CHAT, model: 'echo-json' });
      expect(response.status).toBe(200);
      expect(response.body.choices[0].message.content).toBe('your key is Bearer [REDACTED]');
      expectScrubbed(JSON.stringify(await logOf(gateway, response.headers.get('x-gateway-request-id'))));
    });

    it('in a stream, even split across network chunks', async () => {
      const response = await asMember({ 'x-gateway-virtual-key': 'org' }, { ...CHAT, model: 'echo-stream', stream: true });
      expect(response.status).toBe(200);
      expectScrubbed(response.text);
      expect(response.text).toContain('you sent Bearer [REDACTED]');
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expectScrubbed(JSON.stringify(log));
    });

    it('a key the request brought itself, too', async () => {
      const own = 'sk-own-echo-key-98765';
      const response = await asMember(
        { 'x-gateway-provider': 'openai', authorization: `Bearer ${own}`, 'x-gateway-custom-host': `${provider.url}/v1` },
        { ...CHAT, model: 'echo-error' },
      );
      expect(response.status).toBe(401);
      expect(response.text).not.toContain(own);
    });
  });

  describe('header-bound fields are refused when given', () => {
    it('a stored config with CR LF or non-Latin-1 in a header field, at any level: 400 naming the field', async () => {
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ virtual_key: 'org', provider_organization: 'org-1\r\nX-Injected: 1' }, /config\.provider_organization must not contain line breaks/],
        [
          { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'org' }, { virtual_key: 'org', provider_project: 'proj\n' }] },
          /config\.targets\[1\]\.provider_project must not contain/,
        ],
        [{ provider: 'openai', api_key: 'sk-\u4e2d\u6587-key' }, /config\.api_key must not contain/],
        [
          { virtual_key: 'org', input_guardrails: [{ checks: [{ type: 'webhook', url: 'https://hooks.example.com', headers: { 'x-token': 'a\u0001b' } }] }] },
          /headers\.x-token must not contain/,
        ],
      ];
      for (const [config, message] of bad) {
        const created = await admin(gateway, 'POST', '/v1/configs', { name: 'bad', slug: 'bad', config });
        expect({ status: created.status, code: created.body.error?.code, param: created.body.error?.param }).toEqual({
          status: 400,
          code: 'invalid_config',
          param: 'config',
        });
        expect(created.body.error.message).toMatch(message);
      }
      await createConfig(gateway, 'good', { virtual_key: 'org' });
      const patched = await admin(gateway, 'PATCH', '/v1/configs/good', { config: { virtual_key: 'org', provider_organization: 'org\r\n' } });
      expect(patched.status).toBe(400);
      expect(patched.body.error.message).toMatch(/config\.provider_organization/);
    });

    it('the same per request, in an inline config (400, not a 502 from the provider call)', async () => {
      const response = await asMember(inline({ virtual_key: 'org', provider_organization: '\u4e2d' }));
      expectError(response, 400, {
        type: 'invalid_request_error',
        code: 'invalid_config',
        param: 'x-gateway-config',
        message: /config\.provider_organization must not contain/,
      });
      expect(provider.received).toEqual([]);
    });

    it('virtual keys and MCP servers: header fields, provider options and keys', async () => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        [
          '/v1/virtual-keys',
          { name: 'x', slug: 'x1', provider: 'openai', key: 'sk-1', provider_organization: 'a\r\nb' },
          /provider_organization must not contain/,
        ],
        [
          '/v1/virtual-keys',
          { name: 'x', slug: 'x2', provider: 'openai', key: 'sk-1', provider_project: '\u00e9t\u00e9\u2028' },
          /provider_project must not contain/,
        ],
        [
          '/v1/virtual-keys',
          { name: 'x', slug: 'x3', provider: 'anthropic', key: 'sk-1', provider_options: { anthropic_beta: 'x\nInjected: 1' } },
          /provider_options\.anthropic_beta must not contain/,
        ],
        [
          '/v1/virtual-keys',
          { name: 'x', slug: 'x4', provider: 'azure-openai', key: 'k-1', provider_options: { resource_name: 'evil.example/x?' } },
          /provider_options\.resource_name must be an Azure resource name/,
        ],
        ['/v1/virtual-keys', { name: 'x', slug: 'x5', provider: 'openai', key: 'sk-1\r\n' }, /key must not contain/],
        [
          '/v1/mcp-servers',
          { name: 'x', slug: 'm1', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer \u4e2d' } },
          /headers must be an object/,
        ],
      ];
      for (const [path, body, message] of cases) {
        const created = await admin(gateway, 'POST', path, body);
        expect({ path, slug: body.slug, status: created.status }).toEqual({ path, slug: body.slug, status: 400 });
        expect(created.body.error.message).toMatch(message);
      }
      // Latin-1 is a valid header value; a service account's JSON key is not sent as a header.
      await createVirtualKey(gateway, { slug: 'latin', key: 'sk-1', provider_organization: 'soci\u00e9t\u00e9' });
      await createVirtualKey(gateway, {
        slug: 'vertex',
        provider: 'vertex-ai',
        key: '{\n  "type": "service_account"\n}',
        provider_options: { project_id: 'p', region: 'us-central1' },
      });
    });
  });

  describe('user:password@ in a URL', () => {
    it('is refused in a per-request host, and hidden in the log row of the refusal', async () => {
      const response = await asMember({
        'x-gateway-provider': 'openai',
        authorization: 'Bearer sk-x-123456789',
        'x-gateway-custom-host': `http://user:hunter2@127.0.0.1:1/v1`,
      });
      expectError(response, 400, { type: 'invalid_request_error', param: 'x-gateway-custom-host', message: /must not carry user:password@/ });
      const log = await logOf(gateway, response.headers.get('x-gateway-request-id'));
      expect(JSON.stringify(log)).not.toContain('hunter2');
      expect(log.request_headers['x-gateway-custom-host']).toBe('http://[REDACTED]@127.0.0.1:1/v1');

      const byConfig = await asMember(inline({ provider: 'openai', api_key: 'sk-x-123456789', custom_host: 'http://user:hunter2@127.0.0.1:1/v1' }));
      expectError(byConfig, 400, { type: 'invalid_request_error', code: 'invalid_config', message: /custom_host must not carry user:password@/ });
      expect(JSON.stringify(await logOf(gateway, byConfig.headers.get('x-gateway-request-id')))).not.toContain('hunter2');
    });

    it('is refused in stored hosts and hidden in the audit log', async () => {
      const vk = await admin(gateway, 'POST', '/v1/virtual-keys', {
        name: 'u',
        slug: 'userinfo',
        provider: 'openai',
        key: 'sk-1',
        custom_host: 'https://user:hunter2@llm.example.com/v1',
      });
      expect(vk.status).toBe(400);
      expect(vk.body.error.message).toMatch(/custom_host must not carry user:password@/);
      const config = await admin(gateway, 'POST', '/v1/configs', {
        name: 'u',
        slug: 'userinfo',
        config: { provider: 'openai', api_key: 'sk-1', custom_host: 'https://user:hunter2@llm.example.com/v1' },
      });
      expect(config.status).toBe(400);

      // What an admin does store is audited with the password hidden (an API key's metadata may hold a URL).
      await createApiKey(gateway, { name: 'with-url', metadata: { callback: 'https://user:hunter2@hooks.example.com/x' } });
      const audit = await admin(gateway, 'GET', '/v1/audit-log?limit=500');
      expect(audit.status).toBe(200);
      const text = JSON.stringify(audit.body);
      expect(text).toContain('https://[REDACTED]@hooks.example.com/x');
      expect(text).not.toContain('hunter2');
    });
  });
});
