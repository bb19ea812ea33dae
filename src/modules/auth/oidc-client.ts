import type * as OpenIdClient from 'openid-client';
import { GatewayError } from '../../common/errors/gateway-error';

type Library = typeof OpenIdClient;

/**
 * `openid-client` is ESM-only. It is loaded with Node's own `require` (which loads ES modules
 * natively since Node 20.19), reached through `process.getBuiltinModule` so that it stays
 * Node's even inside jest, whose module registry cannot load ES modules (nor can its VM run a
 * native `import()`); and only when single sign-on is configured.
 */
function loadLibrary(): Library {
  const { createRequire } = process.getBuiltinModule('node:module');
  return createRequire(__filename)('openid-client') as Library;
}

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

/** What `/auth/login` keeps (sealed in a cookie) for `/auth/callback` to check. */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

/** The person the provider vouched for: the ID token's claims, completed from userinfo. */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

/** Discovery metadata is read again after this long (keys rotate through the JWKS, which openid-client follows itself). */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

/**
 * The relying party: discovery, the authorization request (code flow, PKCE S256, state and
 * nonce) and the checks of the answer (state, issuer, PKCE through the token endpoint, the ID
 * token's signature, audience, expiry and nonce), all by `openid-client`. The only place that
 * talks to the identity provider; its failures come out as GatewayErrors with stable codes.
 */
export class OidcClient {
  private readonly lib = loadLibrary();
  private discovered: { config: Promise<OpenIdClient.Configuration>; at: number } | null = null;

  constructor(private readonly settings: OidcSettings) {}

  get issuer(): string {
    return this.settings.issuer;
  }

  async authorizationRequest(redirectUri: string): Promise<{ url: string; pending: PendingSignIn }> {
    const config = await this.configuration();
    const pending: PendingSignIn = {
      state: this.lib.randomState(),
      nonce: this.lib.randomNonce(),
      codeVerifier: this.lib.randomPKCECodeVerifier(),
      redirectUri,
    };
    const url = this.lib.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes,
      code_challenge: await this.lib.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /** Checks the provider's answer (`search`: the callback's query string) and redeems its code. */
  async redeem(search: string, pending: PendingSignIn): Promise<VerifiedIdentity> {
    const config = await this.configuration();
    // The redirect URI sent with the code is the one the request named: rebuilt from the cookie, not from this request's Host.
    const callback = new URL(pending.redirectUri);
    callback.search = search;
    try {
      const tokens = await this.lib.authorizationCodeGrant(config, callback, {
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        pkceCodeVerifier: pending.codeVerifier,
        idTokenExpected: true,
      });
      const idToken = tokens.claims()!;
      let claims: Record<string, unknown> = { ...idToken };
      // Many providers (Okta, Keycloak, oidc-provider) put email and groups only in userinfo when an access token is issued.
      if (config.serverMetadata().userinfo_endpoint && tokens.access_token) {
        const userInfo = await this.lib.fetchUserInfo(config, tokens.access_token, idToken.sub);
        claims = { ...userInfo, ...idToken };
      }
      return { issuer: idToken.iss, subject: idToken.sub, claims };
    } catch (error) {
      throw this.explain(error);
    }
  }

  private configuration(): Promise<OpenIdClient.Configuration> {
    if (this.discovered && Date.now() - this.discovered.at < DISCOVERY_TTL_MS) return this.discovered.config;
    const config = this.discover();
    const entry = { config, at: Date.now() };
    this.discovered = entry;
    // A failed discovery is tried again by the next sign-in.
    config.catch(() => {
      if (this.discovered === entry) this.discovered = null;
    });
    return config;
  }

  private async discover(): Promise<OpenIdClient.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    // An http:// issuer (a provider on the local network, the tests) is the operator's explicit choice.
    const insecure = issuer.startsWith('http://') ? { execute: [this.lib.allowInsecureRequests] } : undefined;
    let config: OpenIdClient.Configuration;
    try {
      config = await this.lib.discovery(new URL(issuer), clientId, clientSecret, this.lib.ClientSecretBasic(clientSecret), insecure);
    } catch (error) {
      const reason = messageOf(error);
      throw new GatewayError(
        502,
        'upstream_error',
        `The identity provider at ${issuer} could not be discovered (${reason}); check OIDC_ISSUER_URL`,
        'identity_provider_unreachable',
      );
    }
    // client_secret_basic unless the provider says it takes only client_secret_post.
    const methods = config.serverMetadata().token_endpoint_auth_methods_supported;
    if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
      config = new this.lib.Configuration(config.serverMetadata(), clientId, clientSecret, this.lib.ClientSecretPost(clientSecret));
      if (insecure) this.lib.allowInsecureRequests(config);
    }
    return config;
  }

  /** The library's refusals as answers a person can act on; never a 500. */
  private explain(error: unknown): GatewayError {
    const lib = this.lib;
    if (error instanceof GatewayError) return error;
    if (error instanceof lib.AuthorizationResponseError) {
      return new GatewayError(
        401,
        'authentication_error',
        `The identity provider did not sign you in (${error.error}${error.error_description ? `: ${error.error_description}` : ''})`,
        'sign_in_refused',
      );
    }
    if (error instanceof lib.ResponseBodyError) {
      return GatewayError.invalidRequest(
        `The identity provider refused the sign-in code (${error.error}): it was already used, has expired or was not issued to this gateway. Sign in again.`,
        null,
        'invalid_grant',
      );
    }
    const message = messageOf(error);
    // The library runs in Node's own realm (see loadLibrary): its errors are told apart by name, not by class.
    if ((error as Error | undefined)?.name === 'TypeError' && /fetch failed/.test(message)) {
      return new GatewayError(502, 'upstream_error', `The identity provider could not be reached (${message})`, 'identity_provider_unreachable');
    }
    return new GatewayError(401, 'authentication_error', `The sign-in answer failed a check: ${message}`, 'sign_in_invalid');
  }
}

/**
 * An error's message with the reason it wraps (openid-client's "unexpected JWT claim value
 * encountered" wraps 'unexpected ID Token "nonce" claim value'): messages only, never the
 * values compared, which the causes also carry.
 */
function messageOf(error: unknown): string {
  const message = (e: unknown) =>
    typeof e === 'object' && e !== null && typeof (e as { message?: unknown }).message === 'string' ? (e as { message: string }).message : null;
  const outer = message(error) ?? String(error);
  const inner = message((error as { cause?: unknown } | null)?.cause);
  return inner && inner !== outer ? `${outer} (${inner})` : outer;
}
