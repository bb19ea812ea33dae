import { REDACTED, TOO_DEEP, redactBody, redactHeaders } from './redaction';

describe('redaction', () => {
  it('redacts credential headers and keeps the rest', () => {
    expect(
      redactHeaders({ authorization: 'Bearer sk-1', 'x-gateway-api-key': 'gk-1', 'X-Api-Key': 'k', 'content-type': 'application/json', accept: ['a', 'b'] }),
    ).toEqual({ authorization: REDACTED, 'x-gateway-api-key': REDACTED, 'X-Api-Key': REDACTED, 'content-type': 'application/json', accept: 'a, b' });
  });

  it("redacts AWS's per-request secret access key and session token, keeps the access key id and region", () => {
    expect(
      redactHeaders({
        'x-gateway-aws-access-key-id': 'AKIAEXAMPLE',
        'x-gateway-aws-secret-access-key': 'secret/key',
        'X-Gateway-Aws-Session-Token': 'token',
        'x-gateway-aws-region': 'us-east-1',
      }),
    ).toEqual({
      'x-gateway-aws-access-key-id': 'AKIAEXAMPLE',
      'x-gateway-aws-secret-access-key': REDACTED,
      'X-Gateway-Aws-Session-Token': REDACTED,
      'x-gateway-aws-region': 'us-east-1',
    });
  });

  it('hides the credentials of an inline config header but keeps a stored config slug', () => {
    const inline = redactHeaders({ 'x-gateway-config': '{"provider":"openai","api_key":"sk-inline-secret","retry":{"attempts":2}}' });
    expect(JSON.parse(inline['x-gateway-config'])).toEqual({ provider: 'openai', api_key: REDACTED, retry: { attempts: 2 } });
    expect(redactHeaders({ 'x-gateway-config': 'prod-config' })['x-gateway-config']).toBe('prod-config');
    expect(redactHeaders({ 'x-gateway-config': '{broken sk-secret' })['x-gateway-config']).toBe(REDACTED);
  });

  it('redacts MCP tool headers, authorization tokens and api keys at any depth, without touching the input', () => {
    const body = {
      model: 'gpt-4o',
      tools: [{ type: 'mcp', server_url: 'https://mcp.example.com/sse', headers: { Authorization: 'Bearer t0k', 'X-Team': 'a' } }],
      mcp_servers: [{ type: 'url', name: 's', authorization_token: 'oauth-1' }],
      nested: { config: { api_key: 'sk-2' } },
    };
    const copy = JSON.parse(JSON.stringify(body));
    const redacted = redactBody(body);
    expect(redacted.tools[0].headers).toEqual({ Authorization: REDACTED, 'X-Team': REDACTED });
    expect(redacted.tools[0].server_url).toBe('https://mcp.example.com/sse');
    expect(redacted.mcp_servers[0].authorization_token).toBe(REDACTED);
    expect(redacted.nested.config.api_key).toBe(REDACTED);
    expect(body).toEqual(copy);
  });

  it('hides the user:password@ of a URL in any header, in an inline config and in URL fields of bodies', () => {
    const headers = redactHeaders({
      'x-gateway-custom-host': 'http://user:p%40ss@llm.example.com/v1',
      referer: 'https://a:b@c@example.com/page?x=@y',
      'x-gateway-config': JSON.stringify({ provider: 'openai', targets: [{ custom_host: 'https://u:secret@h.example/v1' }] }),
    });
    expect(headers['x-gateway-custom-host']).toBe('http://[REDACTED]@llm.example.com/v1');
    expect(headers.referer).toBe('https://[REDACTED]@example.com/page?x=@y');
    expect(headers['x-gateway-config']).not.toContain('secret');
    expect(JSON.parse(headers['x-gateway-config']).targets[0].custom_host).toBe('https://[REDACTED]@h.example/v1');
    const body = redactBody({ tools: [{ type: 'mcp', server_url: 'https://me:pw@mcp.example.com/sse' }], text: 'mail me@example.com' });
    expect(body).toEqual({ tools: [{ type: 'mcp', server_url: 'https://[REDACTED]@mcp.example.com/sse' }], text: 'mail me@example.com' });
  });

  it('returns bodies without secrets as they are (no copy on the hot path)', () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    expect(redactBody(body)).toBe(body);
  });

  it('stores a body nested past 64 levels as a note, without recursing through it', () => {
    let deep: unknown = { api_key: 'sk-deep' };
    for (let i = 0; i < 10_000; i++) deep = { inner: [deep] };
    const redacted = redactBody({ model: 'x', deep }) as { deep: unknown };
    expect(JSON.stringify(redacted)).toContain(TOO_DEEP);
    expect(JSON.stringify(redacted)).not.toContain('sk-deep');
    expect(JSON.stringify(redacted).length).toBeLessThan(2000);
  });
});
