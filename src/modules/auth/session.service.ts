import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Repository } from 'typeorm';
import { GatewayError } from '../../common/errors/gateway-error';
import { LookupCache } from '../../common/lookup-cache';
import type { Environment } from '../../config/environment';
import type { CookieSession, SessionAuthenticator } from '../keys/authenticate';
import { KeyChangeNotifier } from '../keys/key-change-notifier';
import { KeyLookupService } from '../keys/key-lookup.service';
import { ApiKeyPrincipal } from '../../context/caller';
import type { Role } from '../workspaces/roles';
import { WorkspaceDirectory } from '../workspaces/workspace-directory';
import { cookieOf, CookieSigner, SESSION_COOKIE } from './cookies';
import { SessionEntity } from './entities/session.entity';
import type { MappedMembership } from '../../config/role-mapping';

/** A session as the request path needs it, cached by id. */
export interface SessionFacts {
  id: string;
  userId: string | null;
  email: string | null;
  name: string | null;
  apiKeyHash: string | null;
  memberships: MappedMembership[];
  csrfTokenHash: string;
  expiresAt: Date;
}

/** A workspace a person's groups name, with where it stands now: `id` null until a workspace of that slug exists. */
export interface ResolvedMembership {
  id: string | null;
  slug: string;
  role: Role;
}

/** Sessions are read from the database at most this often per instance; a logout anywhere clears them everywhere at once (KeyChangeNotifier). */
const SESSION_CACHE_MS = 30_000;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/**
 * The dashboard's server-side sessions: made at sign-in (OpenID Connect or an API key),
 * found again from the cookie on each call (a signed token whose SHA-256 is the row's id),
 * ended by logout, expiry, or, for a key's session, by the key's revocation. Sessions are
 * cached in memory, so the dashboard costs no database trip per call.
 */
@Injectable()
export class SessionService implements SessionAuthenticator {
  private readonly logger = new Logger(SessionService.name);
  private readonly signer: CookieSigner;
  private readonly cache: LookupCache<SessionFacts>;
  readonly ttlMs: number;

  constructor(
    @InjectRepository(SessionEntity) private readonly sessions: Repository<SessionEntity>,
    private readonly keys: KeyLookupService,
    private readonly workspaces: WorkspaceDirectory,
    private readonly keyChanges: KeyChangeNotifier,
    config: ConfigService<Environment, true>,
  ) {
    this.signer = new CookieSigner(config.get('GATEWAY_ENCRYPTION_KEY', { infer: true }));
    this.cache = new LookupCache(Math.min(SESSION_CACHE_MS, config.get('KEY_CACHE_TTL_MS', { infer: true })), 5_000);
    this.ttlMs = config.get('SESSION_TTL_HOURS', { infer: true }) * 3600_000;
    keyChanges.onChange('sessions', () => this.cache.expireAll());
  }

  /** Starts a session; returns the cookie's value and the session's CSRF token. */
  async create(
    owner: { userId: string } | { apiKeyHash: string },
    memberships: MappedMembership[],
    expiresAt: Date,
  ): Promise<{ cookie: string; csrfToken: string }> {
    const token = randomBytes(32).toString('base64url');
    const csrfToken = this.signer.csrfToken(token);
    await this.sessions.insert({
      id: sha256(token),
      userId: 'userId' in owner ? owner.userId : null,
      apiKeyHash: 'apiKeyHash' in owner ? owner.apiKeyHash : null,
      memberships,
      csrfTokenHash: sha256(csrfToken),
      expiresAt,
    });
    // Sessions long expired are swept at each sign-in: there are few, and the index on expires_at finds them.
    void this.sessions.query(`delete from sessions where expires_at < now() - interval '1 day'`).catch(() => undefined);
    return { cookie: this.signer.sign(token), csrfToken };
  }

  /** The session of the request's cookie (undefined: no cookie; null: forged, expired or ended), with the principal it acts as. */
  async sessionOf(headers: IncomingHttpHeaders): Promise<CookieSession | null | undefined> {
    const found = await this.find(headers.cookie);
    if (!found) return found;
    const { facts, token } = found;
    const principal = await this.principalOf(facts);
    if (!principal) return null;
    const csrfHash = Buffer.from(facts.csrfTokenHash);
    return {
      principal,
      csrfMatches: (given) => {
        if (!given) return false;
        const hash = Buffer.from(sha256(given));
        return hash.length === csrfHash.length && timingSafeEqual(hash, csrfHash) && given === this.signer.csrfToken(token);
      },
    };
  }

  /** The live session named by a `Cookie` header, with its token. */
  find(cookieHeader: string | undefined): Promise<{ facts: SessionFacts; token: string } | null | undefined> {
    return this.findByValue(cookieOf(cookieHeader, SESSION_COOKIE));
  }

  /** The live session of a session cookie's value (undefined: none given). */
  async findByValue(value: string | null): Promise<{ facts: SessionFacts; token: string } | null | undefined> {
    if (value === null) return undefined;
    const token = this.signer.verify(value);
    if (token === null) {
      this.logger.warn('Refused a dashboard session cookie: its signature does not match (forged, or signed with another GATEWAY_ENCRYPTION_KEY)');
      return null;
    }
    const id = sha256(token);
    const facts = await this.cache.get(id, () =>
      this.load(id).catch(() => {
        throw GatewayError.unavailable('The gateway cannot check dashboard sessions right now: its database is unreachable');
      }),
    );
    if (!facts) {
      this.logger.warn(`Refused dashboard session ${id.slice(0, 12)}: signed out or unknown`);
      return null;
    }
    if (facts.expiresAt.getTime() <= Date.now()) {
      this.logger.warn(`Refused dashboard session ${id.slice(0, 12)}: expired at ${facts.expiresAt.toISOString()}`);
      return null;
    }
    return { facts, token };
  }

  /**
   * Who a session acts as. A key's session is the key itself (null once it is revoked or
   * expired). A person's memberships name workspaces by slug, looked up now, so a mapping
   * to a workspace created after the sign-in applies once it exists; with none existing yet,
   * the person may sign in but act nowhere (403).
   */
  async principalOf(facts: SessionFacts): Promise<ApiKeyPrincipal | null> {
    if (facts.apiKeyHash !== null) {
      const key = await this.keys.apiKeyByHash(facts.apiKeyHash);
      if (!key || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) {
        this.logger.warn(`Refused dashboard session ${facts.id.slice(0, 12)}: its API key was revoked or expired`);
        return null;
      }
      return key;
    }
    const memberships = (await this.resolve(facts.memberships)).filter((m): m is ResolvedMembership & { id: string } => m.id !== null);
    if (memberships.length === 0) {
      throw GatewayError.permission(
        `You are signed in, but none of your groups gives a role in an existing workspace (mapped: ${facts.memberships.map((m) => `${m.workspace} ${m.role}`).join(', ') || 'none'}); ask an owner to create the workspace or map your group in OIDC_ROLE_MAPPING`,
        'no_workspace',
      );
    }
    return {
      kind: 'person',
      id: facts.userId!,
      name: facts.email ?? facts.name ?? facts.userId!,
      role: memberships[0].role,
      workspaceId: memberships[0].id,
      memberships: memberships.map((m) => ({ workspaceId: m.id, role: m.role })),
      expiresAt: facts.expiresAt,
      metadata: {},
      budget: null,
      rateLimits: [],
      defaultConfig: null,
      defaultVirtualKey: null,
      allowedMcpServers: [],
      allowedMcpTools: null,
    };
  }

  /** Each mapped workspace with its id now (null while no workspace has that slug). */
  async resolve(memberships: MappedMembership[]): Promise<ResolvedMembership[]> {
    return Promise.all(memberships.map(async (m) => ({ id: (await this.workspaces.bySlug(m.workspace))?.id ?? null, slug: m.workspace, role: m.role })));
  }

  /** The CSRF token of a session, for `/auth/session` (derived from the cookie's token, never stored). */
  csrfTokenOf(token: string): string {
    return this.signer.csrfToken(token);
  }

  /** Ends a session here and, through the database, on every instance. */
  async end(id: string): Promise<void> {
    await this.sessions.query('update sessions set revoked_at = now() where id = $1 and revoked_at is null', [id]);
    await this.keyChanges.changed('sessions');
  }

  private async load(id: string): Promise<SessionFacts | null> {
    const rows: {
      id: string;
      user_id: string | null;
      email: string | null;
      name: string | null;
      api_key_hash: string | null;
      memberships: MappedMembership[];
      csrf_token_hash: string;
      expires_at: Date;
    }[] = await this.sessions.query(
      `select s.id, s.user_id, u.email, u.name, s.api_key_hash, s.memberships, s.csrf_token_hash, s.expires_at
           from sessions s left join users u on u.id = s.user_id
          where s.id = $1 and s.revoked_at is null`,
      [id],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      userId: row.user_id,
      email: row.email,
      name: row.name,
      apiKeyHash: row.api_key_hash,
      memberships: row.memberships,
      csrfTokenHash: row.csrf_token_hash,
      expiresAt: new Date(row.expires_at),
    };
  }
}
