/**
 * Dashboard sign-in with OpenID Connect (CONTRACT section 13) against a real OpenID provider
 * (`oidc-provider`, test/support/oidc-provider-server.mjs), walked with fetch and a cookie jar as a
 * browser would: the login redirect (PKCE S256, state, nonce), the provider's sign-in, the
 * callback and its session cookie; what the session may read and change (CSRF token on
 * writes, no model calls), groups mapped to workspaces (one created later), logout; and
 * every way a sign-in can be tampered with. Then API-key sign-in.
 */
import { randomBytes } from 'node:crypto';
import { call, expectError, waitFor } from '../support/e2e-helpers';
import { startGatewayProcess } from '../support/gateway-process';
import { freePort, OidcTestProvider, startOidcProvider } from '../support/oidc-provider';
import { admin, startTestGateway, TEST_ADMIN_KEY, TestGateway } from '../support/test-gateway';

jest.setTimeout(60_000);

const CLIENT = { client_id: 'ai-gateway', client_secret: 'gateway-client-secret-0123456789' };
const MAPPING = {
  'search-admins': { workspace: 'search', role: 'admin' },
  'later-viewers': { workspace: 'later', role: 'viewer' },
  'platform-owners': { role: 'owner' },
};

/** Cookies per origin, as a browser keeps them (Max-Age=0 deletes). */
class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>();

  store(url: string, response: Response): void {
    const cookies = this.of(url);
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=thu, 01 jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  header(url: string): string {
    return [...this.of(url)].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  get(url: string, name: string): string | undefined {
    return this.of(url).get(name);
  }

  set(url: string, name: string, value: string): void {
    this.of(url).set(name, value);
  }

  delete(url: string, name: string): void {
    this.of(url).delete(name);
  }

  private of(url: string): Map<string, string> {
    const origin = new URL(url).origin;
    if (!this.jar.has(origin)) this.jar.set(origin, new Map());
    return this.jar.get(origin)!;
  }
}

/** One request with the jar's cookies, redirects not followed. */
async function go(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, { ...init, redirect: 'manual', headers: { cookie: jar.header(url), ...(init.headers as Record<string, string>) } });
  jar.store(url, response);
  return response;
}

describe('single sign-on with OpenID Connect', () => {
  let gateway: TestGateway;
  let provider: OidcTestProvider;
  let stranger: OidcTestProvider;
  /** Sessions are signed with a key derived from this: every instance has the same. */
  const encryptionKey = randomBytes(32).toString('hex');
  let oidcEnv: Record<string, string>;

  /** A call to the gateway with the session cookie of `jar` (and no API key). */
  const withCookie = (jar: CookieJar, path: string, options: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    call(gateway, path, { ...options, apiKey: null, headers: { cookie: jar.header(gateway.url), ...options.headers } });

  /** `/auth/login` at the gateway: the provider's authorization URL it redirects to. */
  const login = async (jar: CookieJar) => {
    const response = await go(jar, `${gateway.url}/auth/login`);
    expect(response.status).toBe(302);
    return new URL(response.headers.get('location')!);
  };

  /** Signs `account` in at the provider the URL names; returns the callback URL it redirects to (not yet opened). */
  const atProvider = async (jar: CookieJar, authorizationUrl: URL, account: string) => {
    let response = await go(jar, authorizationUrl.href);
    expect(response.status).toBe(303);
    const interaction = new URL(response.headers.get('location')!, authorizationUrl);
    await go(jar, interaction.href);
    response = await go(jar, interaction.href, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `login=${account}` });
    expect(response.status).toBe(303);
    let next = new URL(response.headers.get('location')!, interaction);
    while (next.origin !== gateway.url) {
      response = await go(jar, next.href);
      expect([302, 303]).toContain(response.status);
      next = new URL(response.headers.get('location')!, next);
    }
    expect(next.pathname).toBe('/auth/callback');
    return next;
  };

  /** The whole sign-in; returns the jar holding the session cookie. */
  const signIn = async (account: string) => {
    const jar = new CookieJar();
    const callback = await atProvider(jar, await login(jar), account);
    const response = await go(jar, callback.href);
    expect({ status: response.status, location: response.headers.get('location') }).toEqual({ status: 302, location: '/dashboard' });
    return { jar, callback, response };
  };

  const csrfOf = async (jar: CookieJar) => {
    const session = await withCookie(jar, '/auth/session');
    expect(session.status).toBe(200);
    return session.body.csrf_token as string;
  };

  beforeAll(async () => {
    const [port, strangerPort] = await Promise.all([freePort(), freePort()]);
    oidcEnv = {
      OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
      OIDC_CLIENT_ID: CLIENT.client_id,
      OIDC_CLIENT_SECRET: CLIENT.client_secret,
      OIDC_SCOPES: 'openid email profile groups',
      OIDC_ROLE_MAPPING: JSON.stringify(MAPPING),
    };
    gateway = await startTestGateway({ ...oidcEnv, GATEWAY_ENCRYPTION_KEY: encryptionKey });
    const client = { ...CLIENT, redirect_uris: [`${gateway.url}/auth/callback`] };
    // The stranger is another issuer that knows the same client: its answers must still be refused.
    [provider, stranger] = await Promise.all([startOidcProvider(port, [client]), startOidcProvider(strangerPort, [client])]);
    expect((await admin(gateway, 'POST', '/v1/workspaces', { name: 'Search', slug: 'search' })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/api-keys', { name: 'search bot', role: 'member', workspace: 'search' })).status).toBe(201);
    expect((await admin(gateway, 'POST', '/v1/api-keys', { name: 'default bot', role: 'member' })).status).toBe(201);
  });

  afterAll(async () => {
    await gateway?.close();
    await provider?.close();
    await stranger?.close();
  });

  it('tells the dashboard that SSO is on, and starts the code flow with PKCE S256, state and nonce in a sealed HttpOnly cookie', async () => {
    expect((await call(gateway, '/auth/config', { apiKey: null })).body).toEqual({ sso: true, login_url: '/auth/login', key_sign_in: true });
    const jar = new CookieJar();
    const response = await go(jar, `${gateway.url}/auth/login`);
    expect(response.status).toBe(302);
    const url = new URL(response.headers.get('location')!);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe(CLIENT.client_id);
    expect(url.searchParams.get('redirect_uri')).toBe(`${gateway.url}/auth/callback`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gateway_sign_in='))!;
    expect(cookie).toMatch(/; Path=\/auth; Max-Age=600; HttpOnly; SameSite=Lax$/);
    // Sealed: neither the state nor the verifier can be read from it.
    expect(cookie).not.toContain(url.searchParams.get('state')!);
    // A second login has fresh values.
    const again = new URL((await go(new CookieJar(), `${gateway.url}/auth/login`)).headers.get('location')!);
    expect(again.searchParams.get('state')).not.toBe(url.searchParams.get('state'));
    expect(again.searchParams.get('code_challenge')).not.toBe(url.searchParams.get('code_challenge'));
  });

  it('signs a person in: created at first sign-in, a session cookie, their groups as workspaces and roles', async () => {
    const { jar, response } = await signIn('alice');
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gateway_session='))!;
    expect(cookie).toMatch(/^gateway_session=[^;]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    expect(response.headers.getSetCookie().some((c) => /^gateway_sign_in=; Path=\/auth; Max-Age=0/.test(c))).toBe(true);

    const session = await withCookie(jar, '/auth/session');
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({
      kind: 'person',
      user: { email: 'alice@example.com', name: 'Alice Admin' },
      role: 'admin',
      workspaces: [
        { slug: 'search', role: 'admin', id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
        { slug: 'later', role: 'viewer', id: null },
      ],
      csrf_token: expect.stringMatching(/^[\w-]{43}$/),
    });
    const users = await gateway.dataSource.query('select issuer, subject, email, last_sign_in_at from users');
    expect(users).toEqual([expect.objectContaining({ issuer: provider.issuer, subject: 'alice', email: 'alice@example.com' })]);
    // Stored by hash only: the cookie's token is nowhere in the table.
    const [row] = await gateway.dataSource.query('select id, csrf_token_hash, memberships from sessions');
    expect(row.id).toMatch(/^[0-9a-f]{64}$/);
    expect(row.memberships).toEqual([
      { workspace: 'search', role: 'admin' },
      { workspace: 'later', role: 'viewer' },
    ]);
    expect(decodeURIComponent(jar.get(gateway.url, 'gateway_session')!)).not.toContain(row.id);

    // A second sign-in finds the same person.
    await signIn('alice');
    expect(await gateway.dataSource.query('select count(*)::int as n from users')).toEqual([{ n: 1 }]);
  });

  it("reads its workspace's data with the cookie; writes need the CSRF token; models need an API key", async () => {
    const { jar } = await signIn('alice');
    const keys = await withCookie(jar, '/v1/api-keys');
    expect(keys.status).toBe(200);
    expect(keys.body.data.map((k: any) => k.name)).toEqual(['search bot']);

    const body = { name: 'made by alice', role: 'member' };
    expectError(await withCookie(jar, '/v1/api-keys', { method: 'POST', body }), 403, {
      type: 'permission_error',
      code: 'csrf_token_invalid',
      message: /x-csrf-token/,
    });
    expectError(await withCookie(jar, '/v1/api-keys', { method: 'POST', body, headers: { 'x-csrf-token': 'wrong' } }), 403, {
      type: 'permission_error',
      code: 'csrf_token_invalid',
    });
    // Another session's token is not this one's.
    const other = await signIn('alice');
    expectError(await withCookie(jar, '/v1/api-keys', { method: 'POST', body, headers: { 'x-csrf-token': await csrfOf(other.jar) } }), 403, {
      type: 'permission_error',
      code: 'csrf_token_invalid',
    });
    const created = await withCookie(jar, '/v1/api-keys', { method: 'POST', body, headers: { 'x-csrf-token': await csrfOf(jar) } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'made by alice', workspace: 'search', role: 'member' });

    const chat = await withCookie(jar, '/v1/chat/completions', {
      method: 'POST',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      headers: { 'x-csrf-token': await csrfOf(jar) },
    });
    expectError(chat, 403, { type: 'permission_error', code: 'api_key_required', message: /needs an API key/ });
    // An owner-only route: alice is an admin.
    expectError(
      await withCookie(jar, '/v1/workspaces', { method: 'POST', body: { name: 'X', slug: 'x' }, headers: { 'x-csrf-token': await csrfOf(jar) } }),
      403,
      { type: 'permission_error' },
    );
  });

  it('applies a group mapped to a workspace once that workspace is created, in the same session', async () => {
    const { jar } = await signIn('alice');
    expectError(await withCookie(jar, '/v1/logs', { headers: { 'x-gateway-workspace': 'later' } }), 404, {
      type: 'not_found_error',
      code: 'workspace_not_found',
    });
    expect((await admin(gateway, 'POST', '/v1/workspaces', { name: 'Later', slug: 'later' })).status).toBe(201);
    const logs = await withCookie(jar, '/v1/logs', { headers: { 'x-gateway-workspace': 'later' } });
    expect(logs.status).toBe(200);
    // A viewer there: reads logs, not keys.
    expectError(await withCookie(jar, '/v1/api-keys', { headers: { 'x-gateway-workspace': 'later' } }), 403, { type: 'permission_error' });
    const session = await withCookie(jar, '/auth/session');
    expect(session.body.workspaces).toEqual([
      { slug: 'search', role: 'admin', id: expect.any(String) },
      { slug: 'later', role: 'viewer', id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    ]);
  });

  it('makes an owner of a group mapped to owner, and refuses a person whose groups map to nothing', async () => {
    const { jar } = await signIn('olga');
    const workspaces = await withCookie(jar, '/v1/workspaces');
    expect(workspaces.status).toBe(200);
    expect(workspaces.body.data.map((w: any) => w.slug).sort()).toEqual(['default', 'later', 'search']);

    const nobody = new CookieJar();
    const callback = await atProvider(nobody, await login(nobody), 'nobody');
    const refused = await go(nobody, callback.href, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error).toMatchObject({ code: 'no_role_mapped', message: expect.stringContaining('unmapped-group') });
    expect(nobody.get(gateway.url, 'gateway_session')).toBeUndefined();
  });

  it('logs out on the server: the cookie stops working, and logout needs the CSRF token', async () => {
    const { jar } = await signIn('alice');
    const cookie = jar.header(gateway.url);
    expectError(await withCookie(jar, '/auth/logout', { method: 'POST' }), 403, { type: 'permission_error', code: 'csrf_token_invalid' });
    const out = await go(jar, `${gateway.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': await csrfOf(jar) } });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()).toContainEqual(expect.stringMatching(/^gateway_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/));
    expect(jar.get(gateway.url, 'gateway_session')).toBeUndefined();
    // The old cookie, sent again (say, kept by an attacker), is refused: the session ended on the server.
    const old = await call(gateway, '/v1/api-keys', { apiKey: null, headers: { cookie } });
    expectError(old, 401, { type: 'authentication_error', code: 'invalid_session' });
    expect((await call(gateway, '/auth/session', { apiKey: null, headers: { cookie } })).status).toBe(401);
    const [{ n }] = await gateway.dataSource.query('select count(*)::int as n from sessions where revoked_at is not null');
    expect(n).toBe(1);
  });

  it('refuses a forged or expired session cookie with 401', async () => {
    const forged = `gateway_session=${randomBytes(32).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    expectError(await call(gateway, '/v1/api-keys', { apiKey: null, headers: { cookie: forged } }), 401, {
      type: 'authentication_error',
      code: 'invalid_session',
    });
    const { jar } = await signIn('alice');
    const [token] = decodeURIComponent(jar.get(gateway.url, 'gateway_session')!).split('.');
    // A real token with a made-up signature.
    expectError(await call(gateway, '/v1/api-keys', { apiKey: null, headers: { cookie: `gateway_session=${token}.${'A'.repeat(43)}` } }), 401, {
      type: 'authentication_error',
      code: 'invalid_session',
    });
    // Expired (before the gateway has cached it).
    const { jar: late } = await signIn('alice');
    await gateway.dataSource.query(`update sessions set expires_at = now() - interval '1 second' where created_at = (select max(created_at) from sessions)`);
    expectError(await withCookie(late, '/v1/api-keys'), 401, { type: 'authentication_error', code: 'invalid_session' });
    // No cookie and no key: the usual 401.
    expectError(await call(gateway, '/v1/api-keys', { apiKey: null }), 401, { type: 'authentication_error' });
  });

  it('refuses a tampered state, a replayed code, a wrong nonce and an unknown issuer, with a page a person can read', async () => {
    const sessions = async () => (await gateway.dataSource.query('select count(*)::int as n from sessions'))[0].n as number;
    const before = await sessions();
    // State: the answer names another sign-in than this browser's.
    let jar = new CookieJar();
    let callback = await atProvider(jar, await login(jar), 'alice');
    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'forged-state-value-0123456789');
    let response = await go(jar, tampered.href, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const page = await response.text();
    expect(page).toContain('state mismatch');
    expect(page).toContain('Back to the dashboard');
    expect(jar.get(gateway.url, 'gateway_session')).toBeUndefined();

    // Code replay: the answer used once, then again with the sign-in cookie it came with.
    jar = new CookieJar();
    callback = await atProvider(jar, await login(jar), 'alice');
    const signInCookie = jar.get(gateway.url, 'gateway_sign_in')!;
    expect((await go(jar, callback.href)).status).toBe(302);
    response = await go(jar, callback.href, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error.code).toBe('sign_in_expired');
    jar.set(gateway.url, 'gateway_sign_in', signInCookie);
    response = await go(jar, callback.href, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ code: 'invalid_grant', message: expect.stringContaining('already used') });

    // Nonce: the authorization request altered on its way to the provider.
    jar = new CookieJar();
    const withOtherNonce = await login(jar);
    withOtherNonce.searchParams.set('nonce', 'an-other-nonce-0123456789abcdef');
    callback = await atProvider(jar, withOtherNonce, 'alice');
    response = await go(jar, callback.href, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error).toMatchObject({ code: 'sign_in_invalid', message: expect.stringMatching(/nonce/) });

    // Issuer: the same request answered by another provider (which knows this client too).
    jar = new CookieJar();
    const elsewhere = await login(jar);
    const strangerUrl = new URL(elsewhere.pathname + elsewhere.search, stranger.issuer);
    callback = await atProvider(jar, strangerUrl, 'alice');
    expect(callback.searchParams.get('iss')).toBe(stranger.issuer);
    response = await go(jar, callback.href, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as any).error).toMatchObject({ code: 'sign_in_invalid', message: expect.stringMatching(/iss/) });

    // A callback with nothing at all.
    response = await go(new CookieJar(), `${gateway.url}/auth/callback`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    // None of these made a session.
    expect(await sessions()).toBe(before + 1); // the one sign-in that went through before its replay
  });

  it('signs in with an API key for set-ups without an identity provider; logout and revoking the key end it', async () => {
    expectError(await call(gateway, '/auth/key-session', { apiKey: null, body: { key: 'gk-not-a-key' } }), 401, { type: 'authentication_error' });
    expectError(await call(gateway, '/auth/key-session', { apiKey: null, body: {} }), 400, { type: 'invalid_request_error' });

    const jar = new CookieJar();
    let response = await go(jar, `${gateway.url}/auth/key-session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: gateway.adminKey }),
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as any;
    expect(view).toMatchObject({ kind: 'api_key', role: 'owner', user: null, api_key: { name: expect.any(String) }, csrf_token: expect.any(String) });
    expect(JSON.stringify(view)).not.toContain(gateway.adminKey);
    expect(response.headers.getSetCookie()[0]).toMatch(/^gateway_session=[^;]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    expect((await withCookie(jar, '/v1/api-keys')).status).toBe(200);
    expectError(await withCookie(jar, '/v1/api-keys', { method: 'POST', body: { name: 'x', role: 'member' } }), 403, {
      type: 'permission_error',
      code: 'csrf_token_invalid',
    });
    expect(
      (
        await withCookie(jar, '/v1/api-keys', {
          method: 'POST',
          body: { name: 'by key session', role: 'member' },
          headers: { 'x-csrf-token': view.csrf_token },
        })
      ).status,
    ).toBe(201);
    expectError(
      await withCookie(jar, '/v1/chat/completions', { method: 'POST', body: { model: 'm', messages: [] }, headers: { 'x-csrf-token': view.csrf_token } }),
      403,
      { type: 'permission_error', code: 'api_key_required' },
    );

    response = await go(jar, `${gateway.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': view.csrf_token } });
    expect(response.status).toBe(200);
    expect(jar.get(gateway.url, 'gateway_session')).toBeUndefined();
    expect((await withCookie(jar, '/auth/session')).status).toBe(401);

    // A key's session lasts as long as the key.
    const key = (await admin(gateway, 'POST', '/v1/api-keys', { name: 'short-lived', role: 'admin' })).body;
    const keyJar = new CookieJar();
    await go(keyJar, `${gateway.url}/auth/key-session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: key.key }),
    });
    expect((await withCookie(keyJar, '/v1/api-keys')).status).toBe(200);
    expect((await admin(gateway, 'DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
    expectError(await withCookie(keyJar, '/v1/api-keys'), 401, { type: 'authentication_error', code: 'invalid_session' });
  });

  it('ends a session on every instance at logout, and loads openid-client in the built gateway', async () => {
    // A second instance on the same database, as its own process running the build (dist/), with a long cache.
    const second = await startGatewayProcess({
      ...oidcEnv,
      DATABASE_URL: gateway.databaseUrl,
      GATEWAY_ADMIN_KEY: TEST_ADMIN_KEY,
      GATEWAY_ENCRYPTION_KEY: encryptionKey,
      KEY_CACHE_TTL_MS: '600000',
    });
    try {
      // Node's own require loads the ESM-only openid-client there: the login redirects to the provider.
      const redirect = await fetch(`${second.url}/auth/login`, { redirect: 'manual' });
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get('location')!.startsWith(`${provider.issuer}/auth?`)).toBe(true);

      const { jar } = await signIn('alice');
      const cookie = jar.header(gateway.url);
      const onSecond = () => fetch(`${second.url}/v1/api-keys`, { headers: { cookie } });
      expect((await onSecond()).status).toBe(200); // now cached there
      const out = await go(jar, `${gateway.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': await csrfOf(jar) } });
      expect(out.status).toBe(200);
      // Told through the database (NOTIFY), long before its cache would expire.
      await waitFor(async () => (await onSecond()).status === 401, 5_000);
    } finally {
      await second.stop();
    }
  });

  it('says so when single sign-on is not configured', async () => {
    const plain = await startTestGateway();
    try {
      expect((await call(plain, '/auth/config', { apiKey: null })).body).toMatchObject({ sso: false, login_url: null });
      const response = await call(plain, '/auth/login', { apiKey: null });
      expectError(response, 404, { type: 'not_found_error', code: 'sso_not_configured', message: /OIDC_ISSUER_URL/ });
    } finally {
      await plain.close();
    }
  });
});
