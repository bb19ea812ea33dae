/**
 * Nobody locks the organisation out (issue 25, item 7; issue 26): the bootstrap key
 * (GATEWAY_ADMIN_KEY, an organisation owner) and the last usable owner key can be neither
 * revoked nor demoted, whatever client asks (409); the bootstrap key says so in `is_bootstrap`.
 */
import { call, createApiKey, expectError } from '../support/e2e-helpers';
import { admin, startTestGateway, TestGateway } from '../support/test-gateway';

describe('owner keys cannot all go', () => {
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
    const other = await createApiKey(gateway, { name: 'second owner', role: 'owner' });
    expect(other.is_bootstrap).toBe(false);

    // Even another owner (not only the bootstrap key itself) is refused.
    expectError(await call(gateway, `/v1/api-keys/${bootstrap[0].id}`, { method: 'DELETE', apiKey: other.key }), 409, {
      type: 'conflict_error',
      code: 'bootstrap_key',
      message: /GATEWAY_ADMIN_KEY/,
    });
    expectError(await call(gateway, `/v1/api-keys/${bootstrap[0].id}`, { method: 'PATCH', body: { role: 'member' }, apiKey: other.key }), 409, {
      type: 'conflict_error',
      code: 'bootstrap_key',
    });
    expect((await admin(gateway, 'GET', `/v1/api-keys/${bootstrap[0].id}`)).body).toMatchObject({ role: 'owner', is_bootstrap: true, workspace: 'default' });
    // A workspace admin may not touch an owner's key at all.
    const workspaceAdmin = await createApiKey(gateway, { name: 'workspace admin', role: 'admin' });
    expectError(await call(gateway, `/v1/api-keys/${other.id}`, { method: 'DELETE', apiKey: workspaceAdmin.key }), 403, {
      type: 'permission_error',
      code: 'role_not_allowed',
    });
    expect((await call(gateway, '/v1/api-keys')).status).toBe(200);

    // A renamed bootstrap key is still fine; another owner can go while the bootstrap key stays.
    expect((await admin(gateway, 'PATCH', `/v1/api-keys/${bootstrap[0].id}`, { name: 'renamed bootstrap' })).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${other.id}`)).status).toBe(200);
  });

  it('refuses to revoke or demote the last usable owner key (409 last_owner_key), and lets exactly one of two owners revoking each other at once win', async () => {
    // The owners left by the test above go first.
    await gateway.dataSource.query(`update api_keys set revoked_at = now() where role = 'owner' and not is_bootstrap`);
    const first = await createApiKey(gateway, { name: 'owner one', role: 'owner' });
    const second = await createApiKey(gateway, { name: 'owner two', role: 'owner' });
    // As after a restart with another GATEWAY_ADMIN_KEY: the old bootstrap row is revoked.
    await gateway.dataSource.query(`update api_keys set revoked_at = now(), is_bootstrap = false where is_bootstrap`);

    const [one, two] = await Promise.all([
      call(gateway, `/v1/api-keys/${second.id}`, { method: 'DELETE', apiKey: first.key }),
      call(gateway, `/v1/api-keys/${first.id}`, { method: 'DELETE', apiKey: second.key }),
    ]);
    expect([one.status, two.status].sort()).toEqual([200, 409]);
    const [survivor, gone] = one.status === 200 ? [first, second] : [second, first];
    expectError(one.status === 409 ? one : two, 409, { type: 'conflict_error', code: 'last_owner_key', message: /create another owner key first/ });
    expect((await call(gateway, '/v1/api-keys', { apiKey: gone.key })).status).toBe(401);

    expectError(await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'DELETE', apiKey: survivor.key }), 409, {
      type: 'conflict_error',
      code: 'last_owner_key',
    });
    expectError(await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'PATCH', body: { role: 'admin' }, apiKey: survivor.key }), 409, {
      type: 'conflict_error',
      code: 'last_owner_key',
    });
    expect((await call(gateway, '/v1/api-keys', { apiKey: survivor.key })).status).toBe(200);

    // With another owner, the survivor may go.
    const third = await call(gateway, '/v1/api-keys', { method: 'POST', body: { name: 'owner three', role: 'owner' }, apiKey: survivor.key });
    expect(third.status).toBe(201);
    const demoted = await call(gateway, `/v1/api-keys/${survivor.id}`, { method: 'PATCH', body: { role: 'user' }, apiKey: third.body.key });
    expect(demoted.status).toBe(200);
    expect(demoted.body.role).toBe('member');
  });
});
