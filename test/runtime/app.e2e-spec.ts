import { InvalidEnvironmentError, validateEnvironment } from '../../src/config/environment';
import { startTestGateway, TestGateway } from '../support/test-gateway';
import { call, expectError } from '../support/e2e-helpers';

describe('the application', () => {
  let gateway: TestGateway;

  beforeAll(async () => (gateway = await startTestGateway()));
  afterAll(async () => gateway?.close());

  it('GET /health: 200 with the database up, no key needed', async () => {
    const response = await call(gateway, '/health', { apiKey: null });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      database: 'up',
      pending_logs: expect.any(Number),
      price_catalog: { name: '@pydantic/genai-prices', version: expect.stringMatching(/^\d+\./) },
    });
  });

  it('GET /docs-json: an OpenAPI document listing the operations', async () => {
    const response = await call(gateway, '/docs-json', { apiKey: null });
    expect(response.status).toBe(200);
    expect(response.body.openapi).toMatch(/^3\./);
    expect(response.body.paths['/v1/chat/completions']).toHaveProperty('post');
    for (const path of ['/v1/logs', '/v1/logs/{id}', '/v1/api-keys', '/v1/virtual-keys', '/v1/configs', '/health']) {
      expect(Object.keys(response.body.paths)).toContain(path);
    }
    expect(response.body.components.securitySchemes['gateway-api-key']).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-gateway-api-key' });
  });

  it('GET /docs: the OpenAPI UI', async () => {
    const response = await call(gateway, '/docs', { apiKey: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('an unknown route is a 404 in the error shape, with or without a key', async () => {
    for (const apiKey of [null, gateway.adminKey]) {
      const response = await call(gateway, '/v1/no-such-operation', { apiKey });
      expectError(response, 404, { type: 'not_found_error', code: 'route_not_found', message: /\/v1\/no-such-operation/ });
    }
    expectError(await call(gateway, '/v1/chat/completions'), 404, { type: 'not_found_error', code: 'route_not_found' }); // GET of a POST route
  });

  it('sets the trace and request id headers on every answer', async () => {
    const response = await call(gateway, '/v1/logs', { headers: { 'x-gateway-trace-id': 'app-trace-1' } });
    expect(response.headers.get('x-gateway-trace-id')).toBe('app-trace-1');
    expect(response.headers.get('x-gateway-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(response.headers.get('x-powered-by')).toBeNull();
  });
});

describe('environment validation', () => {
  it('fails fast with one error naming every bad variable', () => {
    let thrown: unknown;
    try {
      validateEnvironment({ PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidEnvironmentError);
    const { problems, message } = thrown as InvalidEnvironmentError;
    const named = new Set(problems.map((p) => p.split(':')[0]));
    expect([...named].sort()).toEqual(['DATABASE_URL', 'GATEWAY_ENCRYPTION_KEY', 'LOG_LEVEL', 'PORT']);
    for (const variable of named) expect(message).toContain(variable);
    expect(problems.find((p) => p.startsWith('GATEWAY_ENCRYPTION_KEY'))).toMatch(/required when DATABASE_URL is set/);
  });

  it('parses valid values, applies defaults and treats empty strings as unset', () => {
    const env = validateEnvironment({ PORT: '9000', LOG_BODIES: 'false', LOG_LEVEL: '', UNRELATED: 'x' });
    expect(env).toMatchObject({ PORT: 9000, LOG_BODIES: false, LOG_LEVEL: 'info', HOST: '0.0.0.0', BODY_LIMIT_BYTES: 10 * 1024 * 1024 });
    expect(env.DATABASE_URL).toBeUndefined();
    expect(env).not.toHaveProperty('UNRELATED');
  });

  it('rejects a short admin key and a malformed encryption key', () => {
    expect(() => validateEnvironment({ GATEWAY_ADMIN_KEY: 'short', GATEWAY_ENCRYPTION_KEY: 'abc' })).toThrow(
      expect.objectContaining({ problems: [expect.stringMatching(/^GATEWAY_ADMIN_KEY/), expect.stringMatching(/^GATEWAY_ENCRYPTION_KEY/)] }),
    );
  });
});
