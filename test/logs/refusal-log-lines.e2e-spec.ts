/**
 * Refusals leave a log line (issue 26's "Bad input"): a role below the route's, a key the
 * gateway does not know, a forged session cookie. Each line says what was refused and
 * who asked, and never holds the secret that was sent.
 */
import { Logger } from '@nestjs/common';
import { SESSION_COOKIE } from '../../src/modules/auth/cookies';
import { call, createApiKey } from '../support/e2e-helpers';
import { startTestGateway, TestGateway } from '../support/test-gateway';

describe('refusals leave a log line', () => {
  let gateway: TestGateway;
  let viewer: { id: string; key: string };
  let warnings: jest.SpyInstance;
  const lines = () => warnings.mock.calls.map(([message]) => String(message));

  beforeAll(async () => {
    gateway = await startTestGateway();
    viewer = await createApiKey(gateway, { name: 'Read-only dashboards', role: 'viewer' });
  });

  afterAll(() => gateway?.close());

  // Nest's Logger is what every module logs through; spied on per test, after the gateway's start-up lines.
  beforeEach(() => (warnings = jest.spyOn(Logger.prototype, 'warn')));
  afterEach(() => warnings.mockRestore());

  it('a role below the route: 403, and a line naming the key, its role and the permission needed', async () => {
    const response = await call(gateway, '/v1/api-keys', { method: 'POST', body: { name: 'sneaky', role: 'owner' }, apiKey: viewer.key });
    expect(response.status).toBe(403);
    const line = lines().find((l) => l.startsWith('Refused POST /v1/api-keys'));
    expect(line).toBe(
      `Refused POST /v1/api-keys (403 ${response.body.error.code}): API key Read-only dashboards (${viewer.id}) has role viewer, the route needs resources.write`,
    );
    expect(lines().join('\n')).not.toContain(viewer.key);
  });

  it('a model call by a viewer: 403, and a line', async () => {
    const response = await call(gateway, '/v1/chat/completions', {
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      apiKey: viewer.key,
    });
    expect(response.status).toBe(403);
    expect(lines()).toContain(
      `Refused POST /v1/chat/completions (403 ${response.body.error.code}): API key Read-only dashboards (${viewer.id}) has role viewer, the route needs models.call`,
    );
  });

  it('an unknown key: 401, and a line without the key that was sent', async () => {
    const bogus = 'gw-not-a-real-key-0123456789abcdef';
    const response = await call(gateway, '/v1/logs', { apiKey: bogus });
    expect(response.status).toBe(401);
    expect(lines().some((l) => l.startsWith('Refused GET /v1/logs (401 '))).toBe(true);
    expect(lines().join('\n')).not.toContain(bogus);
  });

  it('a forged session cookie: 401, and a line saying the signature does not match', async () => {
    const response = await call(gateway, '/v1/logs', { apiKey: null, headers: { cookie: `${SESSION_COOKIE}=forged.c2lnbmF0dXJl` } });
    expect(response.status).toBe(401);
    expect(lines()).toContain('Refused a dashboard session cookie: its signature does not match (forged, or signed with another GATEWAY_ENCRYPTION_KEY)');
  });
});
