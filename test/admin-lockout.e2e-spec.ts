/**
 * Nobody locks the admins out (issue 25, item 7): the bootstrap key (GATEWAY_ADMIN_KEY) and
 * the last usable admin key can be neither revoked nor demoted, whatever client asks (409);
 * the bootstrap key says so in `is_bootstrap`.
 */
import { call, createApiKey, expectError } from './support/e2e-helpers';
import { admin, startTestGateway, TestGateway } from './support/test-gateway';

describe('admin keys cannot all go', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('refuses to revoke or demote the bootstrap key (409 bootstrap_key), which stays usable, and names it in is_bootstrap', async () => {
    const listed = (await admin(gateway, 'GET', '/v1/api-keys?limit=500')).body.data as { id: string; is_bootstrap: boolean }[];
    const bootstrap = listed.filter((key) => key.is_bootstrap);
    expect(bootstrap).toHaveLength(1);
    const other = await createApiKey(gateway, { name: 'second admin', role: 'admin' });
    expect(other.is_bootstrap).toBe(false);

    // Even another admin (not only the bootstrap key itself) is refused.
    expectError(await call(gateway, `/v1/api-keys/${bootstrap[0].id}`, { method: 'DELETE', apiKey: other.key }), 409, { type: 'conflict_error', code: 'bootstrap_key', message: /GATEWAY_ADMIN_KEY/ });
    expectError(await call(gateway, `/v1/api-keys/${bootstrap[0].id}`, { method: 'PATCH', body: { role: 'user' }, apiKey: other.key }), 409, { type: 'conflict_error', code: 'bootstrap_key' });
    expect((await admin(gateway, 'GET', `/v1/api-keys/${bootstrap[0].id}`)).body).toMatchObject({ role: 'admin', is_bootstrap: true });
    expect((await call(gateway, '/v1/api-keys')).status).toBe(200);

    // A renamed bootstrap key is still fine; another admin can go while the bootstrap key stays.
    expect((await admin(gateway, 'PATCH', `/v1/api-keys/${bootstrap[0].id}`, { name: 'renamed bootstrap' })).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${other.id}`)).status).toBe(200);
  });

  it('refuses to revoke or demote the last usable admin key (409 last_admin_key), and lets exactly one of two admins revoking each other at once win', async () => {
    const first = await createApiKey(gateway, { name: 'admin one', role: 'admin' });
    const second = await createApiKey(gateway, { name: 'admin two', role: 'admin' });
    // As after a restart with another GATEWAY_ADMIN_KEY: the old bootstrap row is revoked.
    await gateway.dataSource.query(`update api_keys set revoked_at = now(), is_bootstrap = false where is_bootstrap`);

    const [one, two] = await Promise.all([
      call(gateway, `/v1/api-keys/${second.id}`, { method: 'DELETE', apiKey: first.key }),
      call(gateway, `/v1/api-keys/${first.id}`, { method: 'DELETE', apiKey: second.key }),
    ]);
    expect([one.status, two.status].sort()).toEqual([200, 409]);
    const [survivor, gone] = one.status === 200 ? [first, second] : [second, first];
    expectError(one.status === 409 ? one : two, 409, { type: 'conflict_error', code: 'last_admin_key', message: /create another admin key first/ });
    expect((await call(gateway, '/v1/api-keys', { apiKey: gone.key })).status).toBe(401);

    expectError(await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'DELETE', apiKey: survivor.key }), 409, { type: 'conflict_error', code: 'last_admin_key' });
    expectError(await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'PATCH', body: { role: 'user' }, apiKey: survivor.key }), 409, { type: 'conflict_error', code: 'last_admin_key' });
    expect((await call(gateway, '/v1/api-keys', { apiKey: survivor.key })).status).toBe(200);

    // With another admin, the survivor may go.
    const third = await call(gateway, '/v1/api-keys', { method: 'POST', body: { name: 'admin three', role: 'admin' }, apiKey: survivor.key });
    expect(third.status).toBe(201);
    expect((await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'PATCH', body: { role: 'user' }, apiKey: third.body.key })).status).toBe(200);
  });
});
