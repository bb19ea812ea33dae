import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createHash } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SecretBox, UndecryptableSecretError } from '../../common/crypto/secret-box';
import { GatewayError } from '../../common/errors/gateway-error';
import type { Environment } from '../../config/environment';
import { KeyLookupService } from '../keys/key-lookup.service';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { OidcClient, PendingSignIn } from './oidc-client';
import { groupsOf, membershipsOf, parseRoleMapping, RoleMapping } from '../../config/role-mapping';
import { SessionService } from './session.service';

/** How long a sign-in may take at the identity provider before `/auth/callback` refuses it. */
export const SIGN_IN_TTL_SECONDS = 600;

/** A started session, for the controller to set as a cookie. */
export interface StartedSession {
  cookie: string;
  maxAgeSeconds: number;
}

/** `GET /auth/session` (and the answer of `/auth/key-session`). */
export interface SessionView {
  kind: 'person' | 'api_key';
  user: { id: string; email: string | null; name: string | null } | null;
  api_key: { id: string; name: string } | null;
  role: string | null;
  /** Workspaces the session acts in, highest role first; `id` null: mapped, but no workspace of that slug exists yet. */
  workspaces: { id: string | null; slug: string; role: string }[];
  csrf_token: string;
  expires_at: string;
}

/**
 * Sign-in to the dashboard: OpenID Connect (authorization code with PKCE, through
 * OidcClient) and, for set-ups without an identity provider, an API key exchanged for the
 * same kind of session. People are created at their first sign-in; their groups become
 * workspace memberships through OIDC_ROLE_MAPPING.
 */
@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);
  private readonly oidc: OidcClient | null;
  private readonly mapping: RoleMapping;
  private readonly redirectUri: string | undefined;
  private readonly groupsClaim: string;

  constructor(
    private readonly sessions: SessionService,
    private readonly keys: KeyLookupService,
    private readonly secretBox: SecretBox,
    private readonly dataSource: DataSource,
    private readonly workspaces: WorkspaceDirectory,
    config: ConfigService<Environment, true>,
  ) {
    const issuer = config.get('OIDC_ISSUER_URL', { infer: true });
    const clientId = config.get('OIDC_CLIENT_ID', { infer: true });
    const clientSecret = config.get('OIDC_CLIENT_SECRET', { infer: true });
    this.oidc =
      issuer && clientId && clientSecret ? new OidcClient({ issuer, clientId, clientSecret, scopes: config.get('OIDC_SCOPES', { infer: true }) }) : null;
    this.mapping = parseRoleMapping(config.get('OIDC_ROLE_MAPPING', { infer: true }));
    this.redirectUri = config.get('OIDC_REDIRECT_URI', { infer: true });
    this.groupsClaim = config.get('OIDC_GROUPS_CLAIM', { infer: true });
  }

  get ssoEnabled(): boolean {
    return this.oidc !== null;
  }

  /** `/auth/login`: where to send the browser, and the sealed cookie that remembers this sign-in's state, nonce and PKCE verifier. */
  async startSignIn(base: string): Promise<{ location: string; signInCookie: string }> {
    const oidc = this.requireOidc();
    const { url, pending } = await oidc.authorizationRequest(this.redirectUri ?? `${base}/auth/callback`);
    const sealed = this.secretBox.encrypt(JSON.stringify({ ...pending, exp: Date.now() + SIGN_IN_TTL_SECONDS * 1000 }));
    return { location: url, signInCookie: sealed };
  }

  /** `/auth/callback`: checks the provider's answer against the sign-in cookie, makes or updates the person, starts a session. */
  async finishSignIn(search: string, signInCookie: string | null): Promise<StartedSession> {
    const oidc = this.requireOidc();
    const pending = this.openSignIn(signInCookie);
    const state = new URLSearchParams(search).get('state');
    if (state !== pending.state) {
      this.logger.warn('Refused a sign-in callback: its state does not match the sign-in started in this browser');
      throw GatewayError.invalidRequest(
        'The sign-in answer does not belong to the sign-in started in this browser (state mismatch). Start again from the dashboard.',
        'state',
        'state_mismatch',
      );
    }
    let identity;
    try {
      identity = await oidc.redeem(search, pending);
    } catch (error) {
      if (error instanceof GatewayError) this.logger.warn(`Refused a sign-in callback (${error.code}): ${error.message}`);
      throw error;
    }
    const groups = groupsOf(identity.claims[this.groupsClaim]);
    const memberships = membershipsOf(groups, this.mapping);
    if (memberships.length === 0) {
      this.logger.warn(`Refused sign-in of ${identity.subject} at ${identity.issuer}: none of their ${groups.length} groups is in OIDC_ROLE_MAPPING`);
      throw GatewayError.permission(
        `You signed in at the identity provider, but none of your groups (claim '${this.groupsClaim}': ${groups.join(', ') || 'none'}) is given a role on this gateway. Ask an administrator to map one in OIDC_ROLE_MAPPING.`,
        'no_role_mapped',
      );
    }
    const email = typeof identity.claims.email === 'string' ? identity.claims.email : null;
    const name = typeof identity.claims.name === 'string' ? identity.claims.name : null;
    const [user]: { id: string }[] = await this.dataSource.query(
      `insert into users (issuer, subject, email, name) values ($1, $2, $3, $4)
       on conflict (issuer, subject) do update set email = excluded.email, name = excluded.name, last_sign_in_at = now()
       returning id`,
      [identity.issuer, identity.subject, email, name],
    );
    const { cookie } = await this.sessions.create({ userId: user.id }, memberships, new Date(Date.now() + this.sessions.ttlMs));
    this.logger.log(`Signed in ${email ?? identity.subject} (user ${user.id}) with ${memberships.map((m) => `${m.workspace} ${m.role}`).join(', ')}`);
    return { cookie, maxAgeSeconds: Math.floor(this.sessions.ttlMs / 1000) };
  }

  /** `/auth/key-session`: a live API key exchanged for a session cookie, which ends when the key is revoked or expires. */
  async keySession(secret: string): Promise<StartedSession & { view: SessionView }> {
    const hash = createHash('sha256').update(secret).digest('hex');
    const key = await this.keys.apiKeyByHash(hash);
    if (!key || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) {
      this.logger.warn('Refused an API-key sign-in: the key is unknown, revoked or expired');
      throw GatewayError.authentication('Invalid, revoked or expired gateway API key');
    }
    const ttlMs = Math.min(this.sessions.ttlMs, key.expiresAt ? key.expiresAt.getTime() - Date.now() : Infinity);
    const expiresAt = new Date(Date.now() + ttlMs);
    const { cookie } = await this.sessions.create({ apiKeyHash: hash }, [], expiresAt);
    const view = await this.view(cookie);
    return { cookie, maxAgeSeconds: Math.floor(ttlMs / 1000), view: view! };
  }

  /** `/auth/session`: who the cookie signs in, or null. */
  async view(cookieValue: string | null): Promise<SessionView | null> {
    const found = await this.sessions.findByValue(cookieValue);
    if (!found) return null;
    const { facts, token } = found;
    const common = { csrf_token: this.sessions.csrfTokenOf(token), expires_at: facts.expiresAt.toISOString() };
    if (facts.apiKeyHash !== null) {
      const key = await this.sessions.principalOf(facts);
      if (!key) return null;
      return {
        kind: 'api_key',
        user: null,
        api_key: { id: key.id, name: key.name },
        role: key.role,
        workspaces: await this.keyWorkspaces(key.workspaceId, key.role),
        ...common,
      };
    }
    const workspaces = (await this.sessions.resolve(facts.memberships)).map((m) => ({ id: m.id, slug: m.slug, role: m.role }));
    const acting = workspaces.find((w) => w.id !== null);
    return {
      kind: 'person',
      user: { id: facts.userId!, email: facts.email, name: facts.name },
      api_key: null,
      role: acting?.role ?? null,
      workspaces,
      ...common,
    };
  }

  /** Ends the session of a cookie (the controller has checked its CSRF token). */
  async signOut(cookieHeader: string | undefined, csrfToken: string | undefined): Promise<void> {
    const found = await this.sessions.find(cookieHeader);
    if (!found) return; // Already over: clearing the cookie is all there is to do.
    if (!csrfToken || csrfToken !== this.sessions.csrfTokenOf(found.token)) {
      throw GatewayError.permission("Signing out needs the session's CSRF token in x-csrf-token (GET /auth/session gives it)", 'csrf_token_invalid');
    }
    await this.sessions.end(found.facts.id);
    this.logger.log(`Signed out dashboard session ${found.facts.id.slice(0, 12)}`);
  }

  private async keyWorkspaces(workspaceId: string, role: string): Promise<SessionView['workspaces']> {
    const workspace = await this.workspaces.byId(workspaceId);
    return workspace ? [{ id: workspace.id, slug: workspace.slug, role }] : [];
  }

  private requireOidc(): OidcClient {
    if (!this.oidc) {
      throw GatewayError.notFound(
        'Single sign-on is not configured on this gateway: set OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET (README, "Single sign-on"), or sign in with an API key',
        'sso_not_configured',
      );
    }
    return this.oidc;
  }

  private openSignIn(sealed: string | null): PendingSignIn {
    const expired = () =>
      GatewayError.invalidRequest(
        'This sign-in has expired, was already completed, or was started in another browser. Start again from the dashboard.',
        null,
        'sign_in_expired',
      );
    if (sealed === null) {
      this.logger.warn('Refused a sign-in callback: no sign-in cookie (expired, already used, or another browser)');
      throw expired();
    }
    let pending: PendingSignIn & { exp: number };
    try {
      pending = JSON.parse(this.secretBox.decrypt(sealed));
    } catch (error) {
      this.logger.warn(
        `Refused a sign-in callback: its sign-in cookie ${error instanceof UndecryptableSecretError ? 'was altered or sealed with another key' : 'cannot be read'}`,
      );
      throw expired();
    }
    if (typeof pending.exp !== 'number' || pending.exp <= Date.now()) {
      this.logger.warn('Refused a sign-in callback: the sign-in cookie expired');
      throw expired();
    }
    return pending;
  }
}
